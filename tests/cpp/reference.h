// The kernel library's sums of mixed dtypes (vecadd::Sum), element by element, in the plainest
// code: the reference the CPU and CUDA tests check vecadd::sum_cpu and vecadd::sum_cuda against.
// It shares no code with the library: each dtype's casts are written out again from the rules
// vecadd/vecadd.h documents (torch's casts on x86-64), 16-bit floats rounded by arithmetic.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "vecadd/vecadd.h"

namespace vecadd_test {

using vecadd::DType;

inline bool is_integer(DType d) {
  return d == DType::kUInt8 || d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 ||
         d == DType::kInt64;
}
inline bool is_complex(DType d) {
  return d == DType::kComplex32 || d == DType::kComplex64 || d == DType::kComplex128;
}
inline bool is_floating(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat32 ||
         d == DType::kFloat64;
}

inline const DType kAllDTypes[] = {
    DType::kBool,      DType::kUInt8,     DType::kInt8,      DType::kInt16,   DType::kInt32,
    DType::kInt64,     DType::kFloat16,   DType::kBFloat16,  DType::kFloat32, DType::kFloat64,
    DType::kComplex32, DType::kComplex64, DType::kComplex128};

// ---- Rounding to the narrow floats, by arithmetic on doubles ----

// `value` rounded to nearest even with `mantissa` fraction bits, exponents from `min_exponent`
// (subnormal below), infinite from `overflow` on.
inline double round_to_format(double value, int mantissa, int min_exponent, double overflow) {
  if (std::isnan(value) || std::isinf(value) || value == 0) {
    return value;
  }
  const int exponent = std::max(std::ilogb(value), min_exponent);
  const double quantum = std::ldexp(1.0, exponent - mantissa);
  const double rounded = std::nearbyint(value / quantum) * quantum;
  if (std::fabs(rounded) >= overflow) {
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  }
  return rounded == 0 ? std::copysign(0.0, value) : rounded;
}
// float16: 10 fraction bits, exponents from -14, 65520 and beyond round to infinity.
inline double round_half(double v) {
  return round_to_format(v, 10, -14, 65520.0);
}
// bfloat16: 7 fraction bits, float's exponents.
inline double round_bfloat16(double v) {
  return round_to_format(v, 7, -126, std::ldexp(1.0, 128));
}
// In a call of its own: GCC 12.2's SLP vectorizer drops the rounding of a pair of doubles to
// float and back within one function.
[[gnu::noinline]] inline double round_float(double v) {
  return static_cast<double>(static_cast<float>(v));
}

// ---- A value of any dtype: integral, or a complex double ----

struct Ref {
  bool integral = true;
  std::int64_t i = 0;
  double re = 0;
  double im = 0;

