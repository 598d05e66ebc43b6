// The CUDA kernel for every sum the specialised kernels do not take (add_cuda.cu says which):
// any dtypes, layouts, constants and out dtype, read as torch's dynamic-casting loops read
// them. One kernel per compute type (and index width), not per pair of dtypes: each element is
// loaded by a switch on its input's dtype into an integer or a complex double, cast to the
// common dtype and to the compute type in registers, and z is stored by a switch on its dtype.
#include <algorithm>
#include <cstdint>

#include "element_math.h"
#include "launch.cuh"
#include "outer_loop.h"
#include "strided_index.cuh"
#include "sum_call.h"
#include "sum_cuda.h"

namespace vecadd::detail {
namespace {

constexpr int kCapacity = 8;  // inputs of one launch; a longer sum runs in launches of 8
constexpr int kThreads = 128;
constexpr int kUnroll = 4;

// One launch's inputs, each an array (element sizes by dtype) or a constant in the compute type.
template <class K>
struct DynamicInputs {
  const char* data[kCapacity];  // nullptr: constants[i]
  K weights[kCapacity];
  K constants[kCapacity];
  DType dtypes[kCapacity];
  int count;
  DType common;
  DType out;         // z's dtype
  bool first_plain;  // input 0's weight is one: the sum starts at input 0 itself
};

// Compute-type partial sums of a sum of more than kCapacity inputs (indexed by the launch's
// linear index): the first launch writes them, the middle ones read and write, the last reads.
template <class K>
struct PartialSums {
  K* sums = nullptr;
  bool read = false;
  bool write = false;
};

// Any element, widened: an integer (bool, integers) or a complex double (floating and complex
// dtypes, which a double holds exactly). Casting from it gives what casting from the element's
// own value type gives (a float read as a double rounds to float16 as it would from float).
struct AnyValue {
  bool integral;
  std::int64_t i;
  Complex<double> c;
};

__device__ __forceinline__ AnyValue load_any(DType dtype, const char* element) {
  const auto as = [element](auto sample) {
    return *reinterpret_cast<const decltype(sample)*>(element);
  };
  switch (dtype) {
    case DType::kBool:
      return {true, as(bool{}) ? 1 : 0, {}};
    case DType::kUInt8:
      return {true, as(std::uint8_t{}), {}};
    case DType::kInt8:
      return {true, as(std::int8_t{}), {}};
    case DType::kInt16:
      return {true, as(std::int16_t{}), {}};
    case DType::kInt32:
      return {true, as(std::int32_t{}), {}};
    case DType::kInt64:
      return {true, as(std::int64_t{}), {}};
    case DType::kFloat16:
      return {false, 0, {ElementMath<float16>::load(as(float16{})), 0.0}};
    case DType::kBFloat16:
      return {false, 0, {ElementMath<bfloat16>::load(as(bfloat16{})), 0.0}};
    case DType::kFloat32:
      return {false, 0, {as(float{}), 0.0}};
    case DType::kFloat64:
      return {false, 0, {as(double{}), 0.0}};
    case DType::kComplex32: {
      const Complex<float> value = ElementMath<ComplexHalf>::load(as(ComplexHalf{}));
      return {false, 0, {value.re, value.im}};
    }
    case DType::kComplex64: {
      const Complex<float> value = as(Complex<float>{});
      return {false, 0, {value.re, value.im}};
    }
    case DType::kComplex128:
      return {false, 0, as(Complex<double>{})};
  }
  return {true, 0, {}};
}

// An element cast to dtype D, in D's compute type.
template <DType D>
__device__ __forceinline__ compute_of<D> compute_from(const AnyValue& value) {
  return DTypeMath<D>::to_compute(value.integral ? DTypeMath<D>::cast(value.i)
                                                 : DTypeMath<D>::cast(value.c));
}

// An element cast to the common dtype and to its compute type K, for the common dtypes whose
// compute type is K.
template <class K>
__device__ __forceinline__ K cast_to_compute(const AnyValue& value, DType common) {
  if constexpr (std::is_same_v<K, float>) {
    switch (common) {
      case DType::kFloat16:
        return compute_from<DType::kFloat16>(value);
      case DType::kBFloat16:
        return compute_from<DType::kBFloat16>(value);
      default:
        return compute_from<DType::kFloat32>(value);
    }
  } else if constexpr (std::is_same_v<K, Complex<float>>) {
    return common == DType::kComplex32 ? compute_from<DType::kComplex32>(value)
                                       : compute_from<DType::kComplex64>(value);
  } else if constexpr (std::is_same_v<K, std::uint8_t>) {
    return common == DType::kInt8 ? compute_from<DType::kInt8>(value)
                                  : compute_from<DType::kUInt8>(value);
  } else if constexpr (std::is_same_v<K, bool>) {
    return compute_from<DType::kBool>(value);
  } else if constexpr (std::is_same_v<K, std::uint16_t>) {
    return compute_from<DType::kInt16>(value);
  } else if constexpr (std::is_same_v<K, std::uint32_t>) {
    return compute_from<DType::kInt32>(value);
  } else if constexpr (std::is_same_v<K, std::uint64_t>) {
    return compute_from<DType::kInt64>(value);
  } else if constexpr (std::is_same_v<K, double>) {
    return compute_from<DType::kFloat64>(value);
  } else {
    return compute_from<DType::kComplex128>(value);
  }
}

// The element of `dtype` at `element` as a term of a sum of common dtype `common`.
template <class K>
__device__ __forceinline__ K load_term(DType dtype, const char* element, DType common) {
  return cast_to_compute<K>(load_any(dtype, element), common);
}

// A value of dtype C widened, stored as `out` at `element`.
template <class V>
__device__ __forceinline__ void store_as(V value, DType out, char* element) {
  AnyValue any{};
  if constexpr (std::is_integral_v<V>) {
    any = {true, value, {}};
  } else if constexpr (kIsComplexValue<V>) {
    any = {false, 0, {value.re, value.im}};
  } else {
    any = {false, 0, {value, 0.0}};
  }
  switch (out) {
#define VECADD_STORE_CASE(D)                                                  \
  case D:                                                                     \
    *reinterpret_cast<storage_of<D>*>(element) =                              \
        any.integral ? DTypeMath<D>::cast(any.i) : DTypeMath<D>::cast(any.c); \
    return;
    VECADD_STORE_CASE(DType::kBool)
    VECADD_STORE_CASE(DType::kUInt8)
    VECADD_STORE_CASE(DType::kInt8)
    VECADD_STORE_CASE(DType::kInt16)
    VECADD_STORE_CASE(DType::kInt32)
    VECADD_STORE_CASE(DType::kInt64)
    VECADD_STORE_CASE(DType::kFloat16)
    VECADD_STORE_CASE(DType::kBFloat16)
    VECADD_STORE_CASE(DType::kFloat32)
    VECADD_STORE_CASE(DType::kFloat64)
    VECADD_STORE_CASE(DType::kComplex32)
    VECADD_STORE_CASE(DType::kComplex64)
    VECADD_STORE_CASE(DType::kComplex128)
#undef VECADD_STORE_CASE
  }
}

// The sum (in K) rounded to the common dtype C, stored as z's dtype.
template <DType C>
__device__ __forceinline__ void store_rounded(compute_of<C> sum, DType out, char* element) {
  const storage_of<C> rounded = DTypeMath<C>::from_compute(sum);
  if (out == C) {
    *reinterpret_cast<storage_of<C>*>(element) = rounded;
  } else {
    store_as(DTypeMath<C>::widen(rounded), out, element);
  }
}

template <class K>
__device__ __forceinline__ void store_sum(K sum, DType common, DType out, char* element) {
  if constexpr (std::is_same_v<K, float>) {
    switch (common) {
      case DType::kFloat16:
        return store_rounded<DType::kFloat16>(sum, out, element);
      case DType::kBFloat16:
        return store_rounded<DType::kBFloat16>(sum, out, element);
      default:
        return store_rounded<DType::kFloat32>(sum, out, element);
    }
  } else if constexpr (std::is_same_v<K, Complex<float>>) {
    if (common == DType::kComplex32) {
      return store_rounded<DType::kComplex32>(sum, out, element);
    }
    return store_rounded<DType::kComplex64>(sum, out, element);
  } else if constexpr (std::is_same_v<K, std::uint8_t>) {
    if (common == DType::kInt8) {
      return store_rounded<DType::kInt8>(sum, out, element);
    }
    return store_rounded<DType::kUInt8>(sum, out, element);
  } else if constexpr (std::is_same_v<K, bool>) {
    return store_rounded<DType::kBool>(sum, out, element);
  } else if constexpr (std::is_same_v<K, std::uint16_t>) {
    return store_rounded<DType::kInt16>(sum, out, element);
  } else if constexpr (std::is_same_v<K, std::uint32_t>) {
    return store_rounded<DType::kInt32>(sum, out, element);
  } else if constexpr (std::is_same_v<K, std::uint64_t>) {
    return store_rounded<DType::kInt64>(sum, out, element);
  } else if constexpr (std::is_same_v<K, double>) {
    return store_rounded<DType::kFloat64>(sum, out, element);
  } else {
    return store_rounded<DType::kComplex128>(sum, out, element);
  }
}

__device__ __forceinline__ int element_bytes(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
    case DType::kComplex32:
      return 4;
    case DType::kComplex128:
      return 16;
    default:
      return 8;
  }
}

// Where an element of a launch lies in each operand. Its coordinates along the launch's dimensions
// are found once (the divisions), innermost first; an operand's offset is their dot product with
// its strides, taken where the operand is read, so that the kernel's code does not grow with the
// number of operands (the tuned kernels' indexers compute every operand's offset at once).
template <class Index>
struct DynamicLayout {
  int ndim = 0;
  Index sizes[kMaxDims] = {};  // innermost first
  Divider32 dividers[kMaxDims];
  Index strides[kCapacity + 1][kMaxDims] = {};  // operand, dimension innermost first

