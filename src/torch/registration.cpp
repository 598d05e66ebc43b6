// The vecadd operators as the dispatcher knows them, through torch's full C++ API: for each
// operator python/vecadd/_operators.py describes, its kernels (the shared rules, src/binding)
// for CPU and CUDA and its C++ Autograd kernel. The schemas are defined by vecadd's Python
// face (vecadd/_library.py), one contract for both builds.
#include <torch/library.h>

#include "autograd.h"
#include "native_api.h"
#include "ops.h"
#include "sum_kernels.h"
#include "vecadd_operators.h"

namespace vecadd::torch_binding {
namespace {

using Kernels = binding::SumKernels<NativeApi>;

// ---- add: x + alpha * y ----

SumCall add_call(const at::Tensor& x, const at::Tensor& y, double alpha,
                 const at::Tensor* (&inputs)[2], double (&weights)[2]) {
  inputs[0] = &x;
  inputs[1] = &y;
  weights[1] = alpha;
  return {binding::kAddWords, inputs, 2, weights};
}

at::Tensor add(const at::Tensor& x, const at::Tensor& y, double alpha) {
  const at::Tensor* inputs[2];
  double weights[2] = {1, 1};
  return Kernels::sum(add_call(x, y, alpha, inputs, weights));
}

void add_out(const at::Tensor& x, const at::Tensor& y, double alpha, at::Tensor& out) {
  const at::Tensor* inputs[2];
  double weights[2] = {1, 1};
  Kernels::sum_out(add_call(x, y, alpha, inputs, weights), out);
}

at::Tensor add_autograd(const at::Tensor& x, const at::Tensor& y, double alpha) {
  const at::Tensor* inputs[2];
  double weights[2] = {1, 1};
  return sum_autograd(add_call(x, y, alpha, inputs, weights),
                      [&] { return add_operator().call(x, y, alpha); });
}

void add_out_autograd(const at::Tensor& x, const at::Tensor& y, double alpha, at::Tensor& out) {
  const at::Tensor* inputs[2];
  double weights[2] = {1, 1};
  sum_out_autograd(add_call(x, y, alpha, inputs, weights), out,
                   [&] { add_out_operator().call(x, y, alpha, out); });
}

// ---- add_n: weights[0] * tensors[0] + weights[1] * tensors[1] + ... ----

// The call over a list's tensors, with weights of 1 by default.
template <class Run>
auto with_add_n_call(at::TensorList tensors, std::optional<at::ArrayRef<double>> weights,
                     Run&& run) {
  const int count = static_cast<int>(tensors.size());
  const std::vector<double> scales =
      weights ? weights->vec() : std::vector<double>(tensors.size(), 1.0);
  binding::CallRules<NativeApi>::check_list(binding::kAddNWords, count,
                                            static_cast<int>(scales.size()));
  std::vector<const at::Tensor*> inputs;
  for (const at::Tensor& tensor : tensors) {
    inputs.push_back(&tensor);
  }
  return run(SumCall{binding::kAddNWords, inputs.data(), count, scales.data()});
}

at::Tensor add_n(at::TensorList tensors, std::optional<at::ArrayRef<double>> weights) {
  return with_add_n_call(tensors, weights, [](const SumCall& call) { return Kernels::sum(call); });
}

void add_n_out(at::TensorList tensors, std::optional<at::ArrayRef<double>> weights,
               at::Tensor& out) {
  with_add_n_call(tensors, weights, [&](const SumCall& call) {
    Kernels::sum_out(call, out);
    return 0;
  });
}

at::Tensor add_n_autograd(at::TensorList tensors, std::optional<at::ArrayRef<double>> weights) {
  return with_add_n_call(tensors, weights, [&](const SumCall& call) {
    return sum_autograd(call, [&] { return add_n_operator().call(tensors, weights); });
  });
}

void add_n_out_autograd(at::TensorList tensors, std::optional<at::ArrayRef<double>> weights,
                        at::Tensor& out) {
  with_add_n_call(tensors, weights, [&](const SumCall& call) {
    sum_out_autograd(call, out, [&] { add_n_out_operator().call(tensors, weights, out); });
    return 0;
  });
}

}  // namespace

const c10::TypedOperatorHandle<AddSignature>& add_operator() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("vecadd::add", "").typed<AddSignature>();
  return handle;
}

const c10::TypedOperatorHandle<AddOutSignature>& add_out_operator() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("vecadd::add", "out").typed<AddOutSignature>();
  return handle;
}

const c10::TypedOperatorHandle<AddNSignature>& add_n_operator() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("vecadd::add_n", "").typed<AddNSignature>();
  return handle;
}

const c10::TypedOperatorHandle<AddNOutSignature>& add_n_out_operator() {
  static const auto handle = c10::Dispatcher::singleton()
                                 .findSchemaOrThrow("vecadd::add_n", "out")
                                 .typed<AddNOutSignature>();
  return handle;
}

#define VECADD_NATIVE_KERNEL(name, kernel) m.impl(name, &kernel);
#define VECADD_NATIVE_AUTOGRAD(name, kernel) m.impl(name, &kernel##_autograd);

TORCH_LIBRARY_IMPL(vecadd, CPU, m){VECADD_OPERATOR_KERNELS(VECADD_NATIVE_KERNEL)}
#if VECADD_WITH_CUDA
TORCH_LIBRARY_IMPL(vecadd, CUDA, m){VECADD_OPERATOR_KERNELS(VECADD_NATIVE_KERNEL)}
#endif

TORCH_LIBRARY_IMPL(vecadd, Autograd, m) {
  VECADD_OPERATOR_AUTOGRAD(VECADD_NATIVE_AUTOGRAD)
}

}  // namespace vecadd::torch_binding