  static Ref of_int(std::int64_t v) { return {true, v, static_cast<double>(v), 0}; }
  static Ref of_complex(double r, double m = 0) { return {false, 0, r, m}; }
  double real() const { return integral ? static_cast<double>(i) : re; }
};

// x86-64's truncation: the lowest value for NaN and out of range.
inline std::int64_t truncated64(double v) {
  return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? static_cast<std::int64_t>(v)
                                                                    : INT64_MIN;
}
inline std::int64_t truncated32(double v) {
  return (v > -2147483649.0 && v < 2147483648.0) ? static_cast<std::int32_t>(v) : INT32_MIN;
}

// Two's-complement wrap of v to `bits`, signed or not.
inline std::int64_t wrap(std::int64_t v, int bits, bool is_signed) {
  if (bits == 64) {
    return v;
  }
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  std::uint64_t low = static_cast<std::uint64_t>(v) & mask;
  if (is_signed && (low >> (bits - 1)) != 0) {
    low |= ~mask;
  }
  return static_cast<std::int64_t>(low);
}

inline int bits_of(DType d) {
  switch (d) {
    case DType::kUInt8:
    case DType::kInt8:
      return 8;
    case DType::kInt16:
      return 16;
    case DType::kInt32:
      return 32;
    default:
      return 64;
  }
}

// `v` cast to dtype `to` (the value it then holds).
inline Ref cast(const Ref& v, DType to) {
  if (to == DType::kBool) {
    const bool nonzero = v.integral ? v.i != 0 : (v.re != 0 || v.im != 0 || std::isnan(v.re));
    return Ref::of_int(nonzero ? 1 : 0);
  }
  if (is_integer(to)) {
    if (v.integral) {
      return Ref::of_int(wrap(v.i, bits_of(to), to != DType::kUInt8));
    }
    const std::int64_t whole =
        (to == DType::kUInt8 || to == DType::kInt64) ? truncated64(v.re) : truncated32(v.re);
    return Ref::of_int(wrap(whole, bits_of(to), to != DType::kUInt8));
  }
  // Floating and complex: integers to double exactly, then to float (as int64 -> float rounds).
  double re = v.integral ? static_cast<double>(static_cast<float>(v.i)) : v.re;
  double im = v.integral ? 0 : v.im;
  if (v.integral && (to == DType::kFloat64 || to == DType::kComplex128)) {
    re = static_cast<double>(v.i);
  }
  switch (to) {
    case DType::kFloat16:
      return Ref::of_complex(round_half(round_float(re)));
    case DType::kBFloat16:
      return Ref::of_complex(round_bfloat16(round_float(re)));
    case DType::kFloat32:
      return Ref::of_complex(round_float(re));
    case DType::kFloat64:
      return Ref::of_complex(re);
    case DType::kComplex32:
      return Ref::of_complex(round_half(round_float(re)), round_half(round_float(im)));
    case DType::kComplex64:
      return Ref::of_complex(round_float(re), round_float(im));
    default:
      return Ref::of_complex(re, im);
  }
}

// ---- Memory: one element of a dtype to and from a Ref ----

inline std::uint16_t half_bits(double v) {
  // v is a float16 value: its bits, by construction.
  if (std::isnan(v)) {
    return 0x7e00;
  }
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) {
    return sign | 0x7c00;
  }
  if (a < std::ldexp(1.0, -14)) {
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(a * std::ldexp(1.0, 24)));
  }
  const int e = std::ilogb(a);
  const auto fraction = static_cast<std::uint16_t>((a / std::ldexp(1.0, e) - 1) * 1024);
  return static_cast<std::uint16_t>(sign | ((e + 15) << 10) | fraction);
}

inline double half_value(std::uint16_t bits) {
  const int e = (bits >> 10) & 0x1f;
  const int f = bits & 0x3ff;
  const double sign = (bits & 0x8000) ? -1 : 1;
  if (e == 0x1f) {
    return f ? std::nan("") : sign * std::numeric_limits<double>::infinity();
  }
  if (e == 0) {
    return sign * f * std::ldexp(1.0, -24);
  }
  return sign * (1 + f / 1024.0) * std::ldexp(1.0, e - 15);
}

