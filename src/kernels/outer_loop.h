// The host loop over a plan's outer dimensions (those beyond what one launch walks), shared
// by the CPU and CUDA runners.
#pragma once

#include <cstdint>

#include "vecadd/plan.h"

namespace vecadd::detail {

// Calls run(x_offset, y_offset, z_offset) for each index of the outer dimensions, with the
// element offsets of that index; once with zeros when there are none. Stops at, and
// returns, the first result of run that is not `ok`.
template <class Result, class Run>
Result for_each_outer_index(const OuterDimensions& outer, Result ok, Run&& run) {
  std::int64_t coordinate[kMaxPlanDims - kMaxDims] = {};
  std::int64_t x = 0;
  std::int64_t y = 0;
  std::int64_t z = 0;
  while (true) {
    const Result result = run(x, y, z);
    if (!(result == ok)) {
      return result;
    }
    int d = outer.ndim - 1;
    for (; d >= 0; --d) {
      x += outer.x_strides[d];
      y += outer.y_strides[d];
      z += outer.z_strides[d];
      if (++coordinate[d] < outer.sizes[d]) {
        break;
      }
      x -= outer.x_strides[d] * outer.sizes[d];
      y -= outer.y_strides[d] * outer.sizes[d];
      z -= outer.z_strides[d] * outer.sizes[d];
      coordinate[d] = 0;
    }
    if (d < 0) {
      return ok;
    }
  }
}

}  // namespace vecadd::detail
