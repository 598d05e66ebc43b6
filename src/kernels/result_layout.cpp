// vecadd/result_layout.h: the shape and strides torch.add would give z, in plain integers.
#include "vecadd/result_layout.h"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace vecadd {
namespace {

using Sizes = std::vector<std::int64_t>;
using Order = std::vector<std::size_t>;

Sizes sizes_of(const Operand& t) {
  return Sizes(t.sizes, t.sizes + t.ndim);
}

// An operand's strides, filling in dense row-major ones when it has none.
Sizes strides_of(const Operand& t) {
  if (t.strides != nullptr) {
    return Sizes(t.strides, t.strides + t.ndim);
  }
  Sizes strides(t.ndim);
  row_major_strides(t.ndim, t.sizes, strides.data());
  return strides;
}

std::string shape_text(const Sizes& sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(sizes[i]);
  }
  return text + "]";
}

Order row_major_order(std::size_t ndim) {
  Order order(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    order[i] = ndim - 1 - i;
  }
  return order;
}

// Whether sizes/strides fill their memory densely with dimensions in `order` (innermost
// first), size-1 dimensions aside; an empty array always does.
bool is_dense_in_order(const Sizes& sizes, const Sizes& strides, const Order& order) {
  if (std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) {
    return true;
  }
  std::int64_t expected = 1;
  for (const std::size_t d : order) {
    if (sizes[d] == 1) {
      continue;
    }
    if (strides[d] != expected) {
      return false;
    }
    expected *= sizes[d];
  }
  return true;
}

// Dimensions by increasing stride, ties kept in row-major order.
Order order_by_stride(const Sizes& strides) {
  Order order = row_major_order(strides.size());
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return strides[a] < strides[b]; });
  return order;
}

// Strides of `t` seen through the broadcast `shape`: 0 where t's size-1 (or missing)
// dimension is repeated.
Sizes broadcast_strides(const Operand& t, const Sizes& shape) {
  const Sizes strides = strides_of(t);
  Sizes result(shape.size(), 0);
  const std::size_t offset = shape.size() - static_cast<std::size_t>(t.ndim);
  for (std::size_t d = 0; d < strides.size(); ++d) {
    const bool repeated = t.sizes[d] == 1 && shape[offset + d] != 1;
    result[offset + d] = repeated ? 0 : strides[d];
  }
  return result;
}

// The result's dimensions from innermost to outermost, as torch.add orders its output:
// by the strides of x, then of y where x cannot tell (a repeated dimension), equal
// strides settled by size; row-major where neither input decides.
Order result_dimension_order(const Sizes& shape, const Sizes& x_strides, const Sizes& y_strides) {
  Order order = row_major_order(shape.size());
  // 1 if dimension a belongs outside b, -1 if inside, 0 if no input decides.
  const auto compare = [&](std::size_t a, std::size_t b) {
    for (const Sizes* strides : {&x_strides, &y_strides}) {
      const std::int64_t stride_a = (*strides)[a];
      const std::int64_t stride_b = (*strides)[b];
      if (stride_a == 0 || stride_b == 0) {
        continue;
      }
      if (stride_a < stride_b) {
        return -1;
      }
      if (stride_b < stride_a || shape[b] < shape[a]) {
        return 1;
      }
    }
    return 0;
  };
  // Insertion sort that stops at the first decided comparison, so undecided dimensions
  // keep their row-major places.
  for (std::size_t i = 1; i < order.size(); ++i) {
    std::size_t moving = i;
    for (std::size_t j = i; j-- > 0;) {
      const int comparison = compare(order[j], order[moving]);
      if (comparison > 0) {
        std::swap(order[j], order[moving]);
        moving = j;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  return order;
}

// Dense strides for `shape` with dimensions in `order` (innermost first); `skip_empty`
// treats size 0 as 1, as torch's memory formats do.
Sizes dense_strides(const Sizes& shape, const Order& order, bool skip_empty) {
  Sizes strides(shape.size(), 0);
  std::int64_t next = 1;
  for (const std::size_t d : order) {
    strides[d] = next;
    next *= skip_empty ? std::max<std::int64_t>(shape[d], 1) : shape[d];
  }
  return strides;
}

bool same_sizes(const Operand& a, const Operand& b) {
  return a.ndim == b.ndim && std::equal(a.sizes, a.sizes + a.ndim, b.sizes);
}

// Dense row-major, size-1 dimensions aside (no strides given means dense row-major).
bool is_row_major(const Operand& t) {
  if (t.strides == nullptr) {
    return true;
  }
  std::int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.sizes[d] == 0) {
      return true;
    }
    if (t.sizes[d] != 1 && t.strides[d] != expected) {
      return false;
    }
    expected *= t.sizes[d];
  }
  return true;
}

}  // namespace

