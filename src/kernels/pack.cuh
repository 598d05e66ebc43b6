// A pack: kWidth adjacent elements moved by one vector load or store, plus the per-pack add
// that the contiguous and the row-broadcast kernels share.
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

template <class T, int kWidth>
__device__ __forceinline__ Pack<T, kWidth> add_packs(const Pack<T, kWidth>& x,
                                                     const Pack<T, kWidth>& y,
                                                     typename ElementMath<T>::compute_type alpha) {
  Pack<T, kWidth> z;
#pragma unroll
  for (int k = 0; k < kWidth; ++k) {
    z.values[k] = add_scaled(x.values[k], y.values[k], alpha);
  }
  return z;
}

}  // namespace vecadd::detail
