// CUDA entry points of the kernel library: a vectorized kernel for contiguous arrays, a
// vectorized row kernel for layouts whose innermost dimension is contiguous everywhere
// (the usual broadcast), and an index-decomposing grid-stride kernel for everything else.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

#include "contiguous_kernel.cuh"
#include "element_math.h"
#include "pack.cuh"
#include "vecadd/vecadd.h"

namespace vecadd {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kRowThreads = 128;
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

// One 16-byte pack per thread along contiguous rows; the outer coordinates of the row are
// decomposed once per pack instead of once per element.
template <class T, int kWidth, class Index>
__global__ void __launch_bounds__(kRowThreads)
    add_rows_kernel(const T* x, const T* y, T* z, StridedLayout outer, Index packs_per_row,
                    Index pack_count, typename detail::ElementMath<T>::compute_type alpha) {
  using PackT = detail::Pack<T, kWidth>;
  const Index p = static_cast<Index>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (p >= pack_count) {
    return;
  }
  const Index row = p / packs_per_row;
  const Index column = (p - row * packs_per_row) * kWidth;
  const auto offsets = detail::offsets_of<Index>(row, outer);
  const PackT x_pack = *reinterpret_cast<const PackT*>(x + offsets.x + column);
  const PackT y_pack = *reinterpret_cast<const PackT*>(y + offsets.y + column);
  *reinterpret_cast<PackT*>(z + offsets.z + column) = detail::add_packs(x_pack, y_pack, alpha);
}

// A property of the current device, computed once per device (0 if there is none).
template <int (*kCompute)(int device)>
int per_device_constant() {
  constexpr int kMaxCachedDevices = 64;
  static std::atomic<int> cache[kMaxCachedDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    return 0;
  }
  if (device >= kMaxCachedDevices) {
    return kCompute(device);
  }
  int value = cache[device].load(std::memory_order_relaxed);
  if (value == 0) {
    value = kCompute(device);
    cache[device].store(value, std::memory_order_relaxed);
  }
  return value;
}

int device_attribute(int device, cudaDeviceAttr attribute) {
  int value = 0;
  return cudaDeviceGetAttribute(&value, attribute, device) == cudaSuccess ? value : 0;
}

// Blocks of kThreadsPerBlock the device holds at once.
int compute_resident_blocks(int device) {
  return device_attribute(device, cudaDevAttrMultiProcessorCount) *
         (device_attribute(device, cudaDevAttrMaxThreadsPerMultiProcessor) / kThreadsPerBlock);
}

unsigned strided_grid(std::int64_t count) {
  const std::int64_t wanted = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::int64_t cap = std::max(1, per_device_constant<compute_resident_blocks>());
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

// Whether the row kernel can take a layout: the innermost dimension is contiguous in all
// three operands, and every row of every operand starts on a 16-byte boundary.
bool rows_are_vectorizable(const void* x, const void* y, const void* z, const StridedLayout& layout,
                           int width) {
  if (layout.ndim < 1 || !is_vector_aligned(x) || !is_vector_aligned(y) || !is_vector_aligned(z)) {
    return false;
  }
  const int inner = layout.ndim - 1;
  if (layout.x_strides[inner] != 1 || layout.y_strides[inner] != 1 ||
      layout.z_strides[inner] != 1 || layout.sizes[inner] % width != 0) {
    return false;
  }
  for (int d = 0; d < inner; ++d) {
    if (layout.x_strides[d] % width != 0 || layout.y_strides[d] % width != 0 ||
        layout.z_strides[d] % width != 0) {
      return false;
    }
  }
  return true;
}

// The layout less its innermost dimension.
StridedLayout outer_dimensions(const StridedLayout& layout) {
  StridedLayout outer = layout;
  outer.ndim = layout.ndim - 1;
  return outer;
}

template <class T, class Index>
void launch_rows(const T* x, const T* y, T* z, const StridedLayout& layout, std::int64_t count,
                 typename detail::ElementMath<T>::compute_type alpha, cudaStream_t stream) {
  constexpr int kWidth = kVectorBytes / sizeof(T);
  const std::int64_t pack_count = count / kWidth;
  const std::int64_t packs_per_row = layout.sizes[layout.ndim - 1] / kWidth;
  const std::int64_t blocks = (pack_count + kRowThreads - 1) / kRowThreads;
  add_rows_kernel<T, kWidth, Index><<<static_cast<unsigned>(blocks), kRowThreads, 0, stream>>>(
      x, y, z, outer_dimensions(layout), static_cast<Index>(packs_per_row),
      static_cast<Index>(pack_count), alpha);
}

// Arrays of at least this many bytes (x, y and z together) take 1024-thread blocks and
// streaming stores. On an H200 the large blocks win from 24 MiB on for every dtype and lose
// below 6 MiB, where too few blocks remain to fill the GPU; the streaming stores (evicted
// first) leave the L2 to x and y, which repeated calls on the same inputs read again
// (docs/kernel-notes.md).
constexpr std::int64_t kLargeArrayBytes = std::int64_t{16} << 20;

// The launch shape for n contiguous elements with 16-byte aligned operands.
template <class T, class Index>
void launch_aligned(const T* x, const T* y, T* z, std::int64_t n,
                    typename detail::ElementMath<T>::compute_type alpha, cudaStream_t stream) {
  constexpr int kWidth = kVectorBytes / sizeof(T);
  if (3 * n * static_cast<std::int64_t>(sizeof(T)) < kLargeArrayBytes) {
    detail::launch_contiguous<T, kWidth, 128, 1, Index>(x, y, z, n, alpha, stream);
  } else {
    detail::launch_contiguous<T, kWidth, 1024, 1, Index, detail::StoreCaching::kStreaming>(
        x, y, z, n, alpha, stream);
  }
}

}  // namespace

template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, T alpha, cudaStream_t stream) {
  if (n <= 0) {
    return cudaSuccess;
  }
  const auto scale = detail::ElementMath<T>::load(alpha);
  // 16-byte packs where all three operands allow them, 32-bit indices wherever n allows.
  // Unaligned views (x[1:]) cannot use 16-byte accesses: four single elements per thread.
  const bool aligned = is_vector_aligned(x) && is_vector_aligned(y) && is_vector_aligned(z);
  const bool fits_32 = n <= kMaxIndex32;
  if (aligned && fits_32) {
    launch_aligned<T, std::int32_t>(x, y, z, n, scale, stream);
  } else if (aligned) {
    launch_aligned<T, std::int64_t>(x, y, z, n, scale, stream);
  } else if (fits_32) {
    detail::launch_contiguous<T, 1, 128, 4, std::int32_t>(x, y, z, n, scale, stream);
  } else {
    detail::launch_contiguous<T, 1, 128, 4, std::int64_t>(x, y, z, n, scale, stream);
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
  // 32-bit index arithmetic is several times cheaper; use it whenever nothing can overflow.
  const bool fits_32 = count <= kMaxIndex32 &&
                       max_offset(layout.x_strides, layout) <= kMaxIndex32 &&
                       max_offset(layout.y_strides, layout) <= kMaxIndex32 &&
                       max_offset(layout.z_strides, layout) <= kMaxIndex32;
  if (rows_are_vectorizable(x, y, z, layout, kVectorBytes / sizeof(T))) {
    if (fits_32) {
      launch_rows<T, std::int32_t>(x, y, z, layout, count, scale, stream);
    } else {
      launch_rows<T, std::int64_t>(x, y, z, layout, count, scale, stream);
    }
    return cudaGetLastError();
  }
  const unsigned grid = strided_grid(count);
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