inline std::uint16_t bfloat16_bits(double v) {
  if (std::isnan(v)) {
    return 0x7fc0;
  }
  const float f = static_cast<float>(v);  // exact: v is a bfloat16 value
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline double bfloat16_value(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

// Reads the element at `p` of dtype d.
inline Ref load(const void* p, DType d) {
  const auto* b = static_cast<const unsigned char*>(p);
  const auto read = [&](auto sample) {
    decltype(sample) value;
    std::memcpy(&value, b, sizeof value);
    return value;
  };
  switch (d) {
    case DType::kBool:
      return Ref::of_int(read(std::uint8_t{}) != 0 ? 1 : 0);
    case DType::kUInt8:
      return Ref::of_int(read(std::uint8_t{}));
    case DType::kInt8:
      return Ref::of_int(read(std::int8_t{}));
    case DType::kInt16:
      return Ref::of_int(read(std::int16_t{}));
    case DType::kInt32:
      return Ref::of_int(read(std::int32_t{}));
    case DType::kInt64:
      return Ref::of_int(read(std::int64_t{}));
    case DType::kFloat16:
      return Ref::of_complex(half_value(read(std::uint16_t{})));
    case DType::kBFloat16:
      return Ref::of_complex(bfloat16_value(read(std::uint16_t{})));
    case DType::kFloat32:
      return Ref::of_complex(read(float{}));
    case DType::kFloat64:
      return Ref::of_complex(read(double{}));
    case DType::kComplex32: {
      std::uint16_t parts[2];
      std::memcpy(parts, b, sizeof parts);
      return Ref::of_complex(half_value(parts[0]), half_value(parts[1]));
    }
    case DType::kComplex64: {
      float parts[2];
      std::memcpy(parts, b, sizeof parts);
      return Ref::of_complex(parts[0], parts[1]);
    }
    case DType::kComplex128: {
      double parts[2];
      std::memcpy(parts, b, sizeof parts);
      return Ref::of_complex(parts[0], parts[1]);
    }
  }
  return {};
}

// Writes v (a value of dtype d) at p.
inline void store(void* p, DType d, const Ref& v) {
  auto* b = static_cast<unsigned char*>(p);
  const auto write = [&](auto value) { std::memcpy(b, &value, sizeof value); };
  switch (d) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
      write(static_cast<std::uint8_t>(v.i));
      return;
    case DType::kInt16:
      write(static_cast<std::int16_t>(v.i));
      return;
    case DType::kInt32:
      write(static_cast<std::int32_t>(v.i));
      return;
    case DType::kInt64:
      write(v.i);
      return;
    case DType::kFloat16:
      write(half_bits(v.re));
      return;
    case DType::kBFloat16:
      write(bfloat16_bits(v.re));
      return;
    case DType::kFloat32:
      write(static_cast<float>(v.re));
      return;
    case DType::kFloat64:
      write(v.re);
      return;
    case DType::kComplex32: {
      const std::uint16_t parts[2] = {half_bits(v.re), half_bits(v.im)};
      write(parts[0]);
      std::memcpy(b + 2, &parts[1], 2);
      return;
    }
    case DType::kComplex64: {
      const float parts[2] = {static_cast<float>(v.re), static_cast<float>(v.im)};
      std::memcpy(b, parts, sizeof parts);
      return;
    }
    case DType::kComplex128: {
      const double parts[2] = {v.re, v.im};
      std::memcpy(b, parts, sizeof parts);
      return;
    }
  }
}

// Whether two elements of dtype d hold the same value (NaN equal to NaN, 0 and -0 apart).
inline bool same(const void* a, const void* b, DType d) {
  const Ref x = load(a, d);
  const Ref y = load(b, d);
  if (x.integral) {
    return x.i == y.i;
  }
  const auto same_double = [](double p, double q) {
    return (std::isnan(p) && std::isnan(q)) || (p == q && std::signbit(p) == std::signbit(q));
  };
  return same_double(x.re, y.re) && same_double(x.im, y.im);
}

// ---- The sum in the compute type ----

// The compute type's arithmetic for common dtype c: `fused` says whether sum + w * x rounds once
// (floating sums on CPUs with FMA, and on GPUs). Values are kept as Refs already rounded to the
// compute type.
struct Compute {
  DType common;
  bool fused;

  bool is_float() const {
    return common == DType::kFloat16 || common == DType::kBFloat16 || common == DType::kFloat32 ||
           common == DType::kComplex32 || common == DType::kComplex64;
  }
  double round(double v) const { return is_float() ? round_float(v) : v; }

  // An element of dtype `common` in the compute type: unchanged (integers kept wrapped).
  Ref product(const Ref& w, const Ref& x) const {
    if (common == DType::kBool) {
      return Ref::of_int(w.i != 0 && x.i != 0 ? 1 : 0);
    }
    if (is_integer(common)) {
      const auto p = static_cast<std::int64_t>(static_cast<std::uint64_t>(w.i) *
                                               static_cast<std::uint64_t>(x.i));
      return Ref::of_int(wrap(p, bits_of(common), true));
    }
    if (is_complex(common)) {
      return Ref::of_complex(round(round(w.re * x.re) - round(w.im * x.im)),
                             round(round(w.re * x.im) + round(w.im * x.re)));
    }
    return Ref::of_complex(round(w.re * x.re));
  }

  Ref add_product(const Ref& s, const Ref& w, const Ref& x) const {
    if (common == DType::kBool) {
      return Ref::of_int(s.i != 0 || (w.i != 0 && x.i != 0) ? 1 : 0);
    }
    if (is_integer(common)) {
      const auto total = static_cast<std::int64_t>(static_cast<std::uint64_t>(s.i) +
                                                   static_cast<std::uint64_t>(product(w, x).i));
      return Ref::of_int(wrap(total, bits_of(common), true));
    }
    if (is_complex(common)) {
      const Ref p = product(w, x);
      return Ref::of_complex(round(s.re + p.re), round(s.im + p.im));
    }
    if (fused) {  // w * x + s rounded once, in the compute type
      return Ref::of_complex(is_float()
                                 ? std::fma(static_cast<float>(w.re), static_cast<float>(x.re),
                                            static_cast<float>(s.re))
                                 : std::fma(w.re, x.re, s.re));
    }
    return Ref::of_complex(round(s.re + round(w.re * x.re)));
  }
};

// A weight in the compute type of `common`.
inline Ref weight_in(const vecadd::Number& w, DType common) {
  if (common == DType::kBool) {
    return Ref::of_int(w.integral != 0 ? 1 : 0);
  }
  if (is_integer(common)) {
    return Ref::of_int(wrap(w.integral, bits_of(common), true));
  }
  const bool single = common != DType::kFloat64 && common != DType::kComplex128;
  return Ref::of_complex(single ? round_float(w.real) : w.real,
                         is_complex(common) ? (single ? round_float(w.imag) : w.imag) : 0);
}

inline bool weight_is_one(const Ref& w, DType common) {
  return is_integer(common) || common == DType::kBool ? w.i == 1 : (w.re == 1 && w.im == 0);
}

// An element read in dtype d, as a term of a sum of common dtype `common`: cast to `common`
// (integers then wrap to their width, kept signed here), or, for a scalar, straight to the
// compute type.
inline Ref term(const Ref& v, DType common, bool straight) {
  if (straight) {
    switch (common) {
      case DType::kFloat16:
      case DType::kBFloat16:
        return cast(v, DType::kFloat32);
      case DType::kComplex32:
        return cast(v, DType::kComplex64);
      default:
        break;
    }
  }
  Ref c = cast(v, common);
  if (is_integer(common)) {
    c.i = wrap(c.i, bits_of(common), true);
  }
  return c;
}

// The value a Number holds in dtype d (a constant input's value).
inline Ref number_value(const vecadd::Number& n, DType d) {
  if (d == DType::kBool || is_integer(d)) {
    return cast(Ref::of_int(n.integral), d);
  }
  return cast(Ref::of_complex(n.real, n.imag), d);
}

// The sum of `terms` (already in the compute type) with `weights`, rounded to `common`, then
// cast to `out`.
inline Ref reference_sum(const std::vector<Ref>& terms, const std::vector<vecadd::Number>& weights,
                         DType common, DType out, bool fused) {
  const Compute compute{common, fused};
  const Ref w0 = weight_in(weights[0], common);
  Ref sum = weight_is_one(w0, common) ? terms[0] : compute.product(w0, terms[0]);
  for (std::size_t k = 1; k < terms.size(); ++k) {
    sum = compute.add_product(sum, weight_in(weights[k], common), terms[k]);
  }
  return cast(cast(sum, common), out);
}

// Values worth converting: integers at and beyond each width's edges, floats that round, 16-bit
// overflow, subnormals, infinities and NaN.
inline std::vector<Ref> interesting_values() {
  std::vector<Ref> values;
  const std::int64_t integers[] = {0,
                                   1,
                                   -1,
                                   2,
                                   7,
                                   127,
                                   128,
                                   -129,
                                   255,
                                   256,
                                   2049,
                                   32767,
                                   -32769,
                                   65505,
                                   2147483647,
                                   2147483653,
                                   -2147483653,
                                   16777217,
                                   9007199254740993,
                                   INT64_MIN,
                                   INT64_MAX};
  for (const std::int64_t v : integers) {
    values.push_back(Ref::of_int(v));
  }
  for (const double v : {0.0,
                         -0.0,
                         0.1,
                         -1.5,
                         2.5,
                         3.75,
                         1e-8,
                         6e-5,
                         65504.0,
                         65519.0,
                         65520.0,
                         1e5,
                         3e9,
                         5000000007.0,
                         -5000000007.0,
                         1e20,
                         3.4e38,
                         1e300,
                         std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity(),
                         std::nan(""),
                         1.0 / 3.0}) {
    values.push_back(Ref::of_complex(v));
  }
  values.push_back(Ref::of_complex(1.5, -2.25));
  values.push_back(Ref::of_complex(-0.0, 0.0));
  values.push_back(Ref::of_complex(0.0, 1.0));
  values.push_back(Ref::of_complex(1.0, std::numeric_limits<double>::infinity()));
  values.push_back(Ref::of_complex(1e-3, 7e4));
  return values;
}

// Bytes of n elements of dtype d holding `values` cast to d, repeated.
inline std::vector<unsigned char> array_of(DType d, const std::vector<Ref>& values, std::size_t n,
                                           std::size_t offset = 0) {
  const std::size_t size = vecadd::dtype_size(d);
  std::vector<unsigned char> bytes(n * size + 16);
  for (std::size_t k = 0; k < n; ++k) {
    store(bytes.data() + k * size, d, cast(values[(k + offset) % values.size()], d));
  }
  return bytes;
}

// Random small values of dtype d (exact in every dtype), for layout tests.
inline std::vector<Ref> random_values(unsigned seed, std::size_t n) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> numbers(-60, 60);
  std::vector<Ref> values;
  for (std::size_t k = 0; k < n; ++k) {
    const int a = numbers(generator);
    const int b = numbers(generator);
    values.push_back(k % 3 == 0 ? Ref::of_int(a) : Ref::of_complex(a * 0.25, b * 0.5));
  }
  return values;
}

