// How the shared call rules (src/binding/call_rules.h) read an at::Tensor and raise an error
// through torch's full C++ API.
#pragma once

#include <ATen/Parallel.h>
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <string>
#include <vector>

#include "call_rules.h"
#include "vecadd/plan.h"

#if VECADD_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace vecadd::torch_binding {

struct NativeApi {
  using Tensor = at::Tensor;
  // Makes the tensor's device current (a no-op for CPU and Meta).
  struct DeviceGuard {
    explicit DeviceGuard(const at::Tensor& t) : guard(t.device()) {}
    c10::DeviceGuard guard;
  };

  static bool defined(const at::Tensor& t) { return t.defined(); }
  static at::ScalarType dtype(const at::Tensor& t) { return t.scalar_type(); }
  static bool same_device(const at::Tensor& a, const at::Tensor& b) {
    return a.device() == b.device();
  }
  static std::string device_name(const at::Tensor& t) { return t.device().str(); }
  static int device_index(const at::Tensor& t) { return t.device().index(); }
  static bool is_cuda(const at::Tensor& t) { return t.is_cuda(); }
  static bool is_cpu(const at::Tensor& t) { return t.is_cpu(); }
  static vecadd::Operand operand(const at::Tensor& t) {
    return {static_cast<int>(t.dim()), t.sizes().data(), t.strides().data()};
  }
  static std::int64_t numel(const at::Tensor& t) { return t.numel(); }
  static std::size_t element_size(const at::Tensor& t) { return t.element_size(); }
  static const void* data(const at::Tensor& t) { return t.const_data_ptr(); }
  static void* mutable_data(const at::Tensor& t) { return t.mutable_data_ptr(); }

  // A new dense row-major tensor of `shape`'s sizes on `like`'s device, of `dtype`.
  static at::Tensor empty(const vecadd::Operand& shape, const at::Tensor& like,
                          at::ScalarType dtype);

  // A new tensor on `like`'s device, of `dtype`.
  static at::Tensor empty_strided(const std::vector<std::int64_t>& sizes,
                                  const std::vector<std::int64_t>& strides, const at::Tensor& like,
                                  at::ScalarType dtype);

  // The library's CPU ranges on torch's intra-op threads (at::parallel_for is inline: this
  // binding is compiled with torch's OpenMP, so it runs on torch's pool).
  static vecadd::ParallelFor parallel_for();

#if VECADD_WITH_CUDA
  static cudaStream_t cuda_stream(const at::Tensor& t) {
    return c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
  }
#endif

  [[noreturn]] static void fail(binding::ErrorKind kind, const std::string& message);
};

}  // namespace vecadd::torch_binding
