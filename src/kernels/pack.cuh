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

// The vector type of the same size as a pack, which the streaming-store intrinsic takes.
template <int kBytes>
struct VectorOfBytes;
template <>
struct VectorOfBytes<16> {
  using type = int4;
};
template <>
struct VectorOfBytes<8> {
  using type = int2;
};
template <>
struct VectorOfBytes<4> {
  using type = int;
};

template <StoreCaching kCaching, class PackT>
__device__ __forceinline__ void store_pack(PackT* target, const PackT& value) {
  if constexpr (kCaching == StoreCaching::kStreaming && sizeof(PackT) >= 4) {
    using Vector = typename VectorOfBytes<sizeof(PackT)>::type;
    Vector bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    __stcs(reinterpret_cast<Vector*>(target), bits);
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
