// vecadd: weighted sums z = w_0 * x_0 + ... (z = x + alpha * y the common one) over plain host
// arrays, with no PyTorch in sight.
//
// This header (with vecadd/plan.h, which it includes) is the public C++ interface of the
// kernel library (CMake target vecadd::vecadd): the planner and the CPU entry points. The
// CUDA entry points live in vecadd/cuda.h (target vecadd::cuda), a library per CUDA major.
// A call describes its operands once, each array in its own dtype, and runs on any shapes,
// strides and broadcasts:
//
//   const vecadd::SumInput inputs[] = {
//       {x, x_shape, vecadd::DType::kFloat32, vecadd::Number::one()},
//       {y, y_shape, vecadd::DType::kBFloat16, vecadd::Number::of_real(alpha)}};
//   const vecadd::Sum sum{inputs, 2, {z, z_shape, vecadd::DType::kFloat32},
//                         vecadd::DType::kFloat32};
//   vecadd::sum_cpu(sum, vecadd::plan_sum(sum));  // host arrays, on every core
//
// The typed entry points below (add_cpu, add_n_cpu: every operand of one element type) are
// the older interface, kept as thin wrappers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vecadd/config.h"
#include "vecadd/plan.h"

namespace vecadd {

// Storage-only 16-bit floats with the IEEE binary16 / bfloat16 bit layouts: the same types
// with or without CUDA headers, so that every library of one vecadd shares one ABI (CUDA
// code passes __half / __nv_bfloat16 arrays through a reinterpret_cast). Arithmetic
// converts to float and rounds once.
struct float16 {
  std::uint16_t bits;
};
struct bfloat16 {
  std::uint16_t bits;
};

// ---- Sums over operands of their own dtypes (sum_cpu here, sum_cuda in vecadd/cuda.h) ----

// Every element type a sum takes: torch.add's dtypes, one enumerator each. Arrays hold them as
// torch stores them: bool one byte (0 or 1), integers two's complement, float16 and bfloat16 as
// above, complex numbers as (real, imaginary) pairs of float16, float or double.
enum class DType : std::uint8_t {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex32,
  kComplex64,
  kComplex128,
};
inline constexpr int kDTypeCount = 13;

// Bytes of one element of `dtype`; 0 for a value outside the enumeration.
std::size_t dtype_size(DType dtype);

// The dtype whose values a sum of `common` is computed in: float32 for float16 and bfloat16,
// complex64 for complex32 (each rounds once, when stored); the dtype itself otherwise.
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

// "float32", "complex64": the dtype as torch names it after "torch." ("unknown" outside the
// enumeration).
const char* dtype_name(DType dtype);

// A number exactly as every dtype needs it: `integral` for bool and integer dtypes (0 or 1 for
// bool), `real` and `imag` for floating and complex ones. A weight is read in the sum's compute
// type (below): `integral` for a bool or integer common dtype (bool: nonzero is true), `real`
// (and `imag`) otherwise. A constant input's value is read in its own dtype.
struct Number {
  std::int64_t integral = 0;
  double real = 0.0;
  double imag = 0.0;

