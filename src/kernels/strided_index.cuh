// Where the linear index of an element of a strided call lands in each operand. With 32-bit
// indices, each division by a dimension size becomes a multiply-high, an add and a shift.
#pragma once

#include <cstdint>

#include "element_math.h"
#include "vecadd/plan.h"

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

// Element offsets of one linear index into each of kOperands operands.
template <class Index, int kOperands>
struct OperandOffsets {
  Index of[kOperands];
};

// Dimensions whose every index and offset fits in 31 bits, with their sizes as dividers and
// each of kOperands operands' strides.
template <int kOperands>
struct StridedIndexer32 {
  using Index = std::int32_t;
  int ndim = 0;
  Divider32 sizes[kMaxDims];
  Index strides[kOperands][kMaxDims] = {};

  // `operands` of dims' operands, by their numbers there (z last).
  static StridedIndexer32 of(const Dimensions& dims, const int* operands) {
    StridedIndexer32 result;
    result.ndim = dims.ndim;
    for (int d = 0; d < dims.ndim; ++d) {
      result.sizes[d] = Divider32::of(static_cast<std::uint32_t>(dims.sizes[d]));
      for (int o = 0; o < kOperands; ++o) {
        result.strides[o][d] = static_cast<Index>(dims.stride(operands[o], d));
      }
    }
    return result;
  }

  VECADD_HOST_DEVICE OperandOffsets<Index, kOperands> offsets(Index linear) const {
    OperandOffsets<Index, kOperands> offsets = {};
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
#pragma unroll
      for (int o = 0; o < kOperands; ++o) {
        offsets.of[o] += coordinate * strides[o][d];
      }
    }
    return offsets;
  }
};

// Any dimensions, with 64-bit indices and plain divisions.
template <int kOperands>
struct StridedIndexer64 {
  using Index = std::int64_t;
  int ndim = 0;
  Index sizes[kMaxDims] = {};
  Index strides[kOperands][kMaxDims] = {};

  static StridedIndexer64 of(const Dimensions& dims, const int* operands) {
    StridedIndexer64 result;
    result.ndim = dims.ndim;
    for (int d = 0; d < dims.ndim; ++d) {
      result.sizes[d] = dims.sizes[d];
      for (int o = 0; o < kOperands; ++o) {
        result.strides[o][d] = dims.stride(operands[o], d);
      }
    }
    return result;
  }

  VECADD_HOST_DEVICE OperandOffsets<Index, kOperands> offsets(Index linear) const {
    OperandOffsets<Index, kOperands> offsets = {};
    for (int d = ndim - 1; d >= 0; --d) {
      // The outermost coordinate is what is left; skipping its division saves a divide.
      const Index coordinate = d == 0 ? linear : linear % sizes[d];
      linear /= sizes[d];
#pragma unroll
      for (int o = 0; o < kOperands; ++o) {
        offsets.of[o] += coordinate * strides[o][d];
      }
    }
    return offsets;
  }
};

}  // namespace vecadd::detail
