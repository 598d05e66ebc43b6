// The vecadd operators as the dispatcher knows them, through the LibTorch stable ABI: for each
// operator python/vecadd/_operators.py describes, its kernels (the shared rules, src/binding),
// for CPU or for CUDA. The schemas are defined by vecadd's Python face (vecadd/_library.py), as
// are the fake kernels and autograd, which the stable ABI cannot register.
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <optional>
#include <vector>

#include "stable_api.h"
#include "sum_kernels.h"
#include "vecadd_operators.h"

namespace vecadd::stable_binding {
namespace {

using Kernels = binding::SumKernels<StableApi>;
using Call = binding::SumCall<StableTensor>;

// ---- add: x + alpha * y ----

// Raw handles rather than torch::stable::Tensor, which wraps each in a shared_ptr and copies
// a returned handle; by hand, because TORCH_BOX cannot return a raw handle (docs/portable.md).
void add_boxed(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  STD_TORCH_CHECK(num_args == 3 && num_outputs == 1,
                  "vecadd: add's kernel takes 3 arguments and returns 1 value, but its schema has ",
                  num_args, " and ", num_outputs);
  const auto x = torch::stable::detail::to<AtenTensorHandle>(stack[0]);
  const auto y = torch::stable::detail::to<AtenTensorHandle>(stack[1]);
  const HandleOwner x_owner(x);
  const HandleOwner y_owner(y);
  const double weights[] = {1, torch::stable::detail::to<double>(stack[2])};
  const StableTensor x_tensor(x);
  const StableTensor y_tensor(y);
  const StableTensor* inputs[] = {&x_tensor, &y_tensor};
  stack[0] =
      torch::stable::detail::from(Kernels::sum({binding::kAddWords, inputs, 2, weights}).release());
}

void add_out(AtenTensorHandle x, AtenTensorHandle y, double alpha, AtenTensorHandle out) {
  const HandleOwner x_owner(x);
  const HandleOwner y_owner(y);
  const HandleOwner out_owner(out);
  const double weights[] = {1, alpha};
  const StableTensor x_tensor(x);
  const StableTensor y_tensor(y);
  const StableTensor* inputs[] = {&x_tensor, &y_tensor};
  Kernels::sum_out({binding::kAddWords, inputs, 2, weights}, StableTensor(out));
}

void add_out_boxed(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  TORCH_BOX (&add_out)(stack, num_args, num_outputs);
}

// ---- add_n: weights[0] * tensors[0] + weights[1] * tensors[1] + ... ----

// The call over a list's tensors (borrowed from `tensors`), with weights of 1 by default.
template <class Run>
auto with_add_n_call(const std::vector<torch::stable::Tensor>& tensors,
                     const std::optional<std::vector<double>>& weights, Run&& run) {
  const int count = static_cast<int>(tensors.size());
  std::vector<double> scales = weights.value_or(std::vector<double>(tensors.size(), 1.0));
  binding::CallRules<StableApi>::check_list(binding::kAddNWords, count,
                                            static_cast<int>(scales.size()));
  std::vector<StableTensor> inputs;
  std::vector<const StableTensor*> pointers;
  inputs.reserve(tensors.size());
  for (const torch::stable::Tensor& tensor : tensors) {
    inputs.emplace_back(tensor.get());
    pointers.push_back(&inputs.back());
  }
  return run(Call{binding::kAddNWords, pointers.data(), count, scales.data()});
}

torch::stable::Tensor add_n(std::vector<torch::stable::Tensor> tensors,
                            std::optional<std::vector<double>> weights) {
  return with_add_n_call(tensors, weights, [](const Call& call) {
    return torch::stable::Tensor(Kernels::sum(call).release());
  });
}

void add_n_out(std::vector<torch::stable::Tensor> tensors,
               std::optional<std::vector<double>> weights, torch::stable::Tensor out) {
  with_add_n_call(tensors, weights, [&](const Call& call) {
    Kernels::sum_out(call, StableTensor(out.get()));
    return 0;
  });
}

void add_n_boxed(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  TORCH_BOX (&add_n)(stack, num_args, num_outputs);
}

void add_n_out_boxed(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  TORCH_BOX (&add_n_out)(stack, num_args, num_outputs);
}

}  // namespace
}  // namespace vecadd::stable_binding

// The CPU library registers the CPU kernels, each CUDA library (one per CUDA major) the CUDA
// ones: a CPU-only torch never loads a CUDA library.
#define VECADD_STABLE_KERNEL(name, kernel) m.impl(name, &vecadd::stable_binding::kernel##_boxed);
#if VECADD_WITH_CUDA
STABLE_TORCH_LIBRARY_IMPL(vecadd, CUDA, m){VECADD_OPERATOR_KERNELS(VECADD_STABLE_KERNEL)}
#else
STABLE_TORCH_LIBRARY_IMPL(vecadd, CPU, m) {
  VECADD_OPERATOR_KERNELS(VECADD_STABLE_KERNEL)
}
#endif