namespace {

// The size of `t` in dimension -from_end - 1 (its last is 0 from the end); 1 where it has none.
std::int64_t size_from_end(const Sizes& t, std::size_t from_end) {
  return from_end < t.size() ? t[t.size() - 1 - from_end] : 1;
}

// Why `count` operands do not broadcast: each named once with its shape, then the innermost
// dimension that fails (counted from the last, as -1) and the first two operands whose sizes
// there differ, neither of them 1.
[[noreturn]] void throw_broadcast_error(const Operand* operands, const char* const* names,
                                        int count) {
  std::vector<Sizes> shapes;
  std::size_t ndim = 0;
  for (int i = 0; i < count; ++i) {
    shapes.push_back(sizes_of(operands[i]));
    ndim = std::max(ndim, shapes.back().size());
  }
  const auto name = [names](int index) {
    return names ? std::string(names[index]) : "input " + std::to_string(index);
  };
  std::string message = kBroadcastErrorPrefix;
  for (int i = 0; i < count; ++i) {
    message += (i == 0 ? "" : (i + 1 == count ? " and " : ", ")) + name(i) + " of shape " +
               shape_text(shapes[i]);
  }
  message += " cannot be broadcast together";
  bool named = false;
  for (std::size_t from_end = 0; from_end < ndim && !named; ++from_end) {
    int first = -1;
    for (int i = 0; i < count; ++i) {
      const std::int64_t size = size_from_end(shapes[i], from_end);
      if (size == 1) {
        continue;
      }
      if (first < 0) {
        first = i;
      } else if (size != size_from_end(shapes[first], from_end)) {
        message += ": in dimension -" + std::to_string(from_end + 1) + ", " + name(first) +
                   " has " + std::to_string(size_from_end(shapes[first], from_end)) + " and " +
                   name(i) + " has " + std::to_string(size);
        named = true;
        break;
      }
    }
  }
  throw std::invalid_argument(message +
                              "; expected sizes that are equal or 1 in each trailing dimension");
}

}  // namespace

std::vector<std::int64_t> broadcast_shape(const Operand& x, const Operand& y) {
  if (same_sizes(x, y)) {  // the common call, without the general walk's copies
    return sizes_of(x);
  }
  const Sizes x_sizes = sizes_of(x);
  const Sizes y_sizes = sizes_of(y);
  const std::size_t ndim = std::max(x_sizes.size(), y_sizes.size());
  Sizes shape(ndim, 1);
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::int64_t x_size = size_from_end(x_sizes, i);
    const std::int64_t y_size = size_from_end(y_sizes, i);
    if (y_size == 1 || x_size == y_size) {
      shape[ndim - 1 - i] = x_size;
    } else if (x_size == 1) {
      shape[ndim - 1 - i] = y_size;
    } else {
      static const char* const kNames[] = {"x", "y"};
      const Operand pair[] = {x, y};
      throw_broadcast_error(pair, kNames, 2);
    }
  }
  return shape;
}

std::vector<std::int64_t> broadcast_shape(const Operand* operands, const char* const* names,
                                          int count) {
  if (std::all_of(operands + 1, operands + count,
                  [&](const Operand& t) { return same_sizes(t, operands[0]); })) {
    return sizes_of(operands[0]);  // the common call, without a pair's shape per operand
  }
  Sizes shape = sizes_of(operands[0]);
  for (int i = 1; i < count; ++i) {
    const Operand so_far{static_cast<int>(shape.size()), shape.data(), nullptr};
    try {
      shape = broadcast_shape(so_far, operands[i]);
    } catch (const std::invalid_argument&) {
      throw_broadcast_error(operands, names, count);
    }
  }
  return shape;
}

void row_major_strides(int ndim, const std::int64_t* sizes, std::int64_t* strides) {
  std::int64_t step = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    strides[d] = step;
    step *= std::max<std::int64_t>(sizes[d], 1);
  }
}

bool is_one_dense_shape(const Operand* operands, int count) {
  return std::all_of(operands, operands + count, [&](const Operand& t) {
    return same_sizes(t, operands[0]) && is_row_major(t);
  });
}

std::vector<std::int64_t> result_strides(const Operand* operands, int count, const Sizes& shape) {
  if (count == 1) {
    return result_strides(operands[0], operands[0], shape);
  }
  if (is_one_dense_shape(operands, count)) {  // dense row-major, as each pair's sum is
    return strides_of({static_cast<int>(shape.size()), shape.data(), nullptr});
  }
  Sizes sum_shape = broadcast_shape(operands[0], operands[1]);
  Sizes sum_strides = result_strides(operands[0], operands[1], sum_shape);
  for (int i = 2; i < count; ++i) {
    const Operand sum{static_cast<int>(sum_shape.size()), sum_shape.data(), sum_strides.data()};
    Sizes next_shape = broadcast_shape(sum, operands[i]);
    sum_strides = result_strides(sum, operands[i], next_shape);
    sum_shape = std::move(next_shape);
  }
  return sum_strides;
}

std::vector<std::int64_t> result_strides(const Operand& x, const Operand& y, const Sizes& shape) {
  if (same_sizes(x, y) && static_cast<std::size_t>(x.ndim) == shape.size() &&
      std::equal(shape.begin(), shape.end(), x.sizes) && is_row_major(x) && is_row_major(y)) {
    return strides_of({x.ndim, x.sizes, nullptr});  // the common call: dense row-major
  }
  const Order row_major = row_major_order(shape.size());
  const Sizes x_sizes = sizes_of(x);
  const Sizes y_sizes = sizes_of(y);
  if (x_sizes == shape && y_sizes == shape) {
    const Sizes x_strides = strides_of(x);
    const Sizes y_strides = strides_of(y);
    if (is_dense_in_order(shape, x_strides, row_major) &&
        is_dense_in_order(shape, y_strides, row_major)) {
      return dense_strides(shape, row_major, true);
    }
    static const Order kChannelsLast = {1, 3, 2, 0};  // C innermost, then W, H, N
    if (shape.size() == 4 && is_dense_in_order(shape, x_strides, kChannelsLast) &&
        is_dense_in_order(shape, y_strides, kChannelsLast)) {
      return dense_strides(shape, kChannelsLast, true);
    }
    if (x_strides == y_strides && is_dense_in_order(shape, x_strides, order_by_stride(x_strides))) {
      return x_strides;
    }
  }
  const Order order =
      result_dimension_order(shape, broadcast_strides(x, shape), broadcast_strides(y, shape));
  return dense_strides(shape, order, order == row_major);
}

}  // namespace vecadd
