// An extension of another package that builds on vecadd in the two ways downstream code can:
// the kernel library through CMake (vecadd::vecadd: its planner and CPU kernels; vecadd::cuda:
// its CUDA kernels for torch's CUDA major) and the torch operator through the dispatcher
// (vecadd::add).
#include <ATen/ExpandUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <vecadd/vecadd.h>

#if VECADD_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <vecadd/cuda.h>
#endif

namespace {

// a + b + c for contiguous float32 tensors of one shape on one device, by calling the
// kernel library directly: vecadd::add_cpu on the CPU, vecadd::add_cuda on a GPU.
at::Tensor sum_of_three(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  for (const at::Tensor* t : {&a, &b, &c}) {
    TORCH_CHECK(t->device() == a.device() && t->scalar_type() == at::kFloat && t->is_contiguous() &&
                    t->sizes() == a.sizes(),
                "sum_of_three: expected contiguous float32 tensors of one shape on one device");
  }
  at::Tensor out = at::empty(a.sizes(), a.options());
  const std::int64_t n = a.numel();
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  const float* pc = c.data_ptr<float>();
  float* po = out.data_ptr<float>();
  if (a.is_cuda()) {
#if VECADD_WITH_CUDA
    const c10::cuda::CUDAGuard guard(a.device());
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
    auto check = [](cudaError_t status) {
      TORCH_CHECK(status == cudaSuccess, "vecadd::add_cuda failed: ", cudaGetErrorString(status));
    };
    check(vecadd::add_cuda<float>(pa, pb, po, n, 1.0f, stream));
    check(vecadd::add_cuda<float>(po, pc, po, n, 1.0f, stream));
#else
    TORCH_CHECK(false, "sum_of_three: the installed vecadd was built without CUDA");
#endif
  } else {
    vecadd::add_cpu<float>(pa, pb, po, n, 1.0f);
    vecadd::add_cpu<float>(po, pc, po, n, 1.0f);
  }
  return out;
}

vecadd::Operand operand_of(const at::Tensor& t) {
  return {static_cast<int>(t.dim()), t.sizes().data(), t.strides().data()};
}

// a + alpha * b for float32 tensors of any strides that broadcast together, again through
// the kernel library alone: vecadd::plan_add lines up the shapes and picks the kernel, and
// add_cpu spreads the work over the machine's cores by default.
at::Tensor broadcast_add(const at::Tensor& a, const at::Tensor& b, double alpha) {
  TORCH_CHECK(
      a.device() == b.device() && a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat,
      "broadcast_add: expected float32 tensors on one device");
  at::Tensor out = at::empty(at::infer_size(a.sizes(), b.sizes()), a.options());
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* po = out.data_ptr<float>();
  const vecadd::Plan plan =
      vecadd::plan_add(pa, operand_of(a), pb, operand_of(b), po, operand_of(out));
  const auto scale = static_cast<float>(alpha);
  if (a.is_cuda()) {
#if VECADD_WITH_CUDA
    const c10::cuda::CUDAGuard guard(a.device());
    const cudaError_t status = vecadd::add_cuda<float>(pa, pb, po, plan, scale,
                                                       c10::cuda::getCurrentCUDAStream().stream());
    TORCH_CHECK(status == cudaSuccess, "vecadd::add_cuda failed: ", cudaGetErrorString(status));
#else
    TORCH_CHECK(false, "broadcast_add: the installed vecadd was built without CUDA");
#endif
  } else {
    vecadd::add_cpu<float>(pa, pb, po, plan, scale);
  }
  return out;
}

// vecadd::add's schema, argument by argument: x, y, alpha, its imaginary part, the dtype (None:
// torch's promotion).
using AddSignature = at::Tensor(const at::Tensor&, const at::Tensor&, double, double,
                                std::optional<at::ScalarType>);

// residual(x, f) = x + 0.5 * f, composed from vecadd's operator through the dispatcher, so it
// gets vecadd's CPU/CUDA kernels, autograd and meta support for free.
at::Tensor residual(const at::Tensor& x, const at::Tensor& f) {
  static const auto vecadd_add =
      c10::Dispatcher::singleton().findSchemaOrThrow("vecadd::add", "").typed<AddSignature>();
  return vecadd_add.call(x, f, 0.5, 0.0, std::nullopt);
}

}  // namespace

TORCH_LIBRARY(vecadd_downstream, m) {
  m.def("residual(Tensor x, Tensor f) -> Tensor", {at::Tag::pt2_compliant_tag});
  // CompositeImplicitAutograd: autograd and every backend come from vecadd::add itself.
  m.impl("residual", c10::DispatchKey::CompositeImplicitAutograd, &residual);
}

PYBIND11_MODULE(_C, m) {
  m.def("sum_of_three", &sum_of_three, "a + b + c through vecadd::add_cpu / vecadd::add_cuda");
  m.def("broadcast_add", &broadcast_add, pybind11::arg("a"), pybind11::arg("b"),
        pybind11::arg("alpha") = 1.0,
        "a + alpha * b, broadcast, any strides, via vecadd::plan_add");
  m.attr("WITH_CUDA") = static_cast<bool>(VECADD_WITH_CUDA);
  m.attr("VECADD_VERSION") = VECADD_VERSION_STRING;
}
