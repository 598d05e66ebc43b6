// vecadd: z = x + alpha * y over plain device or host arrays, with no PyTorch in sight.
//
// This header (with vecadd/plan.h, which it includes) is the whole public C++ interface of
// the kernel library (CMake target vecadd::vecadd). It can be used from plain C++ (CPU
// entry points) and, when the library was built with CUDA (VECADD_WITH_CUDA == 1), from
// CUDA code as well. The Plan overloads take any shapes, strides and broadcasts:
//
//   const vecadd::Plan plan = vecadd::plan_add(x, x_shape, y, y_shape, z, z_shape);
//   vecadd::add_cpu(x, y, z, plan, alpha);           // host arrays, on every core
//   vecadd::add_cuda(x, y, z, plan, alpha, stream);  // or device arrays, on a stream
#pragma once

#include <cstdint>

#include "vecadd/config.h"
#include "vecadd/plan.h"

#if VECADD_WITH_CUDA
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#endif

namespace vecadd {

#if VECADD_WITH_CUDA
using float16 = __half;
using bfloat16 = __nv_bfloat16;
#else
// Storage-only 16-bit floats with the IEEE binary16 / bfloat16 bit layouts, so that a
// CPU-only build needs no CUDA headers; arithmetic converts to float and rounds once.
struct float16 {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};
#endif

// The type alpha is passed in: float for the 16-bit floats, which compute in float (so alpha
// keeps float's range and is not rounded to 16 bits first), the element type otherwise.
template <class T>
struct AlphaType {
  using type = T;
};
template <>
struct AlphaType<float16> {
  using type = float;
};
template <>
struct AlphaType<bfloat16> {
  using type = float;
};
template <class T>
using alpha_t = typename AlphaType<T>::type;

// z[i] = x[i] + alpha * y[i] for i in [0, n). z may be x or y itself (in-place), but must
// not partly overlap either. Half types compute in float and round once; integer types
// wrap around on overflow.
template <class T>
void add_cpu(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha);

// The same over a strided layout; z must not overlap x or y unless it is the same view.
// Both run on the calling thread.
template <class T>
void add_strided_cpu(const T* x, const T* y, T* z, const StridedLayout& layout, alpha_t<T> alpha);

// Runs a plan that plan_add made for these arrays, its ranges spread by `parallel`.
template <class T>
void add_cpu(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
             const ParallelFor& parallel = default_parallel_for());

#if VECADD_WITH_CUDA
// Device pointers; enqueued on `stream`. Returns the launch status (cudaSuccess, or
// e.g. cudaErrorNoKernelImageForDevice when this build holds no code for the GPU).
// Execution errors surface later, on the stream, as with any CUDA launch. On compute
// capability 9.0 and newer the launch may overlap the end of the previous kernel in the
// stream, but it reads and writes memory only after that kernel has completed.
template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha,
                     cudaStream_t stream);

template <class T>
cudaError_t add_strided_cuda(const T* x, const T* y, T* z, const StridedLayout& layout,
                             alpha_t<T> alpha, cudaStream_t stream);

// Runs a plan that plan_add made for these device arrays; a call with more than kMaxDims
// merged dimensions is several launches, and the first failed one's status is returned.
template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
                     cudaStream_t stream);
#endif

// The six element types every entry point is instantiated for.
#define VECADD_FOR_EACH_ELEMENT_TYPE(MACRO) \
  MACRO(::vecadd::float16)                  \
  MACRO(::vecadd::bfloat16)                 \
  MACRO(float)                              \
  MACRO(double)                             \
  MACRO(std::int32_t)                       \
  MACRO(std::int64_t)

#define VECADD_DECLARE_CPU(T)                                                           \
  extern template void add_cpu<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>);    \
  extern template void add_strided_cpu<T>(const T*, const T*, T*, const StridedLayout&, \
                                          alpha_t<T>);                                  \
  extern template void add_cpu<T>(const T*, const T*, T*, const Plan&, alpha_t<T>,      \
                                  const ParallelFor&);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_DECLARE_CPU)
#undef VECADD_DECLARE_CPU

#if VECADD_WITH_CUDA
#define VECADD_DECLARE_CUDA(T)                                                                  \
  extern template cudaError_t add_cuda<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>,     \
                                          cudaStream_t);                                        \
  extern template cudaError_t add_strided_cuda<T>(const T*, const T*, T*, const StridedLayout&, \
                                                  alpha_t<T>, cudaStream_t);                    \
  extern template cudaError_t add_cuda<T>(const T*, const T*, T*, const Plan&, alpha_t<T>,      \
                                          cudaStream_t);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_DECLARE_CUDA)
#undef VECADD_DECLARE_CUDA
#endif

}  // namespace vecadd
