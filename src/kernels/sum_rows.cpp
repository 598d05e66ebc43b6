// The CPU row kernels: one dimension of a sum, every operand in its own dtype. Compiled once
// per instruction set (VECADD_CPU_ISA: default, avx2 or avx512 on x86-64; CMake passes the
// flags), each build in a namespace of its own; sum_cpu.cpp picks one per process.
//
// A row whose arrays are all in the compute type (same-dtype float32, float64, integers, bool,
// complex64, complex128) runs as one loop over the whole row that reads each input once and
// writes z once. Any other row goes in blocks of kBlock elements: an input that needs a
// conversion is converted into a stack buffer (its dtype to its value type, then the cast to the
// common dtype), the weighted sum runs over the buffers, and z is stored from one. The loops are
// plain C++ that the compiler vectorizes for the instruction set at hand (float16 uses F16C
// where the build has it); -ffp-contract=off keeps every rounding where it is written, and the
// fused multiply-adds torch's kernels use are asked for by name.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "sum_rows.h"

#ifndef VECADD_CPU_ISA
#define VECADD_CPU_ISA default
#endif
#define VECADD_CONCAT2(a, b) a##b
#define VECADD_CONCAT(a, b) VECADD_CONCAT2(a, b)
#define VECADD_ISA_NAMESPACE VECADD_CONCAT(isa_, VECADD_CPU_ISA)
#define VECADD_STRINGIFY2(a) #a
#define VECADD_STRINGIFY(a) VECADD_STRINGIFY2(a)

