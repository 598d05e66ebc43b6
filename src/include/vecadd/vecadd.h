// vecadd: z = x + alpha * y over plain host arrays, with no PyTorch in sight.
//
// This header (with vecadd/plan.h, which it includes) is the public C++ interface of the
// kernel library (CMake target vecadd::vecadd): the planner and the CPU entry points. The
// CUDA entry points live in vecadd/cuda.h (target vecadd::cuda), a library per CUDA major.
// The Plan overloads take any shapes, strides and broadcasts:
//
//   const vecadd::Plan plan = vecadd::plan_add(x, x_shape, y, y_shape, z, z_shape);
//   vecadd::add_cpu(x, y, z, plan, alpha);  // host arrays, on every core
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

// z[i] = x[i] + alpha * y[i] for i in [0, n). z may be x or y itself (in-place), but must
// not partly overlap either. Half types compute in float and round once; integer types
// wrap around on overflow.
template <class T>
void add_cpu(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha);

// The same over a strided layout; z must not overlap x or y unless it is the same view.
// Both run on the calling thread.
template <class T>
void add_strided_cpu(const T* x, const T* y, T* z, const StridedLayout& layout, alpha_t<T> alpha);

// Runs a plan that plan_add made for these arrays, its ranges spread by `parallel`.
template <class T>
void add_cpu(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
             const ParallelFor& parallel = default_parallel_for());

// The six element types every entry point is instantiated for.
#define VECADD_FOR_EACH_ELEMENT_TYPE(MACRO) \
  MACRO(::vecadd::float16)                  \
  MACRO(::vecadd::bfloat16)                 \
  MACRO(float)                              \
  MACRO(double)                             \
  MACRO(std::int32_t)                       \
  MACRO(std::int64_t)

#define VECADD_DECLARE_CPU(T)                                                           \
  extern template void add_cpu<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>);    \
  extern template void add_strided_cpu<T>(const T*, const T*, T*, const StridedLayout&, \
                                          alpha_t<T>);                                  \
  extern template void add_cpu<T>(const T*, const T*, T*, const Plan&, alpha_t<T>,      \
                                  const ParallelFor&);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_DECLARE_CPU)
#undef VECADD_DECLARE_CPU

}  // namespace vecadd