  static constexpr Number of_integer(std::int64_t value) {
    return {value, static_cast<double>(value), 0.0};
  }
  // For floating and complex sums only: `integral` stays 0.
  static constexpr Number of_real(double real, double imag = 0.0) { return {0, real, imag}; }
  static constexpr Number one() { return of_integer(1); }
};

// One element of `dtype` at `element` (host memory) as a Number, as a constant input takes it.
Number number_at(const void* element, DType dtype);

// One input of a sum: an array of `dtype` elements laid out as `shape` says, or, with `data`
// nullptr, a constant `value` of that dtype (0-dim: it broadcasts everywhere), which the call
// reads once, on the host, whatever the device (a Python number, a 0-dim CPU tensor beside
// CUDA ones).
struct SumInput {
  const void* data = nullptr;
  Operand shape;
  DType dtype = DType::kFloat32;
  Number weight = Number::one();
  Number value;  // the constant, when data is nullptr
  // For a constant: converted straight from `dtype` to the compute type, not rounded to the
  // common dtype first, as torch's CUDA kernels read a Python number or a 0-dim CPU tensor
  // beside CUDA tensors (scalar_value<opmath_t>); its CPU kernels round both through the
  // common dtype, as arrays always are (false).
  bool scalar = false;
};

// The result: an array of `dtype` elements laid out as `shape` says (the inputs' broadcast
// shape). It may be an input itself (in-place) of the same dtype, but must not partly overlap
// one, nor have elements that share memory.
struct SumOutput {
  void* data = nullptr;
  Operand shape;
  DType dtype = DType::kFloat32;
};

// z = sum of inputs[i].weight * inputs[i], the whole sum in `common`'s compute type. Per
// element, as torch.add's TensorIterator computes it:
// - each array element is read in its own dtype and cast to `common` as torch casts (an integer
//   to a float rounds to nearest, a float to an integer truncates, wider integers wrap, a
//   complex number to a real one drops its imaginary part, anything to bool is "not zero";
//   out-of-range float-to-integer casts give what torch's x86-64 CPU kernels give), then to the
//   compute type: float for float16, bfloat16 and float32, double for float64, complex<float>
//   for complex32 and complex64, complex<double> for complex128, the integer itself for
//   integers (wrapping on overflow) and bool for bool (a sum of bools is "or", a weighted term
//   "and");
// - a constant is converted the same way, or straight to the compute type when `scalar`;
// - the weighted sum is taken in input order: the first term is input 0 times its weight (input
//   0 itself when the weight is one), each next term is added as sum + weight * input: on a
//   GPU fused into one rounding, as torch's CUDA kernels do (complex products as torch forms them
//   on each device); on a CPU the product rounded first, as a multiply then an add (ONNX,
//   decomposed programs) do, where torch's CPU kernels fuse it where they vectorize (so with a
//   weight other than one, a term may differ from torch.add's by that rounding);
// - the sum is rounded to `common`, then cast to `z.dtype`.
struct Sum {
  const SumInput* inputs = nullptr;
  int count = 0;
  SumOutput z;
  DType common = DType::kFloat32;
};

// Plans `sum` (vecadd/plan.h): each operand's alignment and vector width by its own element
// size. std::invalid_argument names the input ("input 2", or the name given in `names`) when
// its shape does not broadcast to z's, its dtype is outside the enumeration, or it is a constant
// with dimensions or a scalar with an array.
Plan plan_sum(const Sum& sum, const char* const* names = nullptr);

// Runs `sum` on host arrays over a plan that plan_sum made for it, its ranges spread by
// `parallel`; each input is read once and z written once (an input of another dtype converts a
// block at a time in a buffer the size of the L1 cache; one that z repeats at least four times,
// of 65536 elements at most, a bias, is converted once per call instead). std::invalid_argument
// when the plan does not match the sum or a dtype is outside the enumeration.
void sum_cpu(const Sum& sum, const Plan& plan,
             const ParallelFor& parallel = default_parallel_for());

// The instruction set the CPU kernels run with, as torch names its CPU capabilities: "avx2" on
// x86-64 CPUs that have it (AVX-512 ones too: torch's add runs its AVX2 kernel there, and so do
// these), else "default"; the environment variable VECADD_CPU_CAPABILITY, read once, names
// another ("default", or "avx512" where the CPU has it). "default" elsewhere (aarch64's baseline
// has NEON and FMA).
const char* cpu_capability();

// The type alpha is passed in: float for the 16-bit floats, which compute in float (so alpha
// keeps float's range and is not rounded to 16 bits first), the element type otherwise.
template <class T>
struct AlphaType {
  using type = T;
};
template <>
struct AlphaType<float16> {
  using type = float;
};
template <>
struct AlphaType<bfloat16> {
  using type = float;
};
template <class T>
using alpha_t = typename AlphaType<T>::type;

// z = sum of weights[i] * inputs[i] over a plan that plan_add_n made for these arrays (inputs
// in the same order), its ranges spread by `parallel`. Any number of inputs, each read once,
// z written once; 16-bit floats compute in float and round once, integers wrap around on
// overflow. z may be an input itself (in-place), but must not partly overlap one.
template <class T>
void add_n_cpu(const T* const* inputs, const alpha_t<T>* weights, T* z, const Plan& plan,
               const ParallelFor& parallel = default_parallel_for());

// z = x + alpha * y: the two-input case, over a plan that plan_add made for these arrays.
template <class T>
void add_cpu(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
             const ParallelFor& parallel = default_parallel_for());

// z[i] = x[i] + alpha * y[i] for i in [0, n), contiguous arrays, on the calling thread.
template <class T>
void add_cpu(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha);

// The six element types every entry point is instantiated for.
#define VECADD_FOR_EACH_ELEMENT_TYPE(MACRO) \
  MACRO(::vecadd::float16)                  \
  MACRO(::vecadd::bfloat16)                 \
  MACRO(float)                              \
  MACRO(double)                             \
  MACRO(std::int32_t)                       \
  MACRO(std::int64_t)

#define VECADD_DECLARE_CPU(T)                                                            \
  extern template void add_n_cpu<T>(const T* const*, const alpha_t<T>*, T*, const Plan&, \
                                    const ParallelFor&);                                 \
  extern template void add_cpu<T>(const T*, const T*, T*, const Plan&, alpha_t<T>,       \
                                  const ParallelFor&);                                   \
  extern template void add_cpu<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_DECLARE_CPU)
#undef VECADD_DECLARE_CPU

}  // namespace vecadd