namespace vecadd::detail {
namespace VECADD_ISA_NAMESPACE {
namespace {

// Whether floating sums fuse weight * x + sum into one rounding. Never on a CPU: each product is
// rounded, so the exported, decomposed and ONNX programs (a multiply, then an add) give the
// kernels' bits on every CPU; torch's own CPU kernels fuse only where they vectorize.
constexpr bool kFused = false;

// Elements per block of a converted row: 4 KiB of the compute type (256 complex doubles to 4096
// bytes), so that its three buffers stay in the L1 cache while the loops over them stay long;
// values of an input's own dtype pass through a buffer of kChunk at most 16-byte elements.
constexpr std::int64_t kBlockBytes = 4096;
constexpr std::int64_t kChunk = 512;
template <class K>
constexpr std::int64_t kBlock = kBlockBytes / static_cast<std::int64_t>(sizeof(K));

// ---- Arithmetic in the compute types (element_math.h's, with the fusing said here) ----

// sum + w * x: torch.add's a + alpha * b.
template <class K>
inline K fused_add_product(K sum, K weight, K x) {
  if constexpr (std::is_same_v<K, float> && kFused) {
    return __builtin_fmaf(weight, x, sum);
  } else if constexpr (std::is_same_v<K, double> && kFused) {
    return __builtin_fma(weight, x, sum);
  } else {
    return detail::add_product(sum, weight, x);  // complex products never fused, as in torch
  }
}

// sum + x, for an integer or bool weight of one (saves a multiply that AVX2 lacks for 64 bits).
template <class K>
inline K add_plain(K sum, K x) {
  if constexpr (std::is_same_v<K, bool>) {
    return sum | x;
  } else {
    using Wide = std::common_type_t<K, unsigned>;
    return static_cast<K>(static_cast<Wide>(sum) + static_cast<Wide>(x));
  }
}

// ---- Where a term's values come from in one block ----

template <class K>
struct Source {
  const K* values = nullptr;  // nullptr: every element is `constant`
  K constant{};
};

// out[k] = first + weight_b * b[k], first being a[k] (or a[k] times its weight): the two-input
// loop, and the last step of longer sums. `out` may be a or b itself (in-place), never a part
// of one: the loops carry nothing from one element to the next.
template <class K, bool kAConstant, bool kBConstant, bool kAScaled, bool kBPlain>
void combine(Source<K> a, K weight_a, Source<K> b, K weight_b, K* out, std::int64_t n) {
  const K* a_values = a.values;
  const K* b_values = b.values;
  const K a_constant = kAScaled ? product(weight_a, a.constant) : a.constant;
#pragma GCC ivdep
  for (std::int64_t k = 0; k < n; ++k) {
    K first = kAConstant ? a_constant : a_values[k];
    if constexpr (kAScaled && !kAConstant) {
      first = product(weight_a, first);
    }
    const K second = kBConstant ? b.constant : b_values[k];
    if constexpr (kBPlain) {
      out[k] = add_plain(first, second);
    } else {
      out[k] = fused_add_product(first, weight_b, second);
    }
  }
}

template <class K, bool kAConstant, bool kBConstant, bool kAScaled>
void combine(Source<K> a, K weight_a, Source<K> b, K weight_b, bool b_plain, K* out,
             std::int64_t n) {
  if constexpr (kIsIntegerCompute<K>) {
    if (b_plain) {
      combine<K, kAConstant, kBConstant, kAScaled, true>(a, weight_a, b, weight_b, out, n);
      return;
    }
  }
  combine<K, kAConstant, kBConstant, kAScaled, false>(a, weight_a, b, weight_b, out, n);
}

template <class K, bool kAScaled>
void combine(Source<K> a, K weight_a, Source<K> b, K weight_b, bool b_plain, K* out,
             std::int64_t n) {
  if (a.values == nullptr && b.values == nullptr) {
    const K first = kAScaled ? product(weight_a, a.constant) : a.constant;
    std::fill_n(out, n, fused_add_product(first, weight_b, b.constant));
  } else if (a.values == nullptr) {
    combine<K, true, false, kAScaled>(a, weight_a, b, weight_b, b_plain, out, n);
  } else if (b.values == nullptr) {
    combine<K, false, true, kAScaled>(a, weight_a, b, weight_b, b_plain, out, n);
  } else {
    combine<K, false, false, kAScaled>(a, weight_a, b, weight_b, b_plain, out, n);
  }
}

template <class K>
void combine(Source<K> a, K weight_a, bool a_scaled, Source<K> b, K weight_b, bool b_plain, K* out,
             std::int64_t n) {
  if (a_scaled) {
    combine<K, true>(a, weight_a, b, weight_b, b_plain, out, n);
  } else {
    combine<K, false>(a, weight_a, b, weight_b, b_plain, out, n);
  }
}

// out[k] = a[k], or a[k] times its weight: a sum's first term.
template <class K>
void first_term(Source<K> a, K weight, bool scaled, K* out, std::int64_t n) {
  if (a.values == nullptr) {
    std::fill_n(out, n, scaled ? product(weight, a.constant) : a.constant);
  } else if (scaled) {
    const K* values = a.values;
#pragma GCC ivdep
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = product(weight, values[k]);
    }
  } else if (out != a.values) {
    std::copy_n(a.values, n, out);
  }
}

// ---- Conversions between memory and the value and compute types ----

// float16 <-> float, eight at a time with F16C where the build has it, four at a time with
// NEON on aarch64. Both round to nearest even and keep a NaN's sign and leading payload bits, as
// ElementMath<float16> does.
void half_to_float(const float16* source, std::int64_t step, float* out, std::int64_t n) {
  std::int64_t k = 0;
#if defined(__F16C__)
  if (step == 1) {
    for (; k + 8 <= n; k += 8) {
      _mm256_storeu_ps(
          out + k, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(source + k))));
    }
  }
#elif defined(__aarch64__)
  if (step == 1) {
    const auto* halves = reinterpret_cast<const float16_t*>(source);
    for (; k + 4 <= n; k += 4) {
      vst1q_f32(out + k, vcvt_f32_f16(vld1_f16(halves + k)));
    }
  }
#endif
  for (; k < n; ++k) {
    out[k] = ElementMath<float16>::load(source[k * step]);
  }
}

