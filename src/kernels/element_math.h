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

// A complex number as torch stores it: real part first.
template <class F>
struct Complex {
  F re;
  F im;
};

// complex32: two IEEE binary16 numbers.
struct ComplexHalf {
  float16 re;
  float16 im;
};

template <class F>
VECADD_HOST_DEVICE Complex<F> operator+(Complex<F> a, Complex<F> b) {
  return {a.re + b.re, a.im + b.im};
}

// The product as torch's complex type writes it (no Annex G recovery of infinities: a real
// weight of one times (x, inf) is (nan, inf), as in torch).
template <class F>
VECADD_HOST_DEVICE Complex<F> operator*(Complex<F> a, Complex<F> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

template <class F>
VECADD_HOST_DEVICE bool operator==(Complex<F> a, Complex<F> b) {
  return a.re == b.re && a.im == b.im;
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

// The integers narrower than int: computed in their unsigned twins, which wrap (the arithmetic
// below widens them to unsigned int first, so that no product overflows an int).
template <>
struct ElementMath<std::int8_t> {
  using compute_type = std::uint8_t;
  VECADD_HOST_DEVICE static compute_type load(std::int8_t v) {
    return static_cast<compute_type>(v);
  }
  VECADD_HOST_DEVICE static std::int8_t store(compute_type v) {
    return static_cast<std::int8_t>(v);
  }
};

template <>
struct ElementMath<std::int16_t> {
  using compute_type = std::uint16_t;
  VECADD_HOST_DEVICE static compute_type load(std::int16_t v) {
    return static_cast<compute_type>(v);
  }
  VECADD_HOST_DEVICE static std::int16_t store(compute_type v) {
    return static_cast<std::int16_t>(v);
  }
};

// complex32: two float16 numbers computed in Complex<float> (complex64 and complex128, bool and
// uint8 compute in themselves).
template <>
struct ElementMath<ComplexHalf> {
  using compute_type = Complex<float>;
  VECADD_HOST_DEVICE static compute_type load(ComplexHalf v) {
    return {ElementMath<float16>::load(v.re), ElementMath<float16>::load(v.im)};
  }
  VECADD_HOST_DEVICE static ComplexHalf store(compute_type v) {
    return {ElementMath<float16>::store(v.re), ElementMath<float16>::store(v.im)};
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

template <class K>
inline constexpr bool kIsIntegerCompute = std::is_integral_v<K> && !std::is_same_v<K, bool>;

// w * x in a compute type: "and" for bool, wrapping for integers, rounded alone for floats, the
// complex product otherwise.
template <class K>
VECADD_HOST_DEVICE K product(K weight, K x) {
  if constexpr (std::is_same_v<K, bool>) {
    return weight & x;  // bools are 0 or 1: bitwise, so that loops vectorize
  } else if constexpr (kIsIntegerCompute<K>) {
    // Unsigned and at least as wide as int: uint8 and uint16 would promote to int and overflow.
    using Wide = std::common_type_t<K, unsigned>;
    return static_cast<K>(static_cast<Wide>(weight) * static_cast<Wide>(x));
  } else if constexpr (std::is_floating_point_v<K>) {
    return product_rounded_alone(weight, x);
  } else {
    return weight * x;
  }
}

// sum + w * x: torch.add's a + alpha * b ("or" of "and" for bool). nvcc fuses it for floats
// (fma(alpha, b, a), as torch.add's kernel); the CPU kernels say where they fuse.
template <class K>
VECADD_HOST_DEVICE K add_product(K sum, K weight, K x) {
  if constexpr (std::is_same_v<K, bool>) {
    return sum | (weight & x);
  } else if constexpr (kIsIntegerCompute<K>) {
    using Wide = std::common_type_t<K, unsigned>;
    return static_cast<K>(static_cast<Wide>(sum) + static_cast<Wide>(product(weight, x)));
  } else {
    return sum + weight * x;
  }
}

template <class K>
inline constexpr bool kIsComplexCompute = !std::is_arithmetic_v<K>;

// The one formula every entry point evaluates, one term at a time: a sum starts at its first
// weighted input and takes the others in order (x + alpha * y for add: 1 * x is x exactly for
// reals; a complex input of weight one is taken as it is, as torch.add takes x).
// nvcc would otherwise evaluate w0 * x + w1 * y as fma(w0, x, w1 * y), rounding alpha * y
// first, where torch.add's kernel computes fma(alpha, y, x).
template <class T>
VECADD_HOST_DEVICE typename ElementMath<T>::compute_type first_term(
    T value, typename ElementMath<T>::compute_type weight) {
  using K = typename ElementMath<T>::compute_type;
  const K x = ElementMath<T>::load(value);
  if constexpr (kIsComplexCompute<K>) {
    return weight.re == 1 && weight.im == 0 ? x : product(weight, x);
  } else {
    return product(weight, x);
  }
}

template <class T>
VECADD_HOST_DEVICE typename ElementMath<T>::compute_type next_term(
    typename ElementMath<T>::compute_type sum, T value,
    typename ElementMath<T>::compute_type weight) {
  return add_product(sum, weight, ElementMath<T>::load(value));
}

}  // namespace vecadd::detail

// ---- Every dtype of a sum (vecadd::DType): storage, casts and compute types ----
//
// A cast from dtype S to dtype D goes through S's *value* type, which holds every S exactly
// (int16 for bool and the integers up to 16 bits, int32, int64, float, double, Complex<float>,
// Complex<double>): so a conversion is 13 loads into 7 value types and 7 x 13 casts out of them,
// not 13 x 13 pairs.

namespace vecadd::detail {

// Float to integer as torch's x86-64 CPU kernels cast (C++ leaves it undefined out of range):
// truncation toward zero, and the lowest value for NaN and anything out of range.
VECADD_HOST_DEVICE std::int32_t truncate_to_int32(double value) {
  return value > -2147483649.0 && value < 2147483648.0 ? static_cast<std::int32_t>(value)
                                                       : INT32_MIN;
}
VECADD_HOST_DEVICE std::int32_t truncate_to_int32(float value) {
  return value >= -2147483648.0f && value < 2147483648.0f ? static_cast<std::int32_t>(value)
                                                          : INT32_MIN;
}
template <class F>
VECADD_HOST_DEVICE std::int64_t truncate_to_int64(F value) {
  return value >= F(-9223372036854775808.0) && value < F(9223372036854775808.0)
             ? static_cast<std::int64_t>(value)
             : INT64_MIN;
}

// A value type's real part, and whether it is "not zero" (a complex number: either part).
template <class V>
VECADD_HOST_DEVICE V real_part(V value) {
  return value;
}
template <class F>
VECADD_HOST_DEVICE F real_part(Complex<F> value) {
  return value.re;
}
template <class V>
VECADD_HOST_DEVICE bool is_nonzero(V value) {
  return value != V(0);
}
template <class F>
VECADD_HOST_DEVICE bool is_nonzero(Complex<F> value) {
  return value.re != F(0) || value.im != F(0);
}

template <class V>
inline constexpr bool kIsComplexValue = false;
template <class F>
inline constexpr bool kIsComplexValue<Complex<F>> = true;

// A real value as the integer type I, as torch casts it: integers wrap, floats truncate (to
// int32 first for the narrower signed types, to int64 for uint8 and int64, as on x86-64).
template <class I, class V>
VECADD_HOST_DEVICE I integer_from(V value) {
  if constexpr (std::is_integral_v<V>) {
    return static_cast<I>(static_cast<std::make_unsigned_t<I>>(value));
  } else if constexpr (std::is_same_v<I, std::uint8_t> || std::is_same_v<I, std::int64_t>) {
    return static_cast<I>(static_cast<std::uint64_t>(truncate_to_int64(value)));
  } else {
    return static_cast<I>(static_cast<std::make_unsigned_t<I>>(truncate_to_int32(value)));
  }
}

// A real value as float: doubles round once; integers round to nearest.
template <class V>
VECADD_HOST_DEVICE float float_from(V value) {
  return static_cast<float>(value);
}

// What every dtype is in memory, in its value type and in its compute type, and the casts into
// it. `cast(v)` takes any value type: it is torch's cast to the dtype (complex to real drops the
// imaginary part; float16 and bfloat16 round from float, so a double rounds twice, as c10 does).
template <DType D>
struct DTypeMath;

// bool, uint8, int8, int16, int32, int64: computed in the unsigned type of their width (bool in
// bool), so that sums wrap instead of overflowing.
template <DType D, class Storage, class Value, class Compute>
struct IntegerMath {
  using storage = Storage;
  using value = Value;
  using compute = Compute;
  VECADD_HOST_DEVICE static value widen(storage s) { return static_cast<value>(s); }
  VECADD_HOST_DEVICE static compute to_compute(storage s) { return static_cast<compute>(s); }
  VECADD_HOST_DEVICE static storage from_compute(compute c) { return static_cast<storage>(c); }
  template <class V>
  VECADD_HOST_DEVICE static storage cast(V v) {
    if constexpr (std::is_same_v<storage, bool>) {
      return is_nonzero(v);
    } else {
      return integer_from<storage>(real_part(v));
    }
  }
};

template <>
struct DTypeMath<DType::kBool> : IntegerMath<DType::kBool, bool, std::int16_t, bool> {};
template <>
struct DTypeMath<DType::kUInt8>
    : IntegerMath<DType::kUInt8, std::uint8_t, std::int16_t, std::uint8_t> {};
template <>
struct DTypeMath<DType::kInt8>
    : IntegerMath<DType::kInt8, std::int8_t, std::int16_t, std::uint8_t> {};
template <>
struct DTypeMath<DType::kInt16>
    : IntegerMath<DType::kInt16, std::int16_t, std::int16_t, std::uint16_t> {};
template <>
struct DTypeMath<DType::kInt32>
    : IntegerMath<DType::kInt32, std::int32_t, std::int32_t, std::uint32_t> {};
template <>
struct DTypeMath<DType::kInt64>
    : IntegerMath<DType::kInt64, std::int64_t, std::int64_t, std::uint64_t> {};

// float16 and bfloat16: held in float, rounded to 16 bits on the way out.
template <class Half>
struct HalfMath {
  using storage = Half;
  using value = float;
  using compute = float;
  VECADD_HOST_DEVICE static value widen(storage s) { return ElementMath<Half>::load(s); }
  VECADD_HOST_DEVICE static compute to_compute(storage s) { return ElementMath<Half>::load(s); }
  VECADD_HOST_DEVICE static storage from_compute(compute c) { return ElementMath<Half>::store(c); }
  template <class V>
  VECADD_HOST_DEVICE static storage cast(V v) {
    return ElementMath<Half>::store(float_from(real_part(v)));
  }
};
template <>
struct DTypeMath<DType::kFloat16> : HalfMath<float16> {};
template <>
struct DTypeMath<DType::kBFloat16> : HalfMath<bfloat16> {};

template <class F>
struct FloatMath {
  using storage = F;
  using value = F;
  using compute = F;
  VECADD_HOST_DEVICE static value widen(storage s) { return s; }
  VECADD_HOST_DEVICE static compute to_compute(storage s) { return s; }
  VECADD_HOST_DEVICE static storage from_compute(compute c) { return c; }
  template <class V>
  VECADD_HOST_DEVICE static storage cast(V v) {
    return static_cast<F>(real_part(v));
  }
};
template <>
struct DTypeMath<DType::kFloat32> : FloatMath<float> {};
template <>
struct DTypeMath<DType::kFloat64> : FloatMath<double> {};

// complex32: two float16 numbers, computed in Complex<float>.
template <>
struct DTypeMath<DType::kComplex32> {
  using storage = ComplexHalf;
  using value = Complex<float>;
  using compute = Complex<float>;
  VECADD_HOST_DEVICE static value widen(storage s) { return ElementMath<ComplexHalf>::load(s); }
  VECADD_HOST_DEVICE static compute to_compute(storage s) { return widen(s); }
  VECADD_HOST_DEVICE static storage from_compute(compute c) {
    return ElementMath<ComplexHalf>::store(c);
  }
  template <class V>
  VECADD_HOST_DEVICE static storage cast(V v) {
    if constexpr (kIsComplexValue<V>) {
      return {ElementMath<float16>::store(float_from(v.re)),
              ElementMath<float16>::store(float_from(v.im))};
    } else {
      return {ElementMath<float16>::store(float_from(v)), float16{0}};
    }
  }
};

template <class F>
struct ComplexMath {
  using storage = Complex<F>;
  using value = Complex<F>;
  using compute = Complex<F>;
  VECADD_HOST_DEVICE static value widen(storage s) { return s; }
  VECADD_HOST_DEVICE static compute to_compute(storage s) { return s; }
  VECADD_HOST_DEVICE static storage from_compute(compute c) { return c; }
  template <class V>
  VECADD_HOST_DEVICE static storage cast(V v) {
    if constexpr (kIsComplexValue<V>) {
      return {static_cast<F>(v.re), static_cast<F>(v.im)};
    } else {
      return {static_cast<F>(v), F(0)};
    }
  }
};
template <>
struct DTypeMath<DType::kComplex64> : ComplexMath<float> {};
template <>
struct DTypeMath<DType::kComplex128> : ComplexMath<double> {};

template <DType D>
using storage_of = typename DTypeMath<D>::storage;
template <DType D>
using value_of = typename DTypeMath<D>::value;
template <DType D>
using compute_of = typename DTypeMath<D>::compute;

// Calls fn(std::integral_constant<DType, D>{}) for the dtype; returns false for a value outside
// the enumeration. The one switch over dtypes on the host.
template <class Fn>
bool visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
#define VECADD_DTYPE_CASE(D)                \
  case D:                                   \
    fn(std::integral_constant<DType, D>{}); \
    return true;
    VECADD_DTYPE_CASE(DType::kBool)
    VECADD_DTYPE_CASE(DType::kUInt8)
    VECADD_DTYPE_CASE(DType::kInt8)
    VECADD_DTYPE_CASE(DType::kInt16)
    VECADD_DTYPE_CASE(DType::kInt32)
    VECADD_DTYPE_CASE(DType::kInt64)
    VECADD_DTYPE_CASE(DType::kFloat16)
    VECADD_DTYPE_CASE(DType::kBFloat16)
    VECADD_DTYPE_CASE(DType::kFloat32)
    VECADD_DTYPE_CASE(DType::kFloat64)
    VECADD_DTYPE_CASE(DType::kComplex32)
    VECADD_DTYPE_CASE(DType::kComplex64)
    VECADD_DTYPE_CASE(DType::kComplex128)
#undef VECADD_DTYPE_CASE
  }
  return false;
}

// A double rounded to F in a call of its own. GCC 12.2 at -O2 drops the rounding of a pair of
// doubles to float when the pair is widened back to double in the same function (its SLP
// vectorizer folds the conversions away): the call keeps the two apart.
template <class F>
[[gnu::noinline]] F rounded_alone(double value) {
  return static_cast<F>(value);
}

// A constant input's value (vecadd::Number read in its own dtype) in its dtype's value type.
template <DType D>
value_of<D> value_of_number(const Number& number) {
  using V = value_of<D>;
  if constexpr (kIsComplexValue<V>) {
    using F = decltype(V{}.re);
    if constexpr (D == DType::kComplex32) {
      // A complex32 constant holds float16 parts: round each (they came from one).
      return DTypeMath<D>::widen(DTypeMath<D>::cast(Complex<double>{number.real, number.imag}));
    } else {
      return {rounded_alone<F>(number.real), rounded_alone<F>(number.imag)};
    }
  } else if constexpr (std::is_integral_v<V>) {
    return DTypeMath<D>::widen(DTypeMath<D>::cast(number.integral));
  } else {
    return DTypeMath<D>::widen(DTypeMath<D>::cast(number.real));
  }
}

}  // namespace vecadd::detail

namespace vecadd::detail {

// The dtype of each typed entry point's element type (add_cpu<T>, add_n_cuda<T>).
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float16>) {
    return DType::kFloat16;
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return DType::kBFloat16;
  } else if constexpr (std::is_same_v<T, float>) {
    return DType::kFloat32;
  } else if constexpr (std::is_same_v<T, double>) {
    return DType::kFloat64;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return DType::kInt32;
  } else {
    static_assert(std::is_same_v<T, std::int64_t>, "an element type without a DType");
    return DType::kInt64;
  }
}

// A typed entry point's weight (alpha_t<T>) as a Number: integral for integers, real otherwise.
template <class W>
constexpr Number number_of_weight(W weight) {
  if constexpr (std::is_integral_v<W>) {
    return Number::of_integer(weight);
  } else {
    return Number::of_real(weight);
  }
}

}  // namespace vecadd::detail
