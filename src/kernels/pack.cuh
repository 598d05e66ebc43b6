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

// One pack from memory in a single vector load. Read through a reference, a pack is split into
// its elements and loaded one at a time (eight loads for 16-bit types): the int4 keeps it whole,
// and a uint2 an 8-byte pack of narrower elements (four bfloat16 inputs of a float32 sum).
template <class PackT>
__device__ __forceinline__ PackT load_pack(const PackT* source) {
  if constexpr (sizeof(PackT) == sizeof(int4)) {
    const int4 bits = *reinterpret_cast<const int4*>(source);
    PackT pack;
    __builtin_memcpy(&pack, &bits, sizeof pack);
    return pack;
  } else if constexpr (sizeof(PackT) == sizeof(uint2) && sizeof(source->values[0]) < 8) {
    const uint2 bits = *reinterpret_cast<const uint2*>(source);
    PackT pack;
    __builtin_memcpy(&pack, &bits, sizeof pack);
    return pack;
  } else {
    return *source;
  }
}

// How a store treats the caches: kStreaming (st.global.cs) marks the line as used once, to
// be evicted first, so that a result too large for the L2 does not push out other data.
enum class StoreCaching { kDefault, kStreaming };

// One pack to memory in a single vector store (as with loads, an int4 keeps a 16-byte pack whole).
template <StoreCaching kCaching, class PackT>
__device__ __forceinline__ void store_pack(PackT* target, const PackT& value) {
  static_assert(kCaching == StoreCaching::kDefault || sizeof(PackT) == sizeof(int4),
                "streaming stores move 16-byte packs");
  if constexpr (sizeof(PackT) == sizeof(int4)) {
    int4 bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    if constexpr (kCaching == StoreCaching::kStreaming) {
      __stcs(reinterpret_cast<int4*>(target), bits);
    } else {
      *reinterpret_cast<int4*>(target) = bits;
    }
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

// The weighted sums of kWidth lanes of z's element type T, accumulated one input's pack at a
// time; an input's pack may be of another element type with the same compute type (a bfloat16
// input of a float32 sum).
template <class T, int kWidth>
struct PackSums {
  using Compute = typename ElementMath<T>::compute_type;
  Compute lanes[kWidth];

  template <class In>
  __device__ __forceinline__ void add(const Pack<In, kWidth>& pack, Compute weight, bool first) {
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      lanes[k] =
          first ? first_term(pack.values[k], weight) : next_term(lanes[k], pack.values[k], weight);
    }
  }

  // Every lane starts at `value` (a constant that leads the sum).
  __device__ __forceinline__ void fill(Compute value) {
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      lanes[k] = value;
    }
  }

  // sum + weight * value in every lane (a constant that follows the inputs).
  __device__ __forceinline__ void add_constant(Compute value, Compute weight) {
#pragma unroll
    for (int k = 0; k < kWidth; ++k) {
      lanes[k] = add_product(lanes[k], weight, value);
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

// A constant term of a sum (a Python number beside one array): a launch that has one takes a
// single input. When it leads, `value` is its weighted value, the sum's first term; when it
// follows, the sum adds weight * value last.
template <class T>
struct ConstantTerm {
  typename ElementMath<T>::compute_type value;
  typename ElementMath<T>::compute_type weight;
  bool leads;
};

// What a launch without a constant passes in its place.
struct NoConstant {};

}  // namespace vecadd::detail