void float_to_half(const float* values, std::int64_t n, float16* target, std::int64_t step) {
  std::int64_t k = 0;
#if defined(__F16C__)
  if (step == 1) {
    for (; k + 8 <= n; k += 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(target + k),
                       _mm256_cvtps_ph(_mm256_loadu_ps(values + k),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
  }
#elif defined(__aarch64__)
  if (step == 1) {
    auto* halves = reinterpret_cast<float16_t*>(target);
    for (; k + 4 <= n; k += 4) {
      vst1_f16(halves + k, vcvt_f16_f32(vld1q_f32(values + k)));
    }
  }
#endif
  for (; k < n; ++k) {
    target[k * step] = ElementMath<float16>::store(values[k]);
  }
}

// float -> bfloat16 bits, round to nearest even, NaN kept quiet: branch-free, so it vectorizes
// (the same bits as ElementMath<bfloat16>::store).
inline std::uint16_t bfloat16_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (bits >> 16) | 0x40u;
  return static_cast<std::uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

inline float bfloat16_value(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// Rounds floats to float16 or bfloat16 and back, in place: the cast to a 16-bit common dtype.
template <DType C>
void round_floats(float* values, std::int64_t n) {
  if constexpr (C == DType::kBFloat16) {
#pragma GCC ivdep
    for (std::int64_t k = 0; k < n; ++k) {
      values[k] = bfloat16_value(bfloat16_bits(values[k]));
    }
  } else {
    float16 halves[kChunk];
    for (std::int64_t start = 0; start < n; start += kChunk) {
      const std::int64_t m = std::min(kChunk, n - start);
      float_to_half(values + start, m, halves, 1);
      half_to_float(halves, 1, values + start, m);
    }
  }
}

#if defined(__AVX2__)
// Eight bfloat16 -> float, and float -> bfloat16 bits in the low half of each 32-bit lane (the
// rounding of bfloat16_bits, eight at a time).
inline __m256 bfloat16x8_to_float(__m128i bits) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

inline __m256i float_to_bfloat16x8(__m256 values) {
  const __m256i bits = _mm256_castps_si256(values);
  const __m256i high = _mm256_srli_epi32(bits, 16);
  const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
  const __m256i quiet_nan = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
  const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)),
                                            _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
}
#endif

// z = x + w * y over float16 or bfloat16 arrays (y, when null, the constant `y_value`), in
// registers: the same-dtype two-input call, and x + a Python number, which would otherwise go
// through three buffers.
template <DType C>
void add_halves(const storage_of<C>* x, const storage_of<C>* y, float y_value, float weight,
                storage_of<C>* z, std::int64_t n) {
  std::int64_t k = 0;
  const auto* a = reinterpret_cast<const std::uint16_t*>(x);
  const auto* b = reinterpret_cast<const std::uint16_t*>(y);
  auto* out = reinterpret_cast<std::uint16_t*>(z);
  if constexpr (C == DType::kFloat16) {
#if defined(__F16C__)
    const __m256 scale = _mm256_set1_ps(weight);
    const __m256 constant = _mm256_set1_ps(y_value);
    for (; k + 8 <= n; k += 8) {
      const __m256 first =
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k)));
      const __m256 second =
          b == nullptr ? constant
                       : _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + k),
                       _mm256_cvtps_ph(_mm256_fmadd_ps(scale, second, first),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
#elif defined(__aarch64__)
    const float32x4_t scale = vdupq_n_f32(weight);
    const float32x4_t constant = vdupq_n_f32(y_value);
    const auto* first_halves = reinterpret_cast<const float16_t*>(x);
    const auto* second_halves = reinterpret_cast<const float16_t*>(y);
    auto* out_halves = reinterpret_cast<float16_t*>(z);
    for (; k + 4 <= n; k += 4) {
      const float32x4_t first = vcvt_f32_f16(vld1_f16(first_halves + k));
      const float32x4_t second =
          b == nullptr ? constant : vcvt_f32_f16(vld1_f16(second_halves + k));
      vst1_f16(out_halves + k, vcvt_f16_f32(vfmaq_f32(first, scale, second)));
    }
#endif
    for (; k < n; ++k) {
      const float second = b == nullptr ? y_value : ElementMath<float16>::load(y[k]);
      z[k] = ElementMath<float16>::store(
          fused_add_product(ElementMath<float16>::load(x[k]), weight, second));
    }
  } else {
#if defined(__AVX2__)
    const __m256 scale = _mm256_set1_ps(weight);
    const __m256 constant = _mm256_set1_ps(y_value);
    for (; k + 16 <= n; k += 16) {
      const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k));
      const __m256 first_low = bfloat16x8_to_float(_mm256_castsi256_si128(first));
      const __m256 first_high = bfloat16x8_to_float(_mm256_extracti128_si256(first, 1));
      __m256 second_low = constant;
      __m256 second_high = constant;
      if (b != nullptr) {
        const __m256i second = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k));
        second_low = bfloat16x8_to_float(_mm256_castsi256_si128(second));
        second_high = bfloat16x8_to_float(_mm256_extracti128_si256(second, 1));
      }
      const __m256i low = float_to_bfloat16x8(_mm256_fmadd_ps(scale, second_low, first_low));
      const __m256i high = float_to_bfloat16x8(_mm256_fmadd_ps(scale, second_high, first_high));
      // Pack the sixteen 32-bit lanes (each below 2^16) to 16 bits, in order.
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k),
                          _mm256_permute4x64_epi64(_mm256_packus_epi32(low, high), 0xd8));
    }
