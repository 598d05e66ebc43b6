// The contiguous weighted-sum kernel as a template over its launch shape and the number of
// inputs it can take: the library picks the shape per call (vector packs or single elements,
// 128 or 1024 threads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime_api.h>

#include "element_math.h"
#include "launch.cuh"
#include "pack.cuh"

namespace vecadd::detail {

// Each block owns one tile of kThreads * kPacks * kWidth elements. A whole tile takes the
// branch-free vector path: every thread moves kPacks packs of kWidth elements of each input,
// all loads issued before any store. Only the last block can hold a partial tile; it goes
// element by element. kCaching picks the cache treatment of the vector stores. Input 0's
// elements are First, the others' Rest (z's element type T, unless a mixed-dtype launch says
// otherwise: a bfloat16 input of a float32 sum); a launch with a ConstantTerm adds a constant
// before or after its inputs.
template <class T, int kWidth, int kThreads, int kPacks, class Index, StoreCaching kCaching,
          int kCapacity, class First = T, class Rest = T, class Constant = NoConstant>
__global__ void __launch_bounds__(kThreads)
    sum_contiguous_kernel(Inputs<T, kCapacity> in, T* z, Index n, Constant constant,
                          Release release) {
  using PackT = Pack<T, kWidth>;
  constexpr bool kHasConstant = !std::is_same_v<Constant, NoConstant>;
  constexpr Index kTile = Index{kThreads} * kPacks * kWidth;
  begin_kernel(release);
  const int count = in.size();
  const Index first = static_cast<Index>(blockIdx.x) * kTile;
  const Index remaining = n - first;
  bool leads = false;  // whether a constant is the sum's first term
  if constexpr (kHasConstant) {
    leads = constant.leads;
  }
  const auto* first_input = reinterpret_cast<const First*>(in.data[0]);
  if (remaining >= kTile) {
    const Index first_pack = first / kWidth + static_cast<Index>(threadIdx.x);
    PackSums<T, kWidth> sums[kPacks];
    if constexpr (kHasConstant) {
#pragma unroll
      for (int u = 0; u < kPacks; ++u) {
        if (leads) {
          sums[u].fill(constant.value);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kCapacity; ++i) {
      if (i < count) {
        if (i == 0) {
          const auto* packs =
              reinterpret_cast<const Pack<First, kWidth>*>(first_input) + first_pack;
#pragma unroll
          for (int u = 0; u < kPacks; ++u) {
            sums[u].add(load_pack(packs + u * kThreads), in.weights[i], !leads);
          }
        } else {
          const auto* packs = reinterpret_cast<const Pack<Rest, kWidth>*>(in.data[i]) + first_pack;
#pragma unroll
          for (int u = 0; u < kPacks; ++u) {
            sums[u].add(load_pack(packs + u * kThreads), in.weights[i], false);
          }
        }
      }
    }
    if constexpr (kHasConstant) {
#pragma unroll
      for (int u = 0; u < kPacks; ++u) {
        if (!leads) {
          sums[u].add_constant(constant.value, constant.weight);
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
    auto sum = first_term(first_input[first + e], in.weights[0]);
    if constexpr (kHasConstant) {
      if (leads) {
        sum = next_term(constant.value, first_input[first + e], in.weights[0]);
      }
    }
#pragma unroll
    for (int i = 1; i < kCapacity; ++i) {
      if (i < count) {
        sum = next_term(sum, reinterpret_cast<const Rest*>(in.data[i])[first + e], in.weights[i]);
      }
    }
    if constexpr (kHasConstant) {
      if (!leads) {
        sum = add_product(sum, constant.weight, constant.value);
      }
    }
    z[first + e] = ElementMath<T>::store(sum);
  }
  end_kernel(release);
}

// Enqueues the kernel above over n elements: one block per tile.
template <class T, int kWidth, int kThreads, int kPacks, class Index,
          StoreCaching kCaching = StoreCaching::kDefault, class First = T, class Rest = T,
          int kCapacity, class Constant = NoConstant>
cudaError_t launch_contiguous(const Inputs<T, kCapacity>& in, T* z, std::int64_t n,
                              cudaStream_t stream, LaunchOrder order, Constant constant = {}) {
  constexpr std::int64_t kTile = std::int64_t{kThreads} * kPacks * kWidth;
  const std::int64_t blocks = std::max<std::int64_t>(1, (n + kTile - 1) / kTile);
  return launch_kernel<sum_contiguous_kernel<T, kWidth, kThreads, kPacks, Index, kCaching,
                                             kCapacity, First, Rest, Constant>>(
      static_cast<unsigned>(blocks), kThreads, stream, order, in, z, static_cast<Index>(n),
      constant);
}

}  // namespace vecadd::detail
