// CUDA entry points of the kernel library: a vectorized kernel for contiguous arrays and an
// index-decomposing grid-stride kernel for strided / broadcast layouts.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "contiguous_kernel.cuh"
#include "element_math.h"
#include "vecadd/vecadd.h"

namespace vecadd {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kVectorBytes = 16;
// Largest n for 32-bit index arithmetic, with headroom so that index + stride cannot wrap.
constexpr std::int64_t kMaxIndex32 = std::numeric_limits<std::int32_t>::max() / 2;

template <class T, class Index>
__global__ void __launch_bounds__(kThreadsPerBlock)
    add_strided_kernel(const T* x, const T* y, T* z, StridedLayout layout, Index count,
                       typename detail::ElementMath<T>::compute_type alpha) {
  const Index stride = static_cast<Index>(gridDim.x) * kThreadsPerBlock;
  for (Index i = static_cast<Index>(blockIdx.x) * kThreadsPerBlock + threadIdx.x; i < count;
       i += stride) {
    const auto offsets = detail::offsets_of<Index>(i, layout);
    z[offsets.z] = detail::add_scaled(x[offsets.x], y[offsets.y], alpha);
  }
}

unsigned strided_grid(std::int64_t count) {
  const std::int64_t wanted = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::int64_t cap = detail::resident_blocks<kThreadsPerBlock>();
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(wanted, cap)));
}

bool is_vector_aligned(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % kVectorBytes == 0;
}

// Largest element offset a strided operand reaches (strides are non-negative in torch).
std::int64_t max_offset(const std::int64_t* strides, const StridedLayout& layout) {
  std::int64_t reach = 0;
  for (int d = 0; d < layout.ndim; ++d) {
    reach += (layout.sizes[d] - 1) * (strides[d] < 0 ? -strides[d] : strides[d]);
  }
  return reach;
}

}  // namespace

template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, T alpha, cudaStream_t stream) {
  if (n <= 0) {
    return cudaSuccess;
  }
  const auto scale = detail::ElementMath<T>::load(alpha);
  // One 16-byte pack per thread over a grid that covers the array once measured fastest
  // on an H200 at every size (docs/benchmarks.md); 32-bit indices wherever n allows.
  // Unaligned views (x[1:]) cannot use 16-byte accesses: four single elements per thread.
  constexpr int kWidth = kVectorBytes / sizeof(T);
  const bool aligned = is_vector_aligned(x) && is_vector_aligned(y) && is_vector_aligned(z);
  const bool fits_32 = n <= kMaxIndex32;
  if (aligned && fits_32) {
    detail::launch_contiguous<T, kWidth, 128, 1, std::int32_t, false>(x, y, z, n, scale, stream);
  } else if (aligned) {
    detail::launch_contiguous<T, kWidth, 128, 1, std::int64_t, false>(x, y, z, n, scale, stream);
  } else if (fits_32) {
    detail::launch_contiguous<T, 1, 128, 4, std::int32_t, false>(x, y, z, n, scale, stream);
  } else {
    detail::launch_contiguous<T, 1, 128, 4, std::int64_t, false>(x, y, z, n, scale, stream);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t add_strided_cuda(const T* x, const T* y, T* z, const StridedLayout& layout, T alpha,
                             cudaStream_t stream) {
  const std::int64_t count = element_count(layout);
  if (count <= 0) {
    return cudaSuccess;
  }
  const auto scale = detail::ElementMath<T>::load(alpha);
  const unsigned grid = strided_grid(count);
  // 32-bit index arithmetic is several times cheaper; use it whenever nothing can overflow.
  const bool fits_32 = count <= kMaxIndex32 &&
                       max_offset(layout.x_strides, layout) <= kMaxIndex32 &&
                       max_offset(layout.y_strides, layout) <= kMaxIndex32 &&
                       max_offset(layout.z_strides, layout) <= kMaxIndex32;
  if (fits_32) {
    add_strided_kernel<T, std::int32_t><<<grid, kThreadsPerBlock, 0, stream>>>(
        x, y, z, layout, static_cast<std::int32_t>(count), scale);
  } else {
    add_strided_kernel<T, std::int64_t>
        <<<grid, kThreadsPerBlock, 0, stream>>>(x, y, z, layout, count, scale);
  }
  return cudaGetLastError();
}

#define VECADD_INSTANTIATE_CUDA(T)                                                          \
  template cudaError_t add_cuda<T>(const T*, const T*, T*, std::int64_t, T, cudaStream_t);  \
  template cudaError_t add_strided_cuda<T>(const T*, const T*, T*, const StridedLayout&, T, \
                                           cudaStream_t);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CUDA)
#undef VECADD_INSTANTIATE_CUDA

}  // namespace vecadd
