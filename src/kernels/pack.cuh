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

// How loads and stores treat the caches: kStreaming marks both as used once (ld/st.cs) so
// that they are evicted first, kStreamingStore only the stores.
enum class CacheHint { kDefault, kStreamingStore, kStreaming };

// The vector type of the same size as a pack, which the cache-hint intrinsics take.
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

template <CacheHint kHint, class PackT>
__device__ __forceinline__ PackT load_pack(const PackT* source) {
  if constexpr (kHint == CacheHint::kStreaming && sizeof(PackT) >= 4) {
    using Vector = typename VectorOfBytes<sizeof(PackT)>::type;
    const Vector bits = __ldcs(reinterpret_cast<const Vector*>(source));
    PackT result;
    __builtin_memcpy(&result, &bits, sizeof result);
    return result;
  } else {
    return *source;
  }
}

template <CacheHint kHint, class PackT>
__device__ __forceinline__ void store_pack(PackT* target, const PackT& value) {
  if constexpr (kHint != CacheHint::kDefault && sizeof(PackT) >= 4) {
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