#endif
#pragma GCC ivdep
    for (; k < n; ++k) {
      const float second = b == nullptr ? y_value : bfloat16_value(b[k]);
      out[k] = bfloat16_bits(fused_add_product(bfloat16_value(a[k]), weight, second));
    }
  }
}

// Memory of dtype D (`step` elements apart) -> its value type.
template <DType D>
[[gnu::noinline]] void widen(const char* memory, std::int64_t step, std::int64_t n,
                             void* out_values) {
  using Storage = storage_of<D>;
  using Value = value_of<D>;
  auto* out = static_cast<Value*>(out_values);
  const auto* source = reinterpret_cast<const Storage*>(memory);
  if constexpr (D == DType::kFloat16) {
    half_to_float(source, step, out, n);
  } else if constexpr (D == DType::kComplex32) {
    if (step == 1) {
      half_to_float(reinterpret_cast<const float16*>(source), 1, reinterpret_cast<float*>(out),
                    2 * n);
    } else {
      for (std::int64_t k = 0; k < n; ++k) {
        out[k] = DTypeMath<D>::widen(source[k * step]);
      }
    }
  } else if constexpr (D == DType::kBFloat16) {
    const auto* bits = reinterpret_cast<const std::uint16_t*>(source);
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = bfloat16_value(bits[k * step]);
    }
  } else if (step == 1) {
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = DTypeMath<D>::widen(source[k]);
    }
  } else {
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = DTypeMath<D>::widen(source[k * step]);
    }
  }
}

// Value type V -> common dtype C (as torch casts) -> C's compute type.
template <class V, DType C>
[[gnu::noinline]] void narrow(const void* in_values, std::int64_t n, compute_of<C>* out) {
  const auto* in = static_cast<const V*>(in_values);
  if constexpr (C == DType::kFloat16 || C == DType::kBFloat16) {
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = float_from(real_part(in[k]));
    }
    round_floats<C>(out, n);
  } else if constexpr (C == DType::kComplex32) {
    auto* parts = reinterpret_cast<float*>(out);
    for (std::int64_t k = 0; k < n; ++k) {
      if constexpr (kIsComplexValue<V>) {
        out[k] = {float_from(in[k].re), float_from(in[k].im)};
      } else {
        out[k] = {float_from(in[k]), 0.0f};
      }
    }
    round_floats<DType::kFloat16>(parts, 2 * n);
  } else {
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = DTypeMath<C>::to_compute(DTypeMath<C>::cast(in[k]));
    }
  }
}

