// The vecadd kernels as the dispatcher knows them, through the LibTorch stable ABI: the shared
// kernels (src/binding) for CPU or for CUDA. The schemas are defined by vecadd's Python
// face (vecadd/_library.py), as are the fake kernels and autograd, which the stable ABI
// cannot register.
#include <torch/csrc/stable/library.h>

#include "call_rules.h"
#include "stable_api.h"

namespace vecadd::stable_binding {
namespace {

using Kernels = binding::AddKernels<StableApi>;

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
  const auto alpha = torch::stable::detail::to<double>(stack[2]);
  stack[0] =
      torch::stable::detail::from(Kernels::add(StableTensor(x), StableTensor(y), alpha).release());
}

void add_out_kernel(AtenTensorHandle x, AtenTensorHandle y, double alpha, AtenTensorHandle out) {
  const HandleOwner x_owner(x);
  const HandleOwner y_owner(y);
  const HandleOwner out_owner(out);
  Kernels::add_out(StableTensor(x), StableTensor(y), alpha, StableTensor(out));
}

void register_kernels(torch::stable::detail::StableLibrary& m) {
  m.impl("add", &add_boxed);
  m.impl("_add_without_autograd", &add_boxed);
  m.impl("add.out", TORCH_BOX(&add_out_kernel));
  m.impl("_add_out_without_autograd", TORCH_BOX(&add_out_kernel));
}

}  // namespace
}  // namespace vecadd::stable_binding

// The CPU library registers the CPU kernels, each CUDA library (one per CUDA major) the CUDA
// ones: a CPU-only torch never loads a CUDA library.
#if VECADD_WITH_CUDA
STABLE_TORCH_LIBRARY_IMPL(vecadd, CUDA, m) {
  vecadd::stable_binding::register_kernels(m);
}
#else
STABLE_TORCH_LIBRARY_IMPL(vecadd, CPU, m) {
  vecadd::stable_binding::register_kernels(m);
}
#endif
