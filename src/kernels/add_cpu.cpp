// CPU entry points of the kernel library: a weighted sum walks its rows in blocks, each input
// added into a block of compute-type sums by a loop the compiler vectorizes (for the 16-bit
// floats, AVX2/F16C conversions where the CPU has them), then stored once; plans run on the
// caller's parallel-for.
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

template <class T>
using compute_t = typename detail::ElementMath<T>::compute_type;

template <class T>
constexpr bool kIsHalfFloat = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Elements summed together: the sums of a block stay in the L1 cache while every input passes.
constexpr std::int64_t kBlock = 512;

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

// The whole groups of eight of a unit-step block: sum = (first ? 0 : sum) + weight * x, in
// float, multiply then add as the portable loop does. Returns the count done.
template <class T>
__attribute__((target("avx2,f16c"))) std::int64_t add_term_avx2(const T* x, float weight,
                                                                float* sums, std::int64_t n,
                                                                bool first) {
  const __m256 scale = _mm256_set1_ps(weight);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 term = _mm256_mul_ps(scale, load8(x + i));
    _mm256_storeu_ps(sums + i, first ? term : _mm256_add_ps(_mm256_loadu_ps(sums + i), term));
  }
  return i;
}

template <class T>
__attribute__((target("avx2,f16c"))) std::int64_t store_avx2(const float* sums, T* z,
                                                             std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    store8(z + i, _mm256_loadu_ps(sums + i));
  }
  return i;
}
#endif

// sums[i] (= or +=) weight * x[i * step] for i in [0, n): unit and zero steps get loops the
// compiler vectorizes.
template <class T>
void add_term(const T* x, std::int64_t step, compute_t<T> weight, compute_t<T>* sums,
              std::int64_t n, bool first) {
  std::int64_t done = 0;
  if (step == 0) {
    const compute_t<T> term = detail::first_term(*x, weight);
    for (std::int64_t i = 0; i < n; ++i) {
      sums[i] = first ? term : sums[i] + term;
    }
    return;
  }
  if (step == 1) {
#if VECADD_X86_SIMD
    if constexpr (kIsHalfFloat<T>) {
      if (has_avx2_f16c()) {
        done = add_term_avx2(x, weight, sums, n, first);
      }
    }
#endif
    if (first) {
      for (std::int64_t i = done; i < n; ++i) {
        sums[i] = detail::first_term(x[i], weight);
      }
    } else {
      for (std::int64_t i = done; i < n; ++i) {
        sums[i] = detail::next_term(sums[i], x[i], weight);
      }
    }
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    sums[i] = first ? detail::first_term(x[i * step], weight)
                    : detail::next_term(sums[i], x[i * step], weight);
  }
}

template <class T>
void store_sums(const compute_t<T>* sums, T* z, std::int64_t step, std::int64_t n) {
  std::int64_t done = 0;
  if (step == 1) {
#if VECADD_X86_SIMD
    if constexpr (kIsHalfFloat<T>) {
      if (has_avx2_f16c()) {
        done = store_avx2(sums, z, n);
      }
    }
#endif
    for (std::int64_t i = done; i < n; ++i) {
      z[i] = detail::ElementMath<T>::store(sums[i]);
    }
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    z[i * step] = detail::ElementMath<T>::store(sums[i]);
  }
}

// One call's arrays and weights, and each operand's element offset of the slab being walked.
template <class T>
struct Sum {
  const T* const* inputs;
  const compute_t<T>* weights;
  int count;  // inputs
  T* z;
};

// n elements along one dimension, from each operand's `base` offset with its `steps`, in
// blocks: every input's terms, then one store.
template <class T>
void sum_run(const Sum<T>& sum, const std::int64_t* base, const std::int64_t* steps,
             std::int64_t n) {
  compute_t<T> sums[kBlock];
  for (std::int64_t start = 0; start < n; start += kBlock) {
    const std::int64_t m = std::min(kBlock, n - start);
    for (int i = 0; i < sum.count; ++i) {
      add_term(sum.inputs[i] + base[i] + start * steps[i], steps[i], sum.weights[i], sums, m,
               i == 0);
    }
    store_sums(sums, sum.z + base[sum.count] + start * steps[sum.count], steps[sum.count], m);
  }
}

