// CPU entry points of the kernel library: plain loops the compiler vectorizes, and for the
// 16-bit floats AVX2/F16C conversions where the CPU has them; plans run on the caller's
// parallel-for.
#include <algorithm>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define VECADD_X86_SIMD 1
#else
#define VECADD_X86_SIMD 0
#endif

#include "element_math.h"
#include "outer_loop.h"
#include "vecadd/vecadd.h"

namespace vecadd {
namespace {

template <std::int64_t kStep>
using Step = std::integral_constant<std::int64_t, kStep>;

// n elements along one dimension. Steps are std::int64_t or a Step constant; with constant
// unit and zero steps the compiler vectorizes the loop.
template <class T, class XStep, class YStep, class ZStep>
void add_run(const T* x, const T* y, T* z, std::int64_t n, XStep x_step, YStep y_step, ZStep z_step,
             typename detail::ElementMath<T>::compute_type alpha) {
  for (std::int64_t i = 0; i < n; ++i) {
    z[i * z_step] = detail::add_scaled(x[i * x_step], y[i * y_step], alpha);
  }
}

template <class T>
constexpr bool kIsHalfFloat = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

#if VECADD_X86_SIMD
// The portable conversions run at ~3 ns per element; these take eight at a time.
bool has_avx2_f16c() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return supported;
}

__attribute__((target("avx2,f16c"))) inline __m256 load8(const float16* source) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(source)));
}

__attribute__((target("avx2,f16c"))) inline void store8(float16* target, __m256 values) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(target),
                   _mm256_cvtps_ph(values, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

__attribute__((target("avx2,f16c"))) inline __m256 load8(const bfloat16* source) {
  const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16));
}

// Round to nearest even as float_to_bfloat16_bits does; NaN stays a quiet NaN.
__attribute__((target("avx2,f16c"))) inline void store8(bfloat16* target, __m256 values) {
  const __m256i bits = _mm256_castps_si256(values);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd)), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)),
                                            _mm256_set1_epi32(0x7f800000));
  const __m256i halves = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
  // Pack the eight 32-bit lanes (each below 2^16) to 16 bits, in order.
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(halves, halves), 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(target), _mm256_castsi256_si128(packed));
}

// The whole groups of eight of a unit-step run; kXRepeats / kYRepeats: that operand is one
// element repeated. Multiply, then add, as the portable loop does. Returns the count done.
template <bool kXRepeats, bool kYRepeats, class T>
__attribute__((target("avx2,f16c"))) std::int64_t add_run_avx2(const T* x, const T* y, T* z,
                                                               std::int64_t n, float alpha) {
  using Math = detail::ElementMath<T>;
  const __m256 scale = _mm256_set1_ps(alpha);
  const __m256 x_repeated = _mm256_set1_ps(kXRepeats ? Math::load(*x) : 0.0f);
  const __m256 y_repeated = _mm256_set1_ps(kYRepeats ? Math::load(*y) : 0.0f);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x_values = kXRepeats ? x_repeated : load8(x + i);
    const __m256 y_values = kYRepeats ? y_repeated : load8(y + i);
    store8(z + i, _mm256_add_ps(x_values, _mm256_mul_ps(scale, y_values)));
  }
  return i;
}
#endif

// A run along contiguous z with x and y contiguous or repeating one element.
template <bool kXRepeats, bool kYRepeats, class T>
void add_unit_run(const T* x, const T* y, T* z, std::int64_t n,
                  typename detail::ElementMath<T>::compute_type alpha) {
  std::int64_t done = 0;
#if VECADD_X86_SIMD
  if constexpr (kIsHalfFloat<T>) {
    if (has_avx2_f16c()) {
      done = add_run_avx2<kXRepeats, kYRepeats>(x, y, z, n, alpha);
    }
  }
#endif
  add_run(kXRepeats ? x : x + done, kYRepeats ? y : y + done, z + done, n - done,
          Step<kXRepeats ? 0 : 1>{}, Step<kYRepeats ? 0 : 1>{}, Step<1>{}, alpha);
}