// ---- Arrays of any dtype and layout, and whole calls against the reference ----

using Sizes = std::vector<std::int64_t>;

// A strided view of `dtype` elements over its own bytes (`offset` elements in).
struct MixedArray {
  DType dtype = DType::kFloat32;
  Sizes sizes;
  Sizes strides;
  std::int64_t offset = 0;
  std::vector<unsigned char> storage;

  std::size_t element_size() const { return vecadd::dtype_size(dtype); }
  vecadd::Operand operand() const {
    return {static_cast<int>(sizes.size()), sizes.data(), strides.data()};
  }
  const void* data() const { return storage.data() + offset * element_size(); }
  void* data() { return storage.data() + offset * element_size(); }
  std::int64_t count() const {
    std::int64_t product = 1;
    for (const std::int64_t size : sizes) {
      product *= size;
    }
    return product;
  }
};

inline Sizes row_major(const Sizes& sizes) {
  Sizes strides(sizes.size());
  std::int64_t next = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    strides[d] = next;
    next *= sizes[d];
  }
  return strides;
}

// An array of `sizes` (row-major strides when none are given) holding `values` cast to its
// dtype, in storage order from `value_offset` on.
inline MixedArray make_mixed(DType dtype, Sizes sizes, const std::vector<Ref>& values,
                             Sizes strides = {}, std::int64_t offset = 0,
                             std::size_t value_offset = 0) {
  MixedArray array;
  array.dtype = dtype;
  array.strides = strides.empty() ? row_major(sizes) : std::move(strides);
  array.sizes = std::move(sizes);
  array.offset = offset;
  std::int64_t reach = 0;
  for (std::size_t d = 0; d < array.sizes.size(); ++d) {
    reach += (array.sizes[d] - 1) * array.strides[d];
  }
  const auto length = static_cast<std::size_t>(array.count() == 0 ? offset : offset + reach + 1);
  array.storage = array_of(dtype, values, length, value_offset);
  return array;
}

