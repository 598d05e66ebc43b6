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

// The tensors of a Tensor[] argument, each owning its handle; the list itself is freed here.
// Read raw, as add's are: torch::stable::Tensor would allocate a shared_ptr per tensor.
PerOperand<StableTensor> list_tensors(StableIValue value, int& count) {
  const auto list = torch::stable::detail::to<StableListHandle>(value);
  std::size_t size = 0;
  check_shim(torch_list_size(list, &size), "read a tensor list's length");
  count = static_cast<int>(size);
  PerOperand<StableTensor> tensors(count);
  for (int i = 0; i < count; ++i) {
    StableIValue element = 0;
    check_shim(torch_list_get_item(list, i, &element), "read a tensor list's item");
    const auto handle = torch::stable::detail::to<AtenTensorHandle>(element);
    tensors[i] = StableTensor(handle, HandleOwner(handle));
  }
  check_shim(torch_delete_list(list), "free a tensor list");
  return tensors;
}

// add_n's functional (result on the stack) or .out entry (out the last argument): the list's
// tensors and the weights (1 each by default) as one call.
template <bool kOut>
void add_n_entry(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  STD_TORCH_CHECK(num_args == (kOut ? 3 : 2) && num_outputs == (kOut ? 0 : 1),
                  "vecadd: add_n's kernel does not match its schema's ", num_args,
                  " arguments and ", num_outputs, " results");
  std::optional<StableTensor> out;
  if constexpr (kOut) {  // owned first: out's handle is released whatever fails below
    const auto handle = torch::stable::detail::to<AtenTensorHandle>(stack[2]);
    out.emplace(handle, HandleOwner(handle));
  }
  int count = 0;
  const PerOperand<StableTensor> tensors = list_tensors(stack[0], count);
  const auto given = torch::stable::detail::to<std::optional<std::vector<double>>>(stack[1]);
  binding::CallRules<StableApi>::check_list(binding::kAddNWords, count,
                                            given ? static_cast<int>(given->size()) : count);
  PerOperand<double> ones(count);
  PerOperand<const StableTensor*> inputs(count);
  for (int i = 0; i < count; ++i) {
    ones[i] = 1;
    inputs[i] = &tensors[i];
  }
  const Call call{binding::kAddNWords, inputs.data(), count, given ? given->data() : ones.data()};
  if constexpr (kOut) {
    Kernels::sum_out(call, *out);
  } else {
    stack[0] = torch::stable::detail::from(Kernels::sum(call).release());
  }
}

void add_n_boxed(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  add_n_entry<false>(stack, num_args, num_outputs);
}

void add_n_out_boxed(StableIValue* stack, std::uint64_t num_args, std::uint64_t num_outputs) {
  add_n_entry<true>(stack, num_args, num_outputs);
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