// Compute type of C -> C's memory (`step` elements apart), rounded.
template <DType C>
[[gnu::noinline]] void store(const compute_of<C>* values, std::int64_t n, char* memory,
                             std::int64_t step) {
  auto* target = reinterpret_cast<storage_of<C>*>(memory);
  if constexpr (C == DType::kFloat16) {
    float_to_half(values, n, target, step);
  } else if constexpr (C == DType::kComplex32) {
    if (step == 1) {
      float_to_half(reinterpret_cast<const float*>(values), 2 * n,
                    reinterpret_cast<float16*>(target), 1);
    } else {
      for (std::int64_t k = 0; k < n; ++k) {
        target[k * step] = DTypeMath<C>::from_compute(values[k]);
      }
    }
  } else if constexpr (C == DType::kBFloat16) {
    auto* bits = reinterpret_cast<std::uint16_t*>(target);
    for (std::int64_t k = 0; k < n; ++k) {
      bits[k * step] = bfloat16_bits(values[k]);
    }
  } else if (step == 1) {
#pragma GCC ivdep
    for (std::int64_t k = 0; k < n; ++k) {
      target[k] = DTypeMath<C>::from_compute(values[k]);
    }
  } else {
    for (std::int64_t k = 0; k < n; ++k) {
      target[k * step] = DTypeMath<C>::from_compute(values[k]);
    }
  }
}

// Compute type of C -> rounded to C -> C's value type (the sum on its way to another dtype).
template <DType C>
[[gnu::noinline]] void round_to_value(const compute_of<C>* values, std::int64_t n,
                                      value_of<C>* out) {
  if constexpr (C == DType::kFloat16 || C == DType::kBFloat16 || C == DType::kComplex32) {
    std::copy_n(values, n, out);
    round_floats<C == DType::kBFloat16 ? DType::kBFloat16 : DType::kFloat16>(
        reinterpret_cast<float*>(out), C == DType::kComplex32 ? 2 * n : n);
  } else {
    for (std::int64_t k = 0; k < n; ++k) {
      out[k] = DTypeMath<C>::widen(DTypeMath<C>::from_compute(values[k]));
    }
  }
}

// ---- Which conversion each dtype takes, as tables indexed by dtype ----

using WidenFn = void (*)(const char*, std::int64_t, std::int64_t, void*);

constexpr WidenFn kWiden[kDTypeCount] = {
    widen<DType::kBool>,      widen<DType::kUInt8>,     widen<DType::kInt8>,
    widen<DType::kInt16>,     widen<DType::kInt32>,     widen<DType::kInt64>,
    widen<DType::kFloat16>,   widen<DType::kBFloat16>,  widen<DType::kFloat32>,
    widen<DType::kFloat64>,   widen<DType::kComplex32>, widen<DType::kComplex64>,
    widen<DType::kComplex128>};

// The value types, numbered: the index of a dtype's narrow function.
enum ValueKind : int {
  kInt16Value,
  kInt32Value,
  kInt64Value,
  kFloatValue,
  kDoubleValue,
  kCFloatValue,
  kCDoubleValue
};

constexpr int kValueKind[kDTypeCount] = {
    kInt16Value, kInt16Value, kInt16Value,  kInt16Value,  kInt32Value,  kInt64Value,  kFloatValue,
    kFloatValue, kFloatValue, kDoubleValue, kCFloatValue, kCFloatValue, kCDoubleValue};

template <DType C>
using NarrowFn = void (*)(const void*, std::int64_t, compute_of<C>*);

template <DType C>
constexpr NarrowFn<C> kNarrow[7] = {
    narrow<std::int16_t, C>, narrow<std::int32_t, C>,   narrow<std::int64_t, C>,   narrow<float, C>,
    narrow<double, C>,       narrow<Complex<float>, C>, narrow<Complex<double>, C>};