// Byte offset of z's multi-index `index` in `array`, broadcasting as NumPy does.
inline std::int64_t element_at(const MixedArray& array, const Sizes& index) {
  const std::size_t skip = index.size() - array.sizes.size();
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < array.sizes.size(); ++d) {
    if (array.sizes[d] != 1) {
      offset += index[skip + d] * array.strides[d];
    }
  }
  return offset * static_cast<std::int64_t>(array.element_size());
}

// One input of a call: an array, or (array nullptr) a constant of `dtype`.
struct CallInput {
  const MixedArray* array = nullptr;
  DType dtype = DType::kFloat32;
  vecadd::Number weight = vecadd::Number::one();
  vecadd::Number value;
  bool scalar = false;
};

inline CallInput array_input(const MixedArray& array,
                             vecadd::Number weight = vecadd::Number::one()) {
  return {&array, array.dtype, weight, {}, false};
}

inline CallInput constant_input(DType dtype, vecadd::Number value, bool scalar,
                                vecadd::Number weight = vecadd::Number::one()) {
  return {nullptr, dtype, weight, value, scalar};
}

// The library's description of the call, with each array's data at `data[i]` (host or device).
inline std::vector<vecadd::SumInput> sum_inputs(const std::vector<CallInput>& inputs,
                                                const std::vector<const void*>& data) {
  std::vector<vecadd::SumInput> described;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    vecadd::SumInput input;
    input.dtype = inputs[i].dtype;
    input.weight = inputs[i].weight;
    if (inputs[i].array != nullptr) {
      input.data = data[i];
      input.shape = inputs[i].array->operand();
    } else {
      input.value = inputs[i].value;
      input.scalar = inputs[i].scalar;
    }
    described.push_back(input);
  }
  return described;
}

