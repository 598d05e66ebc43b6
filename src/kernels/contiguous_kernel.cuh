// The contiguous weighted-sum kernel as a template over its launch shape and the number of
// inputs it can take: the library picks the shape per call (vector packs or single elements,
// 128 or 1024 threads).
#pragma once

#include <algorithm>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "element_math.h"
#include "launch.cuh"
#include "pack.cuh"

namespace vecadd::detail {

// Each block owns one tile of kThreads * kPacks * kWidth elements. A whole tile takes the
// branch-free vector path: every thread moves kPacks packs of kWidth elements of each input,
// all loads issued before any store. Only the last block can hold a partial tile; it goes
// element by element. kCaching picks the cache treatment of the vector stores.
template <class T, int kWidth, int kThreads, int kPacks, class Index, StoreCaching kCaching,
          int kCapacity>
__global__ void __launch_bounds__(kThreads)
    sum_contiguous_kernel(Inputs<T, kCapacity> in, T* z, Index n, Release release) {
  using PackT = Pack<T, kWidth>;
  constexpr Index kTile = Index{kThreads} * kPacks * kWidth;
  begin_kernel(release);
  const int count = in.size();
  const Index first = static_cast<Index>(blockIdx.x) * kTile;
  const Index remaining = n - first;
  if (remaining >= kTile) {
    const Index first_pack = first / kWidth + static_cast<Index>(threadIdx.x);
    PackSums<T, kWidth> sums[kPacks];
#pragma unroll
    for (int i = 0; i < kCapacity; ++i) {
      if (i < count) {
        const auto* packs = reinterpret_cast<const PackT*>(in.data[i]) + first_pack;
#pragma unroll
        for (int u = 0; u < kPacks; ++u) {
          sums[u].add(load_pack(packs + u * kThreads), in.weights[i], i == 0);
        }
      }
    }
    auto* z_packs = reinterpret_cast<PackT*>(z) + first_pack;
#pragma unroll
    for (int u = 0; u < kPacks; ++u) {
      store_pack<kCaching>(z_packs + u * kThreads, sums[u].rounded());
    }
    end_kernel(release);
    return;
  }
  for (Index e = static_cast<Index>(threadIdx.x); e < remaining; e += kThreads) {
    auto sum = first_term(in.data[0][first + e], in.weights[0]);
#pragma unroll
    for (int i = 1; i < kCapacity; ++i) {
      if (i < count) {
        sum = next_term(sum, in.data[i][first + e], in.weights[i]);
      }
    }
    z[first + e] = ElementMath<T>::store(sum);
  }
  end_kernel(release);
}

// Enqueues the kernel above over n elements: one block per tile.
template <class T, int kWidth, int kThreads, int kPacks, class Index,
          StoreCaching kCaching = StoreCaching::kDefault, int kCapacity>
cudaError_t launch_contiguous(const Inputs<T, kCapacity>& in, T* z, std::int64_t n,
                              cudaStream_t stream, LaunchOrder order) {
  constexpr std::int64_t kTile = std::int64_t{kThreads} * kPacks * kWidth;
  const std::int64_t blocks = std::max<std::int64_t>(1, (n + kTile - 1) / kTile);
  return launch_kernel<
      sum_contiguous_kernel<T, kWidth, kThreads, kPacks, Index, kCaching, kCapacity>>(
      static_cast<unsigned>(blocks), kThreads, stream, order, in, z, static_cast<Index>(n));
}

}  // namespace vecadd::detail
