// The contiguous z = x + alpha * y kernel as a template over its launch shape, so that the
// library and tools/kernel_variants.cu compile the very same code.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "element_math.h"
#include "pack.cuh"

namespace vecadd::detail {

// Launch shape: kThreads threads per block, each keeping kPacks packs of kWidth elements in
// flight (all loads issued before any store); kGridStride loops blocks over the array,
// otherwise the grid covers it exactly once; kHint picks the cache treatment of every access.
template <class T, int kWidth, int kThreads, int kPacks, class Index, bool kGridStride,
          CacheHint kHint = CacheHint::kDefault>
__global__ void __launch_bounds__(kThreads)
    add_contiguous_kernel(const T* x, const T* y, T* z, Index n,
                          typename ElementMath<T>::compute_type alpha) {
  using PackT = Pack<T, kWidth>;
  const auto* x_packs = reinterpret_cast<const PackT*>(x);
  const auto* y_packs = reinterpret_cast<const PackT*>(y);
  auto* z_packs = reinterpret_cast<PackT*>(z);
  const Index pack_count = n / kWidth;
  constexpr Index kTile = Index{kThreads} * kPacks;
  const Index grid_stride = static_cast<Index>(gridDim.x) * kTile;

  for (Index tile = static_cast<Index>(blockIdx.x) * kTile; tile < pack_count;
       tile += grid_stride) {
    PackT x_in[kPacks];
    PackT y_in[kPacks];
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      const Index p = tile + u * kThreads + threadIdx.x;
      if (p < pack_count) {
        x_in[u] = load_pack<kHint>(x_packs + p);
        y_in[u] = load_pack<kHint>(y_packs + p);
      }
    }
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      const Index p = tile + u * kThreads + threadIdx.x;
      if (p < pack_count) {
        store_pack<kHint>(z_packs + p, add_packs(x_in[u], y_in[u], alpha));
      }
    }
    if constexpr (!kGridStride) {
      break;
    }
  }
  // Fewer than kWidth elements remain past the last whole pack.
  if (blockIdx.x == 0) {
    const Index i = pack_count * kWidth + threadIdx.x;
    if (i < n) {
      z[i] = add_scaled(x[i], y[i], alpha);
    }
  }
}

// Blocks of kThreads the current GPU holds at once; cached per device.
template <int kThreads>
int resident_blocks() {
  constexpr int kMaxCachedDevices = 64;
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
  const int blocks = std::max(1, multiprocessors * (threads_per_multiprocessor / kThreads));
  if (device < kMaxCachedDevices) {
    cache[device].store(blocks, std::memory_order_relaxed);
  }
  return blocks;
}

// Enqueues one launch of the kernel above; a grid-stride launch uses at most `waves` times
// the resident blocks, a one-shot launch exactly as many blocks as tiles.
template <class T, int kWidth, int kThreads, int kPacks, class Index, bool kGridStride,
          CacheHint kHint = CacheHint::kDefault>
void launch_contiguous(const T* x, const T* y, T* z, std::int64_t n,
                       typename ElementMath<T>::compute_type alpha, cudaStream_t stream,
                       int waves = 1) {
  constexpr std::int64_t kTile = std::int64_t{kThreads} * kPacks;
  const std::int64_t tiles = std::max<std::int64_t>(1, (n / kWidth + kTile - 1) / kTile);
  std::int64_t blocks = tiles;
  if constexpr (kGridStride) {
    blocks = std::min<std::int64_t>(tiles, std::int64_t{waves} * resident_blocks<kThreads>());
  }
  add_contiguous_kernel<T, kWidth, kThreads, kPacks, Index, kGridStride, kHint>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, z, static_cast<Index>(n),
                                                               alpha);
}

}  // namespace vecadd::detail
