// The vecadd kernels as the dispatcher knows them, through torch's full C++ API: the shared
// kernels (src/binding) for CPU and CUDA, and the C++ autograd node. The schemas are
// defined by vecadd's Python face (vecadd/_library.py), one contract for both builds.
#include <torch/library.h>

#include "autograd.h"
#include "call_rules.h"
#include "native_api.h"
#include "ops.h"

namespace vecadd::torch_binding {
namespace {

using Kernels = binding::AddKernels<NativeApi>;

at::Tensor add_kernel(const at::Tensor& x, const at::Tensor& y, double alpha) {
  return Kernels::add(x, y, alpha);
}

void add_out_kernel(const at::Tensor& x, const at::Tensor& y, double alpha, at::Tensor& out) {
  Kernels::add_out(x, y, alpha, out);
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

TORCH_LIBRARY_IMPL(vecadd, CPU, m) {
  m.impl("add", &add_kernel);
  m.impl("_add_without_autograd", &add_kernel);
  m.impl("add.out", &add_out_kernel);
  m.impl("_add_out_without_autograd", &add_out_kernel);
}

#if VECADD_WITH_CUDA
TORCH_LIBRARY_IMPL(vecadd, CUDA, m) {
  m.impl("add", &add_kernel);
  m.impl("_add_without_autograd", &add_kernel);
  m.impl("add.out", &add_out_kernel);
  m.impl("_add_out_without_autograd", &add_out_kernel);
}
#endif

TORCH_LIBRARY_IMPL(vecadd, Autograd, m) {
  m.impl("add", &add_autograd);
  m.impl("add.out", &add_out_autograd);
}

}  // namespace vecadd::torch_binding
