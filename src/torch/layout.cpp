#include "layout.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <string>

#include "messages.h"

namespace vecadd::torch_binding {
namespace {

using c10::SymInt;
using c10::SymIntArrayRef;

// ---- conditions on sizes that torch.compile may not know while tracing ----

// A condition's value, or false when it depends on a size torch.compile cannot know while
// tracing (a data-dependent size), as torch's own shape functions treat it. Older torch
// without guard_or_false decides it outright.
template <class Condition>
auto decide(const Condition& condition, int) -> decltype(condition.guard_or_false("", 0)) {
  return condition.guard_or_false(__FILE__, __LINE__);
}

template <class Condition>
bool decide(const Condition& condition, long) {
  return condition.guard_bool(__FILE__, __LINE__);
}

bool known_equal(const SymInt& a, const SymInt& b) {
  return decide(a.sym_eq(b), 0);
}

bool known_less(const SymInt& a, const SymInt& b) {
  return decide(a.sym_lt(b), 0);
}

bool is_concrete(const SymInt& size) {
  return size.maybe_as_int().has_value();
}

bool known_equal(SymIntArrayRef a, SymIntArrayRef b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!known_equal(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

// ---- sizes in messages ----

std::string number_text(const SymInt& value) {
  if (const auto known = value.maybe_as_int()) {
    return std::to_string(*known);
  }
  return value.toSymNodeImplUnowned()->str();
}

std::string shape_text(SymIntArrayRef sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    text += (i == 0 ? "" : ", ") + number_text(sizes[i]);
  }
  return text + "]";
}

// ---- orders of dimensions ----

// Whether `t` fills its memory densely with its dimensions in `order` (innermost first),
// size-1 dimensions aside; an empty tensor always does.
bool is_dense_in_order(const at::Tensor& t, c10::ArrayRef<std::size_t> order) {
  const SymIntArrayRef sizes = t.sym_sizes();
  const SymIntArrayRef strides = t.sym_strides();
  for (const SymInt& size : sizes) {
    if (known_equal(size, SymInt(0))) {
      return true;
    }
  }
  SymInt expected(1);
  for (const std::size_t d : order) {
    if (known_equal(sizes[d], SymInt(1))) {
      continue;
    }
    if (!known_equal(strides[d], expected)) {
      return false;
    }
    expected = expected * sizes[d];
  }
  return true;
}

std::vector<std::size_t> row_major_order(std::size_t ndim) {
  std::vector<std::size_t> order(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    order[i] = ndim - 1 - i;
  }
  return order;
}

// `t`'s dimensions by increasing stride (an insertion sort: it needs no strict ordering of
// strides that tracing cannot compare).
std::vector<std::size_t> order_by_stride(const at::Tensor& t) {
  const SymIntArrayRef strides = t.sym_strides();
  std::vector<std::size_t> order = row_major_order(strides.size());
  for (std::size_t i = 1; i < order.size(); ++i) {
    for (std::size_t j = i; j > 0 && known_less(strides[order[j]], strides[order[j - 1]]); --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  return order;
}

// Element strides of `t` seen through the broadcast `shape`: 0 where t's size-1 (or
// missing) dimension is repeated.
std::vector<SymInt> broadcast_strides(const at::Tensor& t, SymIntArrayRef shape) {
  const SymIntArrayRef sizes = t.sym_sizes();
  const SymIntArrayRef strides = t.sym_strides();
  std::vector<SymInt> result(shape.size(), SymInt(0));
  const std::size_t offset = shape.size() - sizes.size();
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const bool repeated =
        known_equal(sizes[d], SymInt(1)) && !known_equal(shape[offset + d], SymInt(1));
    result[offset + d] = repeated ? SymInt(0) : strides[d];
  }
  return result;
}

// The result's dimensions from innermost to outermost, in the order torch.add gives its
// output: sorted by the strides of x, then of y where x cannot tell (a repeated
// dimension), equal strides settled by size; row-major where neither input decides.
std::vector<std::size_t> result_dimension_order(SymIntArrayRef shape,
                                                const std::vector<SymInt>& x_strides,
                                                const std::vector<SymInt>& y_strides) {
  std::vector<std::size_t> order = row_major_order(shape.size());
  // 1 if dimension a belongs outside b, -1 if inside, 0 if no input decides.
  const auto compare = [&](std::size_t a, std::size_t b) {
    for (const std::vector<SymInt>* strides : {&x_strides, &y_strides}) {
      const SymInt& stride_a = (*strides)[a];
      const SymInt& stride_b = (*strides)[b];
      if (known_equal(stride_a, SymInt(0)) || known_equal(stride_b, SymInt(0))) {
        continue;
      }
      if (known_less(stride_a, stride_b)) {
        return -1;
      }
      if (known_less(stride_b, stride_a) || known_less(shape[b], shape[a])) {
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

}  // namespace

std::vector<SymInt> broadcast_shape(const at::Tensor& x, const at::Tensor& y) {
  const SymIntArrayRef x_sizes = x.sym_sizes();
  const SymIntArrayRef y_sizes = y.sym_sizes();
  const std::size_t ndim = std::max(x_sizes.size(), y_sizes.size());
  std::vector<SymInt> shape(ndim, SymInt(1));
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::size_t d = ndim - 1 - i;
    const SymInt x_size = i < x_sizes.size() ? x_sizes[x_sizes.size() - 1 - i] : SymInt(1);
    const SymInt y_size = i < y_sizes.size() ? y_sizes[y_sizes.size() - 1 - i] : SymInt(1);
    if (known_equal(y_size, SymInt(1)) || known_equal(x_size, y_size)) {
      shape[d] = x_size;
    } else if (known_equal(x_size, SymInt(1))) {
      shape[d] = y_size;
    } else if (!is_concrete(x_size) || !is_concrete(y_size)) {
      shape[d] = x_size;  // sizes tracing cannot compare: the real kernel checks them
    } else {
      TORCH_CHECK_VALUE(false, kOp, ": x of shape ", shape_text(x_sizes), " and y of shape ",
                        shape_text(y_sizes), " cannot be broadcast together (dimension ",
                        std::to_string(d), " of the result: ", number_text(x_size), " vs ",
                        number_text(y_size),
                        "); expected sizes that are equal or 1 in each trailing dimension");
    }
  }
  return shape;
}

void check_out_shape(const at::Tensor& out, SymIntArrayRef shape) {
  TORCH_CHECK_VALUE(out.sym_sizes() == shape, kOp, ": out has shape ", shape_text(out.sym_sizes()),
                    "; expected ", shape_text(shape),
                    ", the broadcast shape of x and y (vecadd does not resize out)");
}

at::Tensor allocate_result(const at::Tensor& x, const at::Tensor& y, SymIntArrayRef shape) {
  const at::TensorOptions options = x.options();
  const std::vector<std::size_t> row_major = row_major_order(shape.size());
  if (known_equal(x.sym_sizes(), shape) && known_equal(y.sym_sizes(), shape)) {
    if (is_dense_in_order(x, row_major) && is_dense_in_order(y, row_major)) {
      return at::empty_symint(shape, options, at::MemoryFormat::Contiguous);
    }
    static constexpr std::size_t kChannelsLast[] = {1, 3, 2, 0};  // C innermost, then W, H, N
    if (shape.size() == 4 && is_dense_in_order(x, kChannelsLast) &&
        is_dense_in_order(y, kChannelsLast)) {
      return at::empty_symint(shape, options, at::MemoryFormat::ChannelsLast);
    }
    if (known_equal(x.sym_strides(), y.sym_strides()) && is_dense_in_order(x, order_by_stride(x))) {
      return at::empty_strided_symint(shape, x.sym_strides(), options);
    }
  }
  const std::vector<std::size_t> order =
      result_dimension_order(shape, broadcast_strides(x, shape), broadcast_strides(y, shape));
  if (order == row_major) {
    return at::empty_symint(shape, options, at::MemoryFormat::Contiguous);
  }
  std::vector<SymInt> strides(shape.size(), SymInt(0));
  SymInt next(1);
  for (const std::size_t d : order) {
    strides[d] = next;
    next = next * shape[d];
  }
  return at::empty_strided_symint(shape, strides, options);
}

}  // namespace vecadd::torch_binding
