// A pack: kWidth adjacent elements moved by one vector load or store; the inputs of one launch
// and the weighted sum of their packs, which the contiguous and the row-broadcast kernels share.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "element_math.h"

namespace vecadd::detail {

template <class T, int kWidth>
struct alignas(sizeof(T) * kWidth) Pack {
  T values[kWidth];
};

// How a store treats the caches: kStreaming (st.global.cs) marks the line as used once, to
// be evicted first, so that a result too large for the L2 does not push out other data.
enum class StoreCaching { kDefault, kStreaming };

template <StoreCaching kCaching, class PackT>
__device__ __forceinline__ void store_pack(PackT* target, const PackT& value) {
  if constexpr (kCaching == StoreCaching::kStreaming) {
    static_assert(sizeof(PackT) == sizeof(int4), "streaming stores move 16-byte packs");
    int4 bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    __stcs(reinterpret_cast<int4*>(target), bits);
  } else {
    *target = value;
  }
}

// The inputs of one launch and their weights in compute type. A launch of capacity 2 always
// sums two (add: x + alpha * y), so its kernels know the count; larger ones read it.
template <class T, int kCapacity>
struct Inputs {
  const T* data[kCapacity];
  typename ElementMath<T>::compute_type weights[kCapacity];
  int count;

  __device__ __forceinline__ int size() const { return kCapacity == 2 ? 2 : count; }
};

// The weighted sums of kWidth lanes, accumulated one input's pack at a time.
template <class T, int kWidth>
struct PackSums {
  typename ElementMath<T>::compute_type lanes[kWidth];

  __device__ __forceinline__ void add(const Pack<T, kWidth>& pack,
                                      typename ElementMath<T>::compute_type weight, bool first) {
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      lanes[k] =
          first ? first_term(pack.values[k], weight) : next_term(lanes[k], pack.values[k], weight);
    }
  }

  __device__ __forceinline__ Pack<T, kWidth> rounded() const {
    Pack<T, kWidth> pack;
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      pack.values[k] = ElementMath<T>::store(lanes[k]);
    }
    return pack;
  }
};

}  // namespace vecadd::detail
