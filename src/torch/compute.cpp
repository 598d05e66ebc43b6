#include "compute.h"

#include <ATen/Parallel.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <cstdlib>
#include <string>

#include "element_types.h"
#include "messages.h"
#include "vecadd/vecadd.h"

#if VECADD_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace vecadd::torch_binding {
namespace {

// alpha in the type the library takes it in (float for the 16-bit floats); check_inputs has
// made sure it fits.
template <class T>
vecadd::alpha_t<T> alpha_as(const c10::Scalar& alpha) {
  return alpha.to<vecadd::alpha_t<T>>();
}

// The library's CPU ranges on torch's intra-op threads (at::parallel_for is inline: this file
// is compiled with torch's OpenMP, so it runs on torch's pool).
vecadd::ParallelFor torch_parallel_for() {
  return {at::get_num_threads(),
          [](std::int64_t count, std::int64_t grain, const vecadd::RangeBody& body) {
            at::parallel_for(0, count, grain,
                             [&](std::int64_t begin, std::int64_t end) { body(begin, end); });
          }};
}

vecadd::Operand operand_of(const at::Tensor& t) {
  return {static_cast<int>(t.dim()), t.sizes().data(), t.strides().data()};
}

#if VECADD_WITH_CUDA
[[noreturn]] void fail_no_kernel_image(cudaError_t status, const at::Device& device) {
  cudaDeviceProp properties{};
  const bool known = cudaGetDeviceProperties(&properties, device.index()) == cudaSuccess;
  const std::string gpu = known ? properties.name : "unknown GPU";
  const std::string capability =
      known ? std::to_string(properties.major) + "." + std::to_string(properties.minor) : "?";
  const std::string arch =
      known ? std::to_string(properties.major * 10 + properties.minor) : "<arch>";
  TORCH_CHECK(false, kOp, ": this build of vecadd holds no CUDA code that can run on ",
              device.str(), " (", gpu, ", compute capability ", capability,
              "): it was compiled for CUDA "
              "architectures '",
              VECADD_CUDA_ARCHITECTURES,
              "' (vecadd.build_info()['cuda_archs'] "
              "lists them) and the driver reports: ",
              cudaGetErrorString(status),
              ". Rebuild vecadd for this GPU from its source, e.g.\n  pip install "
              "--no-build-isolation --force-reinstall -C cmake.define.CMAKE_CUDA_ARCHITECTURES=",
              arch, " .");
  std::abort();  // not reached: TORCH_CHECK(false, ...) throws
}

void check_launch(cudaError_t status, const at::Device& device) {
  if (status == cudaSuccess) {
    return;
  }
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction ||
      status == cudaErrorUnsupportedPtxVersion) {
    fail_no_kernel_image(status, device);
  }
  TORCH_CHECK(false, kOp, ": launching the CUDA kernel on ", device.str(),
              " failed: ", cudaGetErrorString(status));
}
#endif

}  // namespace

void compute_into(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                  const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  const at::Device device = out.device();
  const c10::DeviceGuard device_guard(device);
  dispatch_element_type(out.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* x_data = static_cast<const T*>(x.data_ptr());
    const auto* y_data = static_cast<const T*>(y.data_ptr());
    auto* z_data = static_cast<T*>(out.data_ptr());
    const vecadd::Plan plan =
        vecadd::plan_add(x_data, operand_of(x), y_data, operand_of(y), z_data, operand_of(out));
    const vecadd::alpha_t<T> scale = alpha_as<T>(alpha);
#if VECADD_WITH_CUDA
    if (device.is_cuda()) {
      const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
      check_launch(vecadd::add_cuda<T>(x_data, y_data, z_data, plan, scale, stream), device);
      return;
    }
#endif
    vecadd::add_cpu<T>(x_data, y_data, z_data, plan, scale, torch_parallel_for());
  });
}

}  // namespace vecadd::torch_binding
