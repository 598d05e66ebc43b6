// The shape and memory layout of a new result z = x + alpha * y, decided without torch: the
// broadcast shape, laid out the way torch.add lays out its result, so that a binding
// allocating z with these strides returns what torch.add would.
#pragma once

#include <cstdint>
#include <vector>

#include "vecadd/plan.h"

namespace vecadd {

// The broadcast shape of x and y (trailing dimensions line up, a size-1 or missing
// dimension repeats). std::invalid_argument names both shapes, the innermost dimension that
// fails (counted from the last, -1) and the sizes there when they do not broadcast; its
// message starts with kBroadcastErrorPrefix.
std::vector<std::int64_t> broadcast_shape(const Operand& x, const Operand& y);
inline constexpr const char* kBroadcastErrorPrefix = "vecadd::broadcast_shape: ";

// The broadcast shape of `count` operands, as a chain of additions broadcasts them: the first
// two, then that shape with the third, and so on. The error names each operand once with its
// shape (by `names`, or "input 2" without them), then the innermost dimension that fails and
// the first two operands whose sizes differ there.
std::vector<std::int64_t> broadcast_shape(const Operand* operands, const char* const* names,
                                          int count);

// Element strides for a new z of `shape` (the broadcast shape of x and y): like the inputs
// when they agree (row-major stays row-major, channels-last stays channels-last, a
// transposed pair gives a transposed z), else dimensions ordered by x's strides, then y's
// where x repeats, then row-major.
std::vector<std::int64_t> result_strides(const Operand& x, const Operand& y,
                                         const std::vector<std::int64_t>& shape);

// Dense row-major element strides for `ndim` sizes, written to `strides`, as torch lays out a
// contiguous tensor (a size of 0 counts as 1).
void row_major_strides(int ndim, const std::int64_t* sizes, std::int64_t* strides);

// Whether `count` operands share one shape and are each dense row-major (strides of size-1
// dimensions aside): their sum's z is then dense row-major of that shape, with nothing to work
// out (most calls).
bool is_one_dense_shape(const Operand* operands, int count);

// The same for `count` operands as a chain of additions lays its result out: the layout of the
// first two's sum, then of that sum plus the third, and so on (one operand: as x + x).
std::vector<std::int64_t> result_strides(const Operand* operands, int count,
                                         const std::vector<std::int64_t>& shape);

}  // namespace vecadd