// Dtypes whose memory is their compute type bit for bit: same-dtype arrays of these are read
// and written in place.
template <DType C>
inline constexpr bool kInPlace =
    sizeof(storage_of<C>) == sizeof(compute_of<C>) && C != DType::kFloat16 && C != DType::kBFloat16;

// Casts whose value type is the compute type of the common dtype unchanged (bfloat16 read into
// float32, uint8 into int16, complex32 into complex64): the widened values are the terms.
template <DType C>
constexpr bool narrow_is_identity(int value) {
  switch (C) {
    case DType::kInt16:
      return value == kInt16Value;
    case DType::kInt32:
      return value == kInt32Value;
    case DType::kInt64:
      return value == kInt64Value;
    case DType::kFloat32:
      return value == kFloatValue;
    case DType::kFloat64:
      return value == kDoubleValue;
    case DType::kComplex64:
      return value == kCFloatValue;
    case DType::kComplex128:
      return value == kCDoubleValue;
    default:
      return false;
  }
}

// ---- A row ----

template <DType C>
class RowRunner {
 public:
  using K = compute_of<C>;

  RowRunner(const RowSum& sum, std::int64_t* base, const std::int64_t* steps)
      : sum_(sum), base_(base), steps_(steps) {}

  // Whether every input array is read in place (the compute type, unit steps).
  bool inputs_in_place() const {
    for (int i = 0; i < sum_.count; ++i) {
      const RowOperand& input = sum_.inputs[i];
      if (input.data != nullptr && steps_[i] != 0 &&
          (!kInPlace<C> || input.dtype != C || steps_[i] != 1)) {
        return false;
      }
    }
    return true;
  }

  // Whether z is written in place (the compute type, unit steps).
  bool z_in_place() const { return kInPlace<C> && sum_.z.dtype == C && steps_[sum_.count] == 1; }

  // Input i's terms for elements [start, start + m): in place, a constant, or converted into
  // `buffer`.
  Source<K> source(int i, std::int64_t start, std::int64_t m, K* buffer) {
    const RowOperand& input = sum_.inputs[i];
    if (input.data == nullptr) {
      return {nullptr, input.constant.as<K>()};
    }
    const std::int64_t step = steps_[i];
    const char* first = input.data + (base_[i] + start * step) * input.element_size;
    if (step == 0) {  // one element along the row: converted once
      K value;
      convert(input.dtype, first, 0, 1, &value);
      return {nullptr, value};
    }
    if (kInPlace<C> && input.dtype == C && step == 1) {
      return {reinterpret_cast<const K*>(first), K{}};
    }
    convert(input.dtype, first, step, m, buffer);
    return {buffer, K{}};
  }

  // Elements [start, start + m) of z from the compute-type sums in `values`.
  void store_z(const K* values, std::int64_t start, std::int64_t m) {
    const RowOperand& z = sum_.z;
    const std::int64_t step = steps_[sum_.count];
    char* first = z.data + (base_[sum_.count] + start * step) * z.element_size;
    if (z.dtype == C) {
      store<C>(values, m, first, step);
      return;
    }
    // Another dtype (out= casting): rounded to C, then cast as torch casts, kChunk at a time.
    alignas(64) value_of<C> rounded[kChunk];
    alignas(64) unsigned char cast_values[kChunk * 16];
    for (std::int64_t done = 0; done < m; done += kChunk) {
      const std::int64_t part = std::min(kChunk, m - done);
      round_to_value<C>(values + done, part, rounded);
      visit_dtype(z.dtype, [&](auto tag) {
        constexpr DType kO = decltype(tag)::value;
        auto* cast = reinterpret_cast<compute_of<kO>*>(cast_values);
        narrow<value_of<C>, kO>(rounded, part, cast);
        store<kO>(cast, part, first + done * step * z.element_size, step);
      });
    }
  }

