// The contiguous z = x + alpha * y kernel as a template over its launch shape: the library
// picks the shape per call (vector packs or single elements, 128 or 1024 threads).
#pragma once

#include <algorithm>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "element_math.h"
#include "launch.cuh"
#include "pack.cuh"

namespace vecadd::detail {

// Each block owns one tile of kThreads * kPacks * kWidth elements. A whole tile takes the
// branch-free vector path: every thread moves kPacks packs of kWidth elements, all loads
// issued before any store. Only the last block can hold a partial tile; it goes element by
// element. kCaching picks the cache treatment of the vector stores.
template <class T, int kWidth, int kThreads, int kPacks, class Index, StoreCaching kCaching>
__global__ void __launch_bounds__(kThreads)
    add_contiguous_kernel(const T* x, const T* y, T* z, Index n,
                          typename ElementMath<T>::compute_type alpha, Release release) {
  using PackT = Pack<T, kWidth>;
  constexpr Index kTile = Index{kThreads} * kPacks * kWidth;
  begin_kernel(release);
  const Index first = static_cast<Index>(blockIdx.x) * kTile;
  const Index remaining = n - first;
  if (remaining >= kTile) {
    const Index first_pack = first / kWidth + static_cast<Index>(threadIdx.x);
    const auto* x_packs = reinterpret_cast<const PackT*>(x) + first_pack;
    const auto* y_packs = reinterpret_cast<const PackT*>(y) + first_pack;
    auto* z_packs = reinterpret_cast<PackT*>(z) + first_pack;
    PackT x_in[kPacks];
    PackT y_in[kPacks];
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      x_in[u] = x_packs[u * kThreads];
      y_in[u] = y_packs[u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      store_pack<kCaching>(z_packs + u * kThreads, add_packs(x_in[u], y_in[u], alpha));
    }
    end_kernel(release);
    return;
  }
  for (Index i = static_cast<Index>(threadIdx.x); i < remaining; i += kThreads) {
    z[first + i] = add_scaled(x[first + i], y[first + i], alpha);
  }
  end_kernel(release);
}

// Enqueues the kernel above over n elements: one block per tile.
template <class T, int kWidth, int kThreads, int kPacks, class Index,
          StoreCaching kCaching = StoreCaching::kDefault>
cudaError_t launch_contiguous(const T* x, const T* y, T* z, std::int64_t n,
                              typename ElementMath<T>::compute_type alpha, cudaStream_t stream,
                              LaunchOrder order) {
  constexpr std::int64_t kTile = std::int64_t{kThreads} * kPacks * kWidth;
  const std::int64_t blocks = std::max<std::int64_t>(1, (n + kTile - 1) / kTile);
  return launch_kernel<add_contiguous_kernel<T, kWidth, kThreads, kPacks, Index, kCaching>>(
      static_cast<unsigned>(blocks), kThreads, stream, order, x, y, z, static_cast<Index>(n),
      alpha);
}

}  // namespace vecadd::detail
