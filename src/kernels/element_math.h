// Per-element arithmetic shared by the CPU loop and the CUDA kernels: one definition of
// how each element type is loaded into its compute type, combined and stored back.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vecadd/vecadd.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define VECADD_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define VECADD_HOST_DEVICE inline
#endif

namespace vecadd::detail {

// ---- 16-bit float <-> float on the host, by bits (round to nearest even, like torch) ----

inline float float_from_bits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline std::uint32_t bits_of_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) {
    return float_from_bits(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    // Subnormal or zero: mantissa * 2^-24 is exact in float.
    const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return float_from_bits(sign | bits_of_float(magnitude));
  }
  return float_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline std::uint16_t float_to_half_bits(float value) {
  const std::uint32_t bits = bits_of_float(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN stays NaN (quiet), keeping the top payload bits
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  if (magnitude >= 0x477ff000u) {  // 65520 and above round to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  }
  if (magnitude < 0x38800000u) {  // below 2^-14: subnormal half; let the FPU round
    const float shifted = float_from_bits(magnitude) + 0.5f;
    return static_cast<std::uint16_t>(sign | (bits_of_float(shifted) - 0x3f000000u));
  }
  const std::uint32_t odd = (magnitude >> 13) & 1u;
  magnitude += 0xc8000fffu + odd;  // rebias the exponent by -112, round to nearest even
  return static_cast<std::uint16_t>(sign | (magnitude >> 13));
}

inline float bfloat16_bits_to_float(std::uint16_t b) {
  return float_from_bits(static_cast<std::uint32_t>(b) << 16);
}

inline std::uint16_t float_to_bfloat16_bits(float value) {
  std::uint32_t bits = bits_of_float(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

// ---- ElementMath<T>: compute type and conversions for each element type ----

// Default: floating types compute in themselves.
template <class T>
struct ElementMath {
  using compute_type = T;
  VECADD_HOST_DEVICE static compute_type load(T value) { return value; }
  VECADD_HOST_DEVICE static T store(compute_type value) { return value; }
};

// Integers compute in the unsigned type of the same width, so overflow wraps instead of
// being undefined behaviour.
template <>
struct ElementMath<std::int32_t> {
  using compute_type = std::uint32_t;
  VECADD_HOST_DEVICE static compute_type load(std::int32_t v) {
    return static_cast<compute_type>(v);
  }
  VECADD_HOST_DEVICE static std::int32_t store(compute_type v) {
    return static_cast<std::int32_t>(v);
  }
};

template <>
struct ElementMath<std::int64_t> {
  using compute_type = std::uint64_t;
  VECADD_HOST_DEVICE static compute_type load(std::int64_t v) {
    return static_cast<compute_type>(v);
  }
  VECADD_HOST_DEVICE static std::int64_t store(compute_type v) {
    return static_cast<std::int64_t>(v);
  }
};

template <>
struct ElementMath<float16> {
  using compute_type = float;
  VECADD_HOST_DEVICE static float load(float16 v) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(v.bits));
#else
    return half_bits_to_float(v.bits);
#endif
  }
  VECADD_HOST_DEVICE static float16 store(float v) {
#if defined(__CUDA_ARCH__)
    return float16{__half_as_ushort(__float2half_rn(v))};
#else
    return float16{float_to_half_bits(v)};
#endif
  }
};

template <>
struct ElementMath<bfloat16> {
  using compute_type = float;
  VECADD_HOST_DEVICE static float load(bfloat16 v) {
#if defined(__CUDA_ARCH__)
    return __bfloat162float(__ushort_as_bfloat16(v.bits));
#else
    return bfloat16_bits_to_float(v.bits);
#endif
  }
  VECADD_HOST_DEVICE static bfloat16 store(float v) {
#if defined(__CUDA_ARCH__)
    return bfloat16{__bfloat16_as_ushort(__float2bfloat16_rn(v))};
#else
    return bfloat16{float_to_bfloat16_bits(v)};
#endif
  }
};

// alpha as the kernels use it: in the compute type (integers wrap as their unsigned twins).
template <class T>
VECADD_HOST_DEVICE typename ElementMath<T>::compute_type scale_of(alpha_t<T> alpha) {
  return static_cast<typename ElementMath<T>::compute_type>(alpha);
}

// weight * value, rounded on its own: never fused into an fma with the term after it.
template <class C>
VECADD_HOST_DEVICE C product_rounded_alone(C weight, C value) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) {
    return __fmul_rn(weight, value);
  } else if constexpr (std::is_same_v<C, double>) {
    return __dmul_rn(weight, value);
  }
#endif
  return weight * value;
}

// The one formula every entry point evaluates, one term at a time: a sum starts at its first
// weighted input and takes the others in order (x + alpha * y for add: 1 * x is x exactly).
// nvcc would otherwise evaluate w0 * x + w1 * y as fma(w0, x, w1 * y), rounding alpha * y
// first, where torch.add's kernel computes fma(alpha, y, x).
template <class T>
VECADD_HOST_DEVICE typename ElementMath<T>::compute_type first_term(
    T value, typename ElementMath<T>::compute_type weight) {
  return product_rounded_alone(weight, ElementMath<T>::load(value));
}

template <class T>
VECADD_HOST_DEVICE typename ElementMath<T>::compute_type next_term(
    typename ElementMath<T>::compute_type sum, T value,
    typename ElementMath<T>::compute_type weight) {
  return sum + weight * ElementMath<T>::load(value);
}

}  // namespace vecadd::detail
