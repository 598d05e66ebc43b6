// CUDA entry points of the kernel library: a vectorized grid-stride kernel for contiguous
// arrays and an index-decomposing kernel for strided / broadcast layouts.
#include <atomic>
#include <cstdint>
#include <limits>

#include "element_math.h"
#include "vecadd/vecadd.h"

namespace vecadd {
namespace {

constexpr int kThreadsPerBlock = 256;
// Packs each thread keeps in flight per tile: more independent loads hide DRAM latency.
constexpr int kPacksPerThread = 4;
constexpr int kVectorBytes = 16;
constexpr int kMaxCachedDevices = 64;

template <class T, int kWidth>
struct alignas(sizeof(T) * kWidth) Pack {
  T values[kWidth];
};

template <class T, int kWidth>
__global__ void __launch_bounds__(kThreadsPerBlock)
    add_contiguous_kernel(const T* x, const T* y, T* z, std::int64_t n,
                          typename detail::ElementMath<T>::compute_type alpha) {
  using PackT = Pack<T, kWidth>;
  const auto* x_packs = reinterpret_cast<const PackT*>(x);
  const auto* y_packs = reinterpret_cast<const PackT*>(y);
  auto* z_packs = reinterpret_cast<PackT*>(z);
  const std::int64_t pack_count = n / kWidth;
  constexpr std::int64_t kTile = std::int64_t{kThreadsPerBlock} * kPacksPerThread;
  const std::int64_t grid_stride = std::int64_t{gridDim.x} * kTile;

  for (std::int64_t tile = std::int64_t{blockIdx.x} * kTile; tile < pack_count;
       tile += grid_stride) {
    PackT x_in[kPacksPerThread];
    PackT y_in[kPacksPerThread];
#pragma unroll
    for (int u = 0; u < kPacksPerThread; ++u) {
      const std::int64_t p = tile + u * kThreadsPerBlock + threadIdx.x;
      if (p < pack_count) {
        x_in[u] = x_packs[p];
        y_in[u] = y_packs[p];
      }
    }
#pragma unroll
    for (int u = 0; u < kPacksPerThread; ++u) {
      const std::int64_t p = tile + u * kThreadsPerBlock + threadIdx.x;
      if (p < pack_count) {
        PackT out;
#pragma unroll
        for (int k = 0; k < kWidth; ++k) {
          out.values[k] = detail::add_scaled(x_in[u].values[k], y_in[u].values[k], alpha);
        }
        z_packs[p] = out;
      }
    }
  }
  // Fewer than kWidth elements remain past the last whole pack.
  if (blockIdx.x == 0) {
    const std::int64_t i = pack_count * kWidth + threadIdx.x;
    if (i < n) {
      z[i] = detail::add_scaled(x[i], y[i], alpha);
    }
  }
}

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

// Resident blocks the current GPU can hold, cached per device: the grid never needs more.
int max_resident_blocks() {
  static std::atomic<int> cache[kMaxCachedDevices] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    return 1;
  }
  if (device < kMaxCachedDevices) {
    const int cached = cache[device].load(std::memory_order_relaxed);
    if (cached > 0) {
      return cached;
    }
  }
  int multiprocessors = 0;
  int threads_per_multiprocessor = 0;
  cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
  cudaDeviceGetAttribute(&threads_per_multiprocessor, cudaDevAttrMaxThreadsPerMultiProcessor,
                         device);
  int blocks = multiprocessors * (threads_per_multiprocessor / kThreadsPerBlock);
  if (blocks <= 0) {
    blocks = 1;
  }
  if (device < kMaxCachedDevices) {
    cache[device].store(blocks, std::memory_order_relaxed);
  }
  return blocks;
}

unsigned grid_for(std::int64_t work_items, std::int64_t items_per_block) {
  const std::int64_t wanted = (work_items + items_per_block - 1) / items_per_block;
  const std::int64_t cap = max_resident_blocks();
  return static_cast<unsigned>(wanted < 1 ? 1 : (wanted < cap ? wanted : cap));
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
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, T alpha,
                     cudaStream_t stream) {
  if (n <= 0) {
    return cudaSuccess;
  }
  const auto scale = detail::ElementMath<T>::load(alpha);
  constexpr int kWidth = kVectorBytes / sizeof(T);
  if (is_vector_aligned(x) && is_vector_aligned(y) && is_vector_aligned(z)) {
    const unsigned grid = grid_for(n / kWidth, std::int64_t{kThreadsPerBlock} * kPacksPerThread);
    add_contiguous_kernel<T, kWidth><<<grid, kThreadsPerBlock, 0, stream>>>(x, y, z, n, scale);
  } else {
    // Unaligned views (x[1:]) cannot use 16-byte accesses; fall back to one element a slot.
    const unsigned grid = grid_for(n, std::int64_t{kThreadsPerBlock} * kPacksPerThread);
    add_contiguous_kernel<T, 1><<<grid, kThreadsPerBlock, 0, stream>>>(x, y, z, n, scale);
  }
  return cudaGetLastError();
}

template <class T>
cudaError_t add_strided_cuda(const T* x, const T* y, T* z, const StridedLayout& layout,
                             T alpha, cudaStream_t stream) {
  const std::int64_t count = element_count(layout);
  if (count <= 0) {
    return cudaSuccess;
  }
  const auto scale = detail::ElementMath<T>::load(alpha);
  const unsigned grid = grid_for(count, kThreadsPerBlock);
  // 32-bit index arithmetic is several times cheaper; use it whenever nothing can overflow.
  constexpr std::int64_t kSafe32 = std::numeric_limits<std::int32_t>::max() / 2;
  const bool fits_32 = count <= kSafe32 && max_offset(layout.x_strides, layout) <= kSafe32 &&
                       max_offset(layout.y_strides, layout) <= kSafe32 &&
                       max_offset(layout.z_strides, layout) <= kSafe32;
  if (fits_32) {
    add_strided_kernel<T, std::int32_t><<<grid, kThreadsPerBlock, 0, stream>>>(
        x, y, z, layout, static_cast<std::int32_t>(count), scale);
  } else {
    add_strided_kernel<T, std::int64_t><<<grid, kThreadsPerBlock, 0, stream>>>(
        x, y, z, layout, count, scale);
  }
  return cudaGetLastError();
}

#define VECADD_INSTANTIATE_CUDA(T)                                                       \
  template cudaError_t add_cuda<T>(const T*, const T*, T*, std::int64_t, T, cudaStream_t); \
  template cudaError_t add_strided_cuda<T>(const T*, const T*, T*, const StridedLayout&, T, \
                                           cudaStream_t);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CUDA)
#undef VECADD_INSTANTIATE_CUDA

}  // namespace vecadd
