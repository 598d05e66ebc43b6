// The host loop over a plan's outer dimensions (those beyond what one launch walks), shared
// by the CPU and CUDA runners.
#pragma once

#include <cstdint>
#include <vector>

#include "vecadd/plan.h"

namespace vecadd::detail {

// Calls run(offsets) for each index of the outer dimensions, with every operand's element
// offset of that index (offsets[o]); once with zeros when there are none. Stops at, and
// returns, the first result of run that is not `ok`.
template <class Result, class Run>
Result for_each_outer_index(const Dimensions& outer, Result ok, Run&& run) {
  if (outer.ndim == 0) {  // the common call: one launch, no offsets to walk
    const std::int64_t zeros[kInlineOperands] = {};
    if (outer.operands <= kInlineOperands) {
      return run(static_cast<const std::int64_t*>(zeros));
    }
  }
  std::vector<std::int64_t> coordinate(static_cast<std::size_t>(outer.ndim), 0);
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(outer.operands), 0);
  while (true) {
    const Result result = run(static_cast<const std::int64_t*>(offsets.data()));
    if (!(result == ok)) {
      return result;
    }
    int d = outer.ndim - 1;
    for (; d >= 0; --d) {
      for (int o = 0; o < outer.operands; ++o) {
        offsets[o] += outer.stride(o, d);
      }
      if (++coordinate[d] < outer.sizes[d]) {
        break;
      }
      for (int o = 0; o < outer.operands; ++o) {
        offsets[o] -= outer.stride(o, d) * outer.sizes[d];
      }
      coordinate[d] = 0;
    }
    if (d < 0) {
      return ok;
    }
  }
}

}  // namespace vecadd::detail
