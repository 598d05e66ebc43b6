// vecadd: weighted sums z = w_0 * x_0 + ... (z = x + alpha * y the common one) over plain host
// arrays, with no PyTorch in sight.
//
// This header (with vecadd/plan.h, which it includes) is the public C++ interface of the
// kernel library (CMake target vecadd::vecadd): the planner and the CPU entry points. The
// CUDA entry points live in vecadd/cuda.h (target vecadd::cuda), a library per CUDA major.
// The Plan overloads take any shapes, strides and broadcasts:
//
//   const vecadd::Plan plan = vecadd::plan_add(x, x_shape, y, y_shape, z, z_shape);
//   vecadd::add_cpu(x, y, z, plan, alpha);  // host arrays, on every core
//   const vecadd::Plan sum = vecadd::plan_add_n(inputs, shapes, n, z, z_shape);
//   vecadd::add_n_cpu(inputs, weights, z, sum);
#pragma once

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