// A strided layout on the calling thread: the innermost dimension as a run, the outer ones
// advanced as an odometer.
template <class T>
void strided_serial(const T* x, const T* y, T* z, const StridedLayout& layout,
                    typename detail::ElementMath<T>::compute_type scale) {
  const std::int64_t count = element_count(layout);
  if (count == 0) {
    return;
  }
  const int inner = layout.ndim - 1;
  const std::int64_t run = layout.ndim == 0 ? 1 : layout.sizes[inner];
  const std::int64_t x_step = layout.ndim == 0 ? 0 : layout.x_strides[inner];
  const std::int64_t y_step = layout.ndim == 0 ? 0 : layout.y_strides[inner];
  const std::int64_t z_step = layout.ndim == 0 ? 0 : layout.z_strides[inner];
  const bool dense_rows = z_step == 1 && x_step == 1 && y_step == 1;
  const bool y_repeats = z_step == 1 && x_step == 1 && y_step == 0;  // (rows, 1) broadcasts
  const bool x_repeats = z_step == 1 && x_step == 0 && y_step == 1;
  std::int64_t coordinate[kMaxDims] = {};
  detail::ElementOffsets<std::int64_t> base;
  for (std::int64_t done = 0; done < count; done += run) {
    const T* x_row = x + base.x;
    const T* y_row = y + base.y;
    T* z_row = z + base.z;
    if (dense_rows) {
      add_unit_run<false, false>(x_row, y_row, z_row, run, scale);
    } else if (y_repeats) {
      add_unit_run<false, true>(x_row, y_row, z_row, run, scale);
    } else if (x_repeats) {
      add_unit_run<true, false>(x_row, y_row, z_row, run, scale);
    } else {
      add_run(x_row, y_row, z_row, run, x_step, y_step, z_step, scale);
    }
    for (int d = inner - 1; d >= 0; --d) {
      base.x += layout.x_strides[d];
      base.y += layout.y_strides[d];
      base.z += layout.z_strides[d];
      if (++coordinate[d] < layout.sizes[d]) {
        break;
      }
      base.x -= layout.x_strides[d] * layout.sizes[d];
      base.y -= layout.y_strides[d] * layout.sizes[d];
      base.z -= layout.z_strides[d] * layout.sizes[d];
      coordinate[d] = 0;
    }
  }
}

// Elements per range that a thread takes at least: below this, threads cost more than they save.
constexpr std::int64_t kGrainSize = 32768;

// A strided layout over the caller's threads. They split the outermost dimension into slabs
// of whole rows; when it is too short to keep every thread busy, they split the outer two
// dimensions together instead, and a thread's range then runs as one slab per index of the
// outermost dimension it touches.
template <class T>
void strided_parallel(const T* x, const T* y, T* z, const StridedLayout& layout,
                      typename detail::ElementMath<T>::compute_type scale,
                      const ParallelFor& parallel) {
  if (layout.ndim == 0) {
    strided_serial(x, y, z, layout, scale);
    return;
  }
  const bool split_two = layout.ndim >= 2 && layout.sizes[0] < 4 * parallel.threads;
  const std::int64_t second = split_two ? layout.sizes[1] : 1;
  const std::int64_t units = layout.sizes[0] * second;
  const std::int64_t grain =
      std::max<std::int64_t>(1, kGrainSize / (element_count(layout) / units));
  parallel.run(units, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t unit = begin; unit < end;) {
      const std::int64_t outer = unit / second;
      const std::int64_t inner = unit % second;
      const std::int64_t take = split_two ? std::min(end - unit, second - inner) : end - unit;
      StridedLayout slab = layout;
      std::int64_t x_start = outer * layout.x_strides[0];
      std::int64_t y_start = outer * layout.y_strides[0];
      std::int64_t z_start = outer * layout.z_strides[0];
      if (split_two) {  // drop the outermost dimension: the slab is part of one index of it
        slab.ndim = layout.ndim - 1;
        for (int d = 0; d < slab.ndim; ++d) {
          slab.sizes[d] = layout.sizes[d + 1];
          slab.x_strides[d] = layout.x_strides[d + 1];
          slab.y_strides[d] = layout.y_strides[d + 1];
          slab.z_strides[d] = layout.z_strides[d + 1];
        }
        x_start += inner * layout.x_strides[1];
        y_start += inner * layout.y_strides[1];
        z_start += inner * layout.z_strides[1];
      }
      slab.sizes[0] = take;
      strided_serial(x + x_start, y + y_start, z + z_start, slab, scale);
      unit += take;
    }
  });
}

}  // namespace

template <class T>
void add_cpu(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha) {
  add_unit_run<false, false>(x, y, z, n, detail::scale_of<T>(alpha));
}

template <class T>
void add_strided_cpu(const T* x, const T* y, T* z, const StridedLayout& layout, alpha_t<T> alpha) {
  strided_serial(x, y, z, layout, detail::scale_of<T>(alpha));
}

template <class T>
void add_cpu(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
             const ParallelFor& parallel) {
  const auto scale = detail::scale_of<T>(alpha);
  if (plan.kernel == Kernel::kNothing) {
    return;
  }
  if (plan.kernel == Kernel::kContiguous) {
    parallel.run(plan.count, kGrainSize, [&](std::int64_t begin, std::int64_t end) {
      add_unit_run<false, false>(x + begin, y + begin, z + begin, end - begin, scale);
    });
    return;
  }
  // Rows and strided layouts alike: the strided loop takes unit-step rows its fast way.
  detail::for_each_outer_index(
      plan.outer, true, [&](std::int64_t xo, std::int64_t yo, std::int64_t zo) {
        strided_parallel(x + xo, y + yo, z + zo, plan.layout, scale, parallel);
        return true;
      });
}

#define VECADD_INSTANTIATE_CPU(T)                                                             \
  template void add_cpu<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>);                 \
  template void add_strided_cpu<T>(const T*, const T*, T*, const StridedLayout&, alpha_t<T>); \
  template void add_cpu<T>(const T*, const T*, T*, const Plan&, alpha_t<T>, const ParallelFor&);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CPU)
#undef VECADD_INSTANTIATE_CPU

}  // namespace vecadd