// Dimensions of a slab, with each operand's offset to start from: the innermost dimension as
// runs, the outer ones advanced as an odometer, on the calling thread.
template <class T>
void strided_serial(const Sum<T>& sum, const Dimensions& dims, const std::int64_t* start) {
  const int operands = sum.count + 1;
  const std::int64_t count = dims.count();
  if (count == 0) {
    return;
  }
  const int inner = dims.ndim - 1;
  const std::int64_t run = dims.ndim == 0 ? 1 : dims.sizes[inner];
  PerOperand<std::int64_t> base(operands);
  PerOperand<std::int64_t> steps(operands);
  for (int o = 0; o < operands; ++o) {
    base[o] = start[o];
    steps[o] = dims.ndim > 0 ? dims.stride(o, inner) : 0;
  }
  std::int64_t coordinate[kMaxPlanDims];
  std::fill_n(coordinate, dims.ndim, 0);
  for (std::int64_t done = 0; done < count; done += run) {
    sum_run(sum, base.data(), steps.data(), run);
    for (int d = inner - 1; d >= 0; --d) {
      for (int o = 0; o < operands; ++o) {
        base[o] += dims.stride(o, d);
      }
      if (++coordinate[d] < dims.sizes[d]) {
        break;
      }
      for (int o = 0; o < operands; ++o) {
        base[o] -= dims.stride(o, d) * dims.sizes[d];
      }
      coordinate[d] = 0;
    }
  }
}

// Elements per range that a thread takes at least: below this, threads cost more than they save.
constexpr std::int64_t kGrainSize = 32768;

// Dimensions over the caller's threads. They split the outermost dimension into slabs of whole
// rows; when it is too short to keep every thread busy, they split the outer two dimensions
// together instead, and a thread's range then runs as one slab per index of the outermost
// dimension it touches.
template <class T>
void strided_parallel(const Sum<T>& sum, const Dimensions& dims, const std::int64_t* offsets,
                      const ParallelFor& parallel) {
  // Work for one thread stays on this one, without the parallel-for's cost (small calls).
  if (dims.ndim == 0 || parallel.threads <= 1 || dims.count() <= kGrainSize) {
    strided_serial(sum, dims, offsets);
    return;
  }
  const int operands = sum.count + 1;
  const bool split_two = dims.ndim >= 2 && dims.sizes[0] < 4 * parallel.threads;
  const std::int64_t second = split_two ? dims.sizes[1] : 1;
  const std::int64_t units = dims.sizes[0] * second;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainSize / (dims.count() / units));
  parallel.run(units, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t unit = begin; unit < end;) {
      const std::int64_t outer = unit / second;
      const std::int64_t inner = unit % second;
      const std::int64_t take = split_two ? std::min(end - unit, second - inner) : end - unit;
      // The slab: dims less the outermost dimension when it is part of one index of it.
      const int dropped = split_two ? 1 : 0;
      Dimensions slab;
      slab.hold(operands);
      slab.ndim = dims.ndim - dropped;
      PerOperand<std::int64_t> start(operands);
      for (int d = 0; d < slab.ndim; ++d) {
        slab.sizes[d] = dims.sizes[d + dropped];
      }
      for (int o = 0; o < operands; ++o) {
        for (int d = 0; d < slab.ndim; ++d) {
          slab.set_stride(o, d, dims.stride(o, d + dropped));
        }
        start[o] =
            offsets[o] + outer * dims.stride(o, 0) + (split_two ? inner * dims.stride(o, 1) : 0);
      }
      slab.sizes[0] = take;
      strided_serial(sum, slab, start.data());
      unit += take;
    }
  });
}

}  // namespace

template <class T>
void add_n_cpu(const T* const* inputs, const alpha_t<T>* weights, T* z, const Plan& plan,
               const ParallelFor& parallel) {
  if (plan.kernel == Kernel::kNothing) {
    return;
  }
  PerOperand<compute_t<T>> scales(plan.inputs);
  for (int i = 0; i < plan.inputs; ++i) {
    scales[i] = detail::scale_of<T>(weights[i]);
  }
  const Sum<T> sum{inputs, scales.data(), plan.inputs, z};
  // Every kernel alike: the strided loop takes unit-step rows its fast way.
  detail::for_each_outer_index(plan.outer, true, [&](const std::int64_t* offsets) {
    strided_parallel(sum, plan.launch, offsets, parallel);
    return true;
  });
}

template <class T>
void add_cpu(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
             const ParallelFor& parallel) {
  const T* const inputs[] = {x, y};
  const alpha_t<T> weights[] = {alpha_t<T>(1), alpha};
  add_n_cpu(inputs, weights, z, plan, parallel);
}

template <class T>
void add_cpu(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha) {
  const Operand run{1, &n, nullptr};
  add_cpu(x, y, z, plan_add(x, run, y, run, z, run), alpha, serial_for());
}

#define VECADD_INSTANTIATE_CPU(T)                                                                \
  template void add_n_cpu<T>(const T* const*, const alpha_t<T>*, T*, const Plan&,                \
                             const ParallelFor&);                                                \
  template void add_cpu<T>(const T*, const T*, T*, const Plan&, alpha_t<T>, const ParallelFor&); \
  template void add_cpu<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CPU)
#undef VECADD_INSTANTIATE_CPU

}  // namespace vecadd
