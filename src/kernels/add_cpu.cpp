// CPU entry points of the kernel library: plain loops the compiler vectorizes.
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

template <class T>
void add_strided_cpu(const T* x, const T* y, T* z, const StridedLayout& layout, T alpha) {
  using Math = detail::ElementMath<T>;
  const auto scale = Math::load(alpha);
  const std::int64_t count = element_count(layout);
  if (count == 0) {
    return;
  }
  // Walk the innermost dimension as a strided run; advance the outer ones as an odometer.
  const int inner = layout.ndim - 1;
  const std::int64_t run = layout.ndim == 0 ? 1 : layout.sizes[inner];
  const std::int64_t x_step = layout.ndim == 0 ? 0 : layout.x_strides[inner];
  const std::int64_t y_step = layout.ndim == 0 ? 0 : layout.y_strides[inner];
  const std::int64_t z_step = layout.ndim == 0 ? 0 : layout.z_strides[inner];
  std::int64_t coordinate[kMaxDims] = {};
  detail::ElementOffsets<std::int64_t> base;
  for (std::int64_t done = 0; done < count; done += run) {
    for (std::int64_t i = 0; i < run; ++i) {
      z[base.z + i * z_step] =
          detail::add_scaled(x[base.x + i * x_step], y[base.y + i * y_step], scale);
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
