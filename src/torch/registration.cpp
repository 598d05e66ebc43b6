// The vecadd operators and their kernels, as the dispatcher knows them: each real kernel is
// check -> allocate -> compute, the Meta kernels stop before compute.
#include <torch/library.h>

#include "autograd.h"
#include "checks.h"
#include "compute.h"
#include "layout.h"
#include "ops.h"
#include "vecadd/vecadd.h"

namespace vecadd::torch_binding {
namespace {

at::Tensor add_kernel(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha) {
  check_inputs(x, y, alpha);
  at::Tensor out = allocate_result(x, y, broadcast_shape(x, y));
  compute_into(x, y, alpha, out);
  return out;
}

void add_out_kernel(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                    at::Tensor& out) {
  check_inputs(x, y, alpha);
  check_out_tensor(out, x);
  check_out_shape(out, broadcast_shape(x, y));
  check_out_aliasing(out, x, y);
  compute_into(x, y, alpha, out);
}

at::Tensor add_meta(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha) {
  check_inputs(x, y, alpha);
  return allocate_result(x, y, broadcast_shape(x, y));
}

void add_out_meta(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                  at::Tensor& out) {
  check_inputs(x, y, alpha);
  check_out_tensor(out, x);
  check_out_shape(out, broadcast_shape(x, y));
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

TORCH_LIBRARY(vecadd, m) {
  m.def("add(Tensor x, Tensor y, *, Scalar alpha=1) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("add.out(Tensor x, Tensor y, *, Scalar alpha=1, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
}

TORCH_LIBRARY_IMPL(vecadd, CPU, m) {
  m.impl("add", &add_kernel);
  m.impl("add.out", &add_out_kernel);
}

#if VECADD_WITH_CUDA
TORCH_LIBRARY_IMPL(vecadd, CUDA, m) {
  m.impl("add", &add_kernel);
  m.impl("add.out", &add_out_kernel);
}
#endif

TORCH_LIBRARY_IMPL(vecadd, Meta, m) {
  m.impl("add", &add_meta);
  m.impl("add.out", &add_out_meta);
}

TORCH_LIBRARY_IMPL(vecadd, Autograd, m) {
  m.impl("add", &add_autograd);
  m.impl("add.out", &add_out_autograd);
}

}  // namespace vecadd::torch_binding
