// What the CPU and CUDA runners share about a call (vecadd::Sum), on the host: each weight and
// constant in the compute type, and which compute type a common dtype sums in.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "element_math.h"
#include "vecadd/vecadd.h"

namespace vecadd::detail {

// The compute types of the dtypes (DTypeMath<D>::compute): what a sum is accumulated in.
enum class ComputeKind : std::uint8_t {
  kBool,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat,
  kDouble,
  kComplexFloat,
  kComplexDouble,
};

// The dtype whose storage is the compute type of `common` (float32 for float16 and bfloat16,
// complex64 for complex32; the dtype itself otherwise): where a scalar converts to, straight.
constexpr DType compute_dtype(DType common) {
  switch (common) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return DType::kFloat32;
    case DType::kComplex32:
      return DType::kComplex64;
    default:
      return common;
  }
}

constexpr ComputeKind compute_kind(DType common) {
  switch (common) {
    case DType::kBool:
      return ComputeKind::kBool;
    case DType::kUInt8:
    case DType::kInt8:
      return ComputeKind::kUInt8;
    case DType::kInt16:
      return ComputeKind::kUInt16;
    case DType::kInt32:
      return ComputeKind::kUInt32;
    case DType::kInt64:
      return ComputeKind::kUInt64;
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
      return ComputeKind::kFloat;
    case DType::kFloat64:
      return ComputeKind::kDouble;
    case DType::kComplex32:
    case DType::kComplex64:
      return ComputeKind::kComplexFloat;
    case DType::kComplex128:
      return ComputeKind::kComplexDouble;
  }
  return ComputeKind::kFloat;
}

// One value of any compute type, by bytes (weights and constants).
struct alignas(16) ComputeValue {
  unsigned char bytes[16];

  template <class K>
  K as() const {
    K value;
    std::memcpy(&value, bytes, sizeof value);
    return value;
  }
  template <class K>
  static ComputeValue of(K value) {
    ComputeValue result{};
    std::memcpy(result.bytes, &value, sizeof value);
    return result;
  }
};

// A weight in C's compute type: `integral` for bool and integer sums (wrapping to the width),
// `real` (and `imag`) rounded once for floating and complex ones.
template <DType C>
compute_of<C> weight_in(const Number& weight) {
  using K = compute_of<C>;
  if constexpr (std::is_same_v<K, bool>) {
    return weight.integral != 0;
  } else if constexpr (std::is_integral_v<K>) {
    return static_cast<K>(static_cast<std::uint64_t>(weight.integral));
  } else if constexpr (kIsComplexValue<K>) {
    using F = decltype(K{}.re);
    return {static_cast<F>(weight.real), static_cast<F>(weight.imag)};
  } else {
    return static_cast<K>(weight.real);
  }
}

// Whether a weight is one in C's compute type: the sum's first term is then the input itself.
template <DType C>
bool weight_is_one(const Number& weight) {
  using K = compute_of<C>;
  if constexpr (std::is_integral_v<K>) {
    return weight_in<C>(weight) == K(1);
  } else {
    return weight_in<C>(weight) == DTypeMath<compute_dtype(C)>::cast(1.0);
  }
}

// A value (of any value type) in C's compute type: cast to C first, or straight.
template <DType C, class V>
compute_of<C> compute_from_value(V value, bool straight) {
  constexpr DType kStraight = compute_dtype(C);
  if (straight) {
    return DTypeMath<kStraight>::to_compute(DTypeMath<kStraight>::cast(value));
  }
  return DTypeMath<C>::to_compute(DTypeMath<C>::cast(value));
}

// A constant input (its value read in its dtype) in C's compute type.
template <DType C>
ComputeValue constant_in(const SumInput& input) {
  ComputeValue result{};
  visit_dtype(input.dtype, [&](auto tag) {
    constexpr DType kD = decltype(tag)::value;
    result =
        ComputeValue::of(compute_from_value<C>(value_of_number<kD>(input.value), input.scalar));
  });
  return result;
}

}  // namespace vecadd::detail