// The number of elements of z that differ from the reference sum of `inputs` (common dtype
// `common`); the first difference is described in `first`.
inline std::int64_t sum_mismatches(const std::vector<CallInput>& inputs, const MixedArray& z,
                                   DType common, bool fused, std::string* first = nullptr) {
  std::vector<vecadd::Number> weights;
  std::vector<Ref> constants(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    weights.push_back(inputs[i].weight);
    if (inputs[i].array == nullptr) {
      constants[i] = term(number_value(inputs[i].value, inputs[i].dtype), common, inputs[i].scalar);
    }
  }
  Sizes index(z.sizes.size(), 0);
  std::int64_t wrong = 0;
  std::vector<Ref> terms(inputs.size());
  unsigned char expected[16];
  for (std::int64_t e = 0; e < z.count(); ++e) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const MixedArray* array = inputs[i].array;
      terms[i] = array == nullptr ? constants[i]
                                  : term(load(static_cast<const unsigned char*>(array->data()) +
                                                  element_at(*array, index),
                                              array->dtype),
                                         common, false);
    }
    store(expected, z.dtype, reference_sum(terms, weights, common, z.dtype, fused));
    const auto* actual = static_cast<const unsigned char*>(z.data()) + element_at(z, index);
    if (!same(actual, expected, z.dtype)) {
      if (wrong == 0 && first != nullptr) {
        const auto text = [](const Ref& v) {
          char buffer[96];
          if (v.integral) {
            std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(v.i));
          } else {
            std::snprintf(buffer, sizeof buffer, "(%a, %a)", v.re, v.im);
          }
          return std::string(buffer);
        };
        *first = "element " + std::to_string(e) + ": got " + text(load(actual, z.dtype)) +
                 ", expected " + text(load(expected, z.dtype));
      }
      ++wrong;
    }
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < z.sizes[d]) {
        break;
      }
      index[d] = 0;
    }
  }
  return wrong;
}

}  // namespace vecadd_test