  // Whether the row is the same-dtype two-input call of a 16-bit float (x + w * y, unit steps, y
  // an array or a constant), which add_halves_in_registers runs.
  bool halves_in_registers() const {
    if constexpr (C == DType::kFloat16 || C == DType::kBFloat16) {
      if (sum_.count != 2) {
        return false;
      }
      const RowOperand& x = sum_.inputs[0];
      const RowOperand& y = sum_.inputs[1];
      const bool y_constant = y.data == nullptr;
      return x.weight_is_one && x.data != nullptr && x.dtype == C && sum_.z.dtype == C &&
             (y_constant || (y.dtype == C && steps_[1] == 1)) && steps_[0] == 1 && steps_[2] == 1;
    }
    return false;
  }

  void add_halves_in_registers(std::int64_t n) {
    if constexpr (C == DType::kFloat16 || C == DType::kBFloat16) {
      using Storage = storage_of<C>;
      const RowOperand& x = sum_.inputs[0];
      const RowOperand& y = sum_.inputs[1];
      add_halves<C>(
          reinterpret_cast<const Storage*>(x.data) + base_[0],
          y.data == nullptr ? nullptr : reinterpret_cast<const Storage*>(y.data) + base_[1],
          y.constant.as<float>(), y.weight.as<float>(),
          reinterpret_cast<Storage*>(sum_.z.data) + base_[2], n);
    } else {
      static_cast<void>(n);
    }
  }

  // `rows` rows of n elements, the next row `row_steps` elements on (base_ moves along); how
  // a row runs is decided once.
  void run(std::int64_t n, std::int64_t rows, const std::int64_t* row_steps) {
    const int operands = sum_.count + 1;
    const auto each_row = [&](auto&& run_one) {
      for (std::int64_t r = 0; r < rows; ++r) {
        if (r > 0) {
          for (int o = 0; o < operands; ++o) {
            base_[o] += row_steps[o];
          }
        }
        run_one();
      }
    };
    if (halves_in_registers()) {
      each_row([&] { add_halves_in_registers(n); });
    } else if (sum_.count <= 2 && z_in_place() && inputs_in_place()) {
      each_row([&] { run_in_place(n); });
    } else {
      each_row([&] { run_in_blocks(n); });
    }
  }

 private:
  // One or two inputs and z in the compute type, unit steps: one loop over the row, no buffers
  // (and so a small stack frame: a row of a broadcast costs ~30 instructions besides its loop).
  void run_in_place(std::int64_t n) {
    const RowOperand& x0 = sum_.inputs[0];
    K* out = reinterpret_cast<K*>(sum_.z.data) + base_[sum_.count];
    const Source<K> a = source(0, 0, n, nullptr);
    if (sum_.count == 1) {
      first_term(a, x0.weight.as<K>(), !x0.weight_is_one, out, n);
      return;
    }
    const RowOperand& x1 = sum_.inputs[1];
    combine(a, x0.weight.as<K>(), !x0.weight_is_one, source(1, 0, n, nullptr), x1.weight.as<K>(),
            x1.weight_is_one, out, n);
  }

