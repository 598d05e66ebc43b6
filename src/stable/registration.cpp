// The vecadd kernels as the dispatcher knows them, through the LibTorch stable ABI: the shared
// kernels (src/binding) for CPU and CUDA. The schemas are defined by vecadd's Python
// face (vecadd/_library.py), as are the fake kernels and autograd, which the stable ABI
// cannot register.
#include <torch/csrc/stable/library.h>

#include "call_rules.h"
#include "stable_api.h"

namespace vecadd::stable_binding {
namespace {

using Tensor = torch::stable::Tensor;
using Kernels = binding::AddKernels<StableApi>;

Tensor add_kernel(Tensor x, Tensor y, double alpha) {
  return Kernels::add(x, y, alpha);
}

void add_out_kernel(Tensor x, Tensor y, double alpha, Tensor out) {
  Kernels::add_out(x, y, alpha, out);
}

}  // namespace
}  // namespace vecadd::stable_binding

STABLE_TORCH_LIBRARY_IMPL(vecadd, CPU, m) {
  m.impl("add", TORCH_BOX(&vecadd::stable_binding::add_kernel));
  m.impl("_add_without_autograd", TORCH_BOX(&vecadd::stable_binding::add_kernel));
  m.impl("add.out", TORCH_BOX(&vecadd::stable_binding::add_out_kernel));
  m.impl("_add_out_without_autograd", TORCH_BOX(&vecadd::stable_binding::add_out_kernel));
}

#if VECADD_WITH_CUDA
STABLE_TORCH_LIBRARY_IMPL(vecadd, CUDA, m) {
  m.impl("add", TORCH_BOX(&vecadd::stable_binding::add_kernel));
  m.impl("_add_without_autograd", TORCH_BOX(&vecadd::stable_binding::add_kernel));
  m.impl("add.out", TORCH_BOX(&vecadd::stable_binding::add_out_kernel));
  m.impl("_add_out_without_autograd", TORCH_BOX(&vecadd::stable_binding::add_out_kernel));
}
#endif
