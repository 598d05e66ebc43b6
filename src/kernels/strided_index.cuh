// Where the linear index of an element of a strided call lands in x, y and z. With 32-bit
// indices, each division by a dimension size becomes a multiply-high, an add and a shift.
#pragma once

#include <cstdint>

#include "element_math.h"
#include "vecadd/vecadd.h"

namespace vecadd::detail {

// n / divisor for n < 2^31 as (umulhi(n, magic) + n) >> shift, after Granlund and
// Montgomery, "Division by invariant integers using multiplication" (PLDI 1994).
struct Divider32 {
  std::uint32_t divisor = 1;
  std::uint32_t magic = 1;
  std::uint32_t shift = 0;

  static Divider32 of(std::uint32_t divisor) {
    Divider32 result;
    result.divisor = divisor;
    while ((std::uint64_t{1} << result.shift) < divisor) {
      ++result.shift;
    }
    // 2^32 * (2^shift - divisor) / divisor + 1: below 2^32 because 2^shift < 2 * divisor.
    const std::uint64_t excess = (std::uint64_t{1} << result.shift) - divisor;
    result.magic = static_cast<std::uint32_t>((excess << 32) / divisor + 1);
    return result;
  }

  VECADD_HOST_DEVICE std::uint32_t divide(std::uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t high = __umulhi(n, magic);
#else
    const auto high = static_cast<std::uint32_t>((std::uint64_t{n} * magic) >> 32);
#endif
    return (high + n) >> shift;
  }
};

// A strided layout whose every index and offset fits in 31 bits, with its sizes as dividers.
struct StridedIndexer32 {
  using Index = std::int32_t;
  int ndim = 0;
  Divider32 sizes[kMaxDims];
  Index x_strides[kMaxDims] = {};
  Index y_strides[kMaxDims] = {};
  Index z_strides[kMaxDims] = {};

  static StridedIndexer32 of(const StridedLayout& layout) {
    StridedIndexer32 result;
    result.ndim = layout.ndim;
    for (int d = 0; d < layout.ndim; ++d) {
      result.sizes[d] = Divider32::of(static_cast<std::uint32_t>(layout.sizes[d]));
      result.x_strides[d] = static_cast<Index>(layout.x_strides[d]);
      result.y_strides[d] = static_cast<Index>(layout.y_strides[d]);
      result.z_strides[d] = static_cast<Index>(layout.z_strides[d]);
    }
    return result;
  }

  VECADD_HOST_DEVICE ElementOffsets<Index> offsets(Index linear) const {
    ElementOffsets<Index> offsets;
    auto rest = static_cast<std::uint32_t>(linear);
#pragma unroll
    for (int i = 0; i < kMaxDims; ++i) {
      const int d = ndim - 1 - i;
      if (d < 0) {
        break;
      }
      // The outermost coordinate is what is left: no division for it.
      const std::uint32_t quotient = d == 0 ? 0 : sizes[d].divide(rest);
      const auto coordinate = static_cast<Index>(rest - quotient * sizes[d].divisor);
      rest = quotient;
      offsets.x += coordinate * x_strides[d];
      offsets.y += coordinate * y_strides[d];
      offsets.z += coordinate * z_strides[d];
    }
    return offsets;
  }
};

// Any strided layout, with 64-bit indices and plain divisions.
struct StridedIndexer64 {
  using Index = std::int64_t;
  StridedLayout layout;

  static StridedIndexer64 of(const StridedLayout& layout) { return StridedIndexer64{layout}; }

  VECADD_HOST_DEVICE ElementOffsets<Index> offsets(Index linear) const {
    return offsets_of<Index>(linear, layout);
  }
};

}  // namespace vecadd::detail