  // Any row: blocks of kBlock<K> elements, inputs converted into buffers where they need it, z
  // written in place or stored from the sums.
  [[gnu::noinline]] void run_in_blocks(std::int64_t n) {
    const int count = sum_.count;
    const bool z_direct = z_in_place();
    alignas(64) K first_buffer[kBlock<K>];
    alignas(64) K second_buffer[kBlock<K>];
    alignas(64) K sums[kBlock<K>];
    const RowOperand& x0 = sum_.inputs[0];
    const K weight0 = x0.weight.as<K>();
    for (std::int64_t start = 0; start < n; start += kBlock<K>) {
      const std::int64_t m = std::min(kBlock<K>, n - start);
      K* out = z_direct ? reinterpret_cast<K*>(sum_.z.data) + base_[count] + start : sums;
      const Source<K> a = source(0, start, m, first_buffer);
      if (count == 1) {
        first_term(a, weight0, !x0.weight_is_one, out, m);
      } else {
        Source<K> sum = a;
        bool scaled = !x0.weight_is_one;
        K weight = weight0;
        // Inputs 1 .. count - 2 add into the sums; the last is combined into `out`.
        if (count > 2) {
          first_term(a, weight0, scaled, sums, m);
          for (int i = 1; i < count - 1; ++i) {
            const RowOperand& input = sum_.inputs[i];
            const Source<K> b = source(i, start, m, second_buffer);
            combine({sums, K{}}, K{}, false, b, input.weight.as<K>(), input.weight_is_one, sums, m);
          }
          sum = {sums, K{}};
          scaled = false;
          weight = K{};
        }
        const RowOperand& last = sum_.inputs[count - 1];
        const Source<K> b = source(count - 1, start, m, second_buffer);
        combine(sum, weight, scaled, b, last.weight.as<K>(), last.weight_is_one, out, m);
      }
      if (!z_direct) {
        store_z(out, start, m);
      }
    }
  }

  // n elements of dtype `from`, `step` apart, into C's compute type.
  void convert(DType from, const char* memory, std::int64_t step, std::int64_t n, K* out) {
    const int from_index = static_cast<int>(from);
    if (from == C) {
      // Same dtype, not in place (a 16-bit float, or a stride): its value type is K, or its
      // storage is.
      if constexpr (kInPlace<C>) {
        const auto* source = reinterpret_cast<const storage_of<C>*>(memory);
        for (std::int64_t k = 0; k < n; ++k) {
          out[k] = DTypeMath<C>::to_compute(source[k * step]);
        }
      } else {
        kWiden[from_index](memory, step, n, out);
      }
      return;
    }
    const int value = kValueKind[from_index];
    if (narrow_is_identity<C>(value)) {
      kWiden[from_index](memory, step, n, out);
      return;
    }
    alignas(64) unsigned char values[kChunk * 16];
    for (std::int64_t done = 0; done < n; done += kChunk) {
      const std::int64_t part = std::min(kChunk, n - done);
      kWiden[from_index](memory + done * step * static_cast<std::int64_t>(dtype_size(from)), step,
                         part, values);
      kNarrow<C>[value](values, part, out + done);
    }
  }

  const RowSum& sum_;
  std::int64_t* base_;  // each operand's offset of the row being summed
  const std::int64_t* steps_;
};

template <DType C>
void sum_row(const RowSum& sum, const std::int64_t* base, const std::int64_t* steps, std::int64_t n,
             std::int64_t rows, const std::int64_t* row_steps) {
  if (rows == 1) {  // the common call: base stays as it is
    RowRunner<C>(sum, const_cast<std::int64_t*>(base), steps).run(n, 1, row_steps);
    return;
  }
  OperandArray<std::int64_t> offsets(sum.count + 1);
  std::copy_n(base, sum.count + 1, offsets.data());
  RowRunner<C>(sum, offsets.data(), steps).run(n, rows, row_steps);
}

}  // namespace
}  // namespace VECADD_ISA_NAMESPACE

CpuKernels VECADD_CONCAT(cpu_kernels_, VECADD_CPU_ISA)() {
  namespace isa = VECADD_ISA_NAMESPACE;
  return {
      VECADD_STRINGIFY(VECADD_CPU_ISA),
      {isa::sum_row<DType::kBool>, isa::sum_row<DType::kUInt8>, isa::sum_row<DType::kInt8>,
       isa::sum_row<DType::kInt16>, isa::sum_row<DType::kInt32>, isa::sum_row<DType::kInt64>,
       isa::sum_row<DType::kFloat16>, isa::sum_row<DType::kBFloat16>, isa::sum_row<DType::kFloat32>,
       isa::sum_row<DType::kFloat64>, isa::sum_row<DType::kComplex32>,
       isa::sum_row<DType::kComplex64>, isa::sum_row<DType::kComplex128>}};
}

}  // namespace vecadd::detail
