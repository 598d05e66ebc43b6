// An extension of another package that builds on vecadd in the two ways downstream code can:
// the kernel library through CMake (vecadd::vecadd) and the torch operator through the
// dispatcher (vecadd::add).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <vecadd/vecadd.h>

namespace {

// a + b + c for contiguous CPU float32 tensors of one shape, by calling the kernel library.
at::Tensor sum_of_three_cpu(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  for (const at::Tensor* t : {&a, &b, &c}) {
    TORCH_CHECK(t->device().is_cpu() && t->scalar_type() == at::kFloat && t->is_contiguous() &&
                    t->sizes() == a.sizes(),
                "sum_of_three_cpu: expected contiguous CPU float32 tensors of one shape");
  }
  at::Tensor out = at::empty(a.sizes(), a.options());
  const std::int64_t n = a.numel();
  vecadd::add_cpu<float>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n, 1.0f);
  vecadd::add_cpu<float>(out.data_ptr<float>(), c.data_ptr<float>(), out.data_ptr<float>(), n,
                         1.0f);
  return out;
}

// residual(x, f) = x + 0.5 * f, composed from vecadd's operator through the dispatcher, so it
// gets vecadd's CPU/CUDA kernels, autograd and meta support for free.
at::Tensor residual(const at::Tensor& x, const at::Tensor& f) {
  static const auto vecadd_add =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("vecadd::add", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::Scalar&)>();
  return vecadd_add.call(x, f, 0.5);
}

}  // namespace

TORCH_LIBRARY(vecadd_downstream, m) {
  m.def("residual(Tensor x, Tensor f) -> Tensor", {at::Tag::pt2_compliant_tag});
  // CompositeImplicitAutograd: autograd and every backend come from vecadd::add itself.
  m.impl("residual", c10::DispatchKey::CompositeImplicitAutograd, &residual);
}

PYBIND11_MODULE(_C, m) {
  m.def("sum_of_three_cpu", &sum_of_three_cpu, "a + b + c through vecadd::add_cpu");
  m.attr("WITH_CUDA") = static_cast<bool>(VECADD_WITH_CUDA);
  m.attr("VECADD_VERSION") = VECADD_VERSION_STRING;
}