  // `operands` of dims' operands, by their numbers there (z last).
  static DynamicLayout of(const Dimensions& dims, const int* operands) {
    DynamicLayout layout;
    layout.ndim = dims.ndim;
    for (int i = 0; i < dims.ndim; ++i) {
      const int d = dims.ndim - 1 - i;
      layout.sizes[i] = static_cast<Index>(dims.sizes[d]);
      if constexpr (sizeof(Index) == 4) {
        layout.dividers[i] = Divider32::of(static_cast<std::uint32_t>(dims.sizes[d]));
      }
      for (int o = 0; o <= kCapacity; ++o) {
        layout.strides[o][i] = static_cast<Index>(dims.stride(operands[o], d));
      }
    }
    return layout;
  }

  __device__ __forceinline__ void coordinates(Index linear, Index* coordinate) const {
#pragma unroll
    for (int i = 0; i < kMaxDims; ++i) {
      coordinate[i] = 0;
      if (i < ndim) {
        // The outermost coordinate is what is left: no division for it.
        if constexpr (sizeof(Index) == 4) {
          const std::uint32_t rest = static_cast<std::uint32_t>(linear);
          const std::uint32_t quotient = i == ndim - 1 ? 0 : dividers[i].divide(rest);
          coordinate[i] = static_cast<Index>(rest - quotient * dividers[i].divisor);
          linear = static_cast<Index>(quotient);
        } else {
          coordinate[i] = i == ndim - 1 ? linear : linear % sizes[i];
          linear = i == ndim - 1 ? 0 : linear / sizes[i];
        }
      }
    }
  }

