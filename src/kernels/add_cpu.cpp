// CPU entry points of the kernel library: plain loops the compiler vectorizes.
#include <type_traits>

#include "element_math.h"
#include "vecadd/vecadd.h"

namespace vecadd {

template <class T>
void add_cpu(const T* x, const T* y, T* z, std::int64_t n, T alpha) {
  using Math = detail::ElementMath<T>;
  const auto scale = Math::load(alpha);
  for (std::int64_t i = 0; i < n; ++i) {
    z[i] = detail::add_scaled(x[i], y[i], scale);
  }
}

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

}  // namespace

template <class T>
void add_strided_cpu(const T* x, const T* y, T* z, const StridedLayout& layout, T alpha) {
  using Math = detail::ElementMath<T>;
  const auto scale = Math::load(alpha);
  const std::int64_t count = element_count(layout);
  if (count == 0) {
    return;
  }
  // Walk the innermost dimension as a run; advance the outer ones as an odometer.
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
      add_run(x_row, y_row, z_row, run, Step<1>{}, Step<1>{}, Step<1>{}, scale);
    } else if (y_repeats) {
      add_run(x_row, y_row, z_row, run, Step<1>{}, Step<0>{}, Step<1>{}, scale);
    } else if (x_repeats) {
      add_run(x_row, y_row, z_row, run, Step<0>{}, Step<1>{}, Step<1>{}, scale);
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

#define VECADD_INSTANTIATE_CPU(T)                                    \
  template void add_cpu<T>(const T*, const T*, T*, std::int64_t, T); \
  template void add_strided_cpu<T>(const T*, const T*, T*, const StridedLayout&, T);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CPU)
#undef VECADD_INSTANTIATE_CPU

}  // namespace vecadd