  __device__ __forceinline__ std::int64_t offset(const Index* coordinate, int operand) const {
    Index offset = 0;
#pragma unroll
    for (int i = 0; i < kMaxDims; ++i) {
      if (i < ndim) {
        offset += coordinate[i] * strides[operand][i];
      }
    }
    return offset;
  }
};

// Each block takes kThreads * kUnroll consecutive elements, each thread kUnroll of them a
// block-width apart (each access a warp-wide sweep), one after the other: one copy of the
// conversions per kernel keeps the library small (unrolled, they made each kernel ~60 KB).
template <class K, class Index>
__global__ void __launch_bounds__(kThreads)
    sum_dynamic_kernel(DynamicInputs<K> in, char* z, DynamicLayout<Index> layout, Index count,
                       PartialSums<K> partial, Release release) {
  begin_kernel(release);
  const Index first = static_cast<Index>(blockIdx.x) * (kThreads * kUnroll) + threadIdx.x;
  const int z_bytes = element_bytes(in.out);
#pragma unroll 1
  for (int u = 0; u < kUnroll; ++u) {
    const Index e = first + u * kThreads;
    if (e >= count) {
      break;
    }
    Index coordinate[kMaxDims];
    layout.coordinates(e, coordinate);
    K sum = partial.read ? partial.sums[e] : K{};
    for (int i = 0; i < in.count; ++i) {
      const K term = in.data[i] == nullptr
                         ? in.constants[i]
                         : load_term<K>(in.dtypes[i],
                                        in.data[i] + layout.offset(coordinate, i) *
                                                         element_bytes(in.dtypes[i]),
                                        in.common);
      sum = i > 0 || partial.read ? add_product(sum, in.weights[i], term)
            : in.first_plain      ? term
                                  : product(in.weights[i], term);
    }
    if (partial.write) {
      partial.sums[e] = sum;
    } else {
      store_sum(sum, in.common, in.out, z + layout.offset(coordinate, kCapacity) * z_bytes);
    }
  }
  end_kernel(release);
}

cudaError_t settled(cudaError_t launched) {
  const cudaError_t last = cudaGetLastError();
  return launched != cudaSuccess ? launched : last;
}

template <DType C>
cudaError_t run(const Sum& sum, const Plan& plan, cudaStream_t stream) {
  using K = compute_of<C>;
  const int n = sum.count;
  // The whole call's bytes (every array once), for the launch order's size rules.
  std::int64_t element_bytes_total = static_cast<std::int64_t>(dtype_size(sum.z.dtype));
  for (int i = 0; i < n; ++i) {
    if (sum.inputs[i].data != nullptr) {
      element_bytes_total += static_cast<std::int64_t>(dtype_size(sum.inputs[i].dtype));
    }
  }
  const std::int64_t count = plan.launch.count();
  const std::int64_t bytes = element_bytes_total * count;
  K* partial_sums = nullptr;
  if (n > kCapacity) {
    const cudaError_t allocated =
        cudaMallocAsync(&partial_sums, static_cast<std::size_t>(count) * sizeof(K), stream);
    if (allocated != cudaSuccess) {
      return settled(allocated);
    }
  }
  const bool narrow = plan.index_width == IndexWidth::k32;
  const cudaError_t status =
      for_each_outer_index(plan.outer, cudaSuccess, [&](const std::int64_t* offsets) {
        for (int start = 0; start < n; start += kCapacity) {
          DynamicInputs<K> in{};
          int operands[kCapacity + 1] = {};
          in.count = std::min(kCapacity, n - start);
          in.common = C;
          in.out = sum.z.dtype;
          in.first_plain = weight_is_one<C>(sum.inputs[0].weight);
          for (int i = 0; i < in.count; ++i) {
            const SumInput& input = sum.inputs[start + i];
            operands[i] = start + i;
            in.dtypes[i] = input.dtype;
            in.weights[i] = weight_in<C>(input.weight);
            if (input.data == nullptr) {
              in.constants[i] = constant_in<C>(input).template as<K>();
            }
            in.data[i] =
                input.data == nullptr
                    ? nullptr
                    : static_cast<const char*>(input.data) +
                          offsets[start + i] * static_cast<std::int64_t>(dtype_size(input.dtype));
          }
          operands[kCapacity] = plan.inputs;
          char* z = static_cast<char*>(sum.z.data) +
                    offsets[plan.inputs] * static_cast<std::int64_t>(dtype_size(sum.z.dtype));
          const PartialSums<K> partial{partial_sums, start > 0, start + in.count < n};
          const std::int64_t blocks = (count + kThreads * kUnroll - 1) / (kThreads * kUnroll);
          const LaunchOrder order = small_block_order(bytes, previous_kernel(stream));
          cudaError_t launched;
          if (narrow) {
            launched = launch_kernel<sum_dynamic_kernel<K, std::int32_t>>(
                static_cast<unsigned>(blocks), kThreads, stream, order, in, z,
                DynamicLayout<std::int32_t>::of(plan.launch, operands),
                static_cast<std::int32_t>(count), partial);
          } else {
            launched = launch_kernel<sum_dynamic_kernel<K, std::int64_t>>(
                static_cast<unsigned>(blocks), kThreads, stream, order, in, z,
                DynamicLayout<std::int64_t>::of(plan.launch, operands), count, partial);
          }
          const cudaError_t settled_status = settled(launched);
          if (settled_status != cudaSuccess) {
            return settled_status;
          }
        }
        return cudaSuccess;
      });
  if (partial_sums != nullptr) {
    const cudaError_t freed = cudaFreeAsync(partial_sums, stream);
    if (status == cudaSuccess && freed != cudaSuccess) {
      return settled(freed);
    }
  }
  return status;
}

}  // namespace

cudaError_t sum_dynamic(const Sum& sum, const Plan& plan, cudaStream_t stream) {
  cudaError_t status = cudaErrorInvalidValue;
  visit_dtype(sum.common, [&](auto tag) { status = run<decltype(tag)::value>(sum, plan, stream); });
  return status;
}

}  // namespace vecadd::detail
