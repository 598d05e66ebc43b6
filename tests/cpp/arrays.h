// Host arrays with a shape and strides for the kernel library's tests, and the references
// they are checked against: z = x + alpha * y, or a weighted sum of n inputs, element by
// element, in the obvious loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "vecadd/plan.h"

namespace vecadd_test {

// A strided view over its own storage; `storage` may hold more than the view reaches.
template <class T>
struct Array {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::vector<T> storage;

  vecadd::Operand operand() const {
    return {static_cast<int>(sizes.size()), sizes.data(), strides.data()};
  }
  const T* data() const { return storage.data() + offset; }
  T* data() { return storage.data() + offset; }
};

inline std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> strides(sizes.size());
  std::int64_t next = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    strides[d] = next;
    next *= sizes[d];
  }
  return strides;
}

// Strides of `ndim` dimensions of size 2, each stepping over a gap (powers of 3, innermost
// 1), so that no two dimensions can merge.
inline std::vector<std::int64_t> unmergeable_strides(int ndim) {
  std::vector<std::int64_t> strides(static_cast<std::size_t>(ndim));
  std::int64_t next = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    strides[static_cast<std::size_t>(d)] = next;
    next *= 3;
  }
  return strides;
}

inline std::int64_t reach(const std::vector<std::int64_t>& sizes,
                          const std::vector<std::int64_t>& strides) {
  std::int64_t farthest = 0;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    farthest += (sizes[d] - 1) * strides[d];
  }
  return farthest;
}

// An array of `sizes` with the given strides (row-major when empty), small random values.
template <class T>
Array<T> make_array(std::vector<std::int64_t> sizes, std::vector<std::int64_t> strides = {},
                    std::int64_t offset = 0, unsigned seed = 1) {
  Array<T> array;
  array.strides = strides.empty() ? row_major_strides(sizes) : std::move(strides);
  array.sizes = std::move(sizes);
  array.offset = offset;
  std::int64_t elements = 1;
  for (const std::int64_t size : array.sizes) {
    elements *= size;
  }
  const std::int64_t length =
      elements == 0 ? offset : offset + reach(array.sizes, array.strides) + 1;
  array.storage.resize(static_cast<std::size_t>(length));
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> values(-50, 50);
  for (T& value : array.storage) {
    value = static_cast<T>(values(generator));
  }
  return array;
}

// Element offset of the multi-index `index` (z's rank) in `array`, broadcasting as NumPy does.
template <class T>
std::int64_t broadcast_offset(const Array<T>& array, const std::vector<std::int64_t>& index) {
  const std::size_t skip = index.size() - array.sizes.size();
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < array.sizes.size(); ++d) {
    if (array.sizes[d] != 1) {
      offset += index[skip + d] * array.strides[d];
    }
  }
  return offset;
}

// Number of elements of z that differ from x + alpha * y computed one by one.
template <class T>
std::int64_t mismatches(const Array<T>& x, const Array<T>& y, const Array<T>& z, T alpha) {
  std::vector<std::int64_t> index(z.sizes.size(), 0);
  std::int64_t count = 1;
  for (const std::int64_t size : z.sizes) {
    count *= size;
  }
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const T expected = static_cast<T>(x.data()[broadcast_offset(x, index)] +
                                      alpha * y.data()[broadcast_offset(y, index)]);
    wrong += z.data()[broadcast_offset(z, index)] == expected ? 0 : 1;
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < z.sizes[d]) {
        break;
      }
      index[d] = 0;
    }
  }
  return wrong;
}

// Number of elements of z that differ from the sum of weights[i] * inputs[i], computed one by
// one in the order the library adds (exact for the small integers these arrays hold).
template <class T>
std::int64_t sum_mismatches(const std::vector<const Array<T>*>& inputs,
                            const std::vector<T>& weights, const Array<T>& z) {
  std::vector<std::int64_t> index(z.sizes.size(), 0);
  std::int64_t count = 1;
  for (const std::int64_t size : z.sizes) {
    count *= size;
  }
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    T expected = weights[0] * inputs[0]->data()[broadcast_offset(*inputs[0], index)];
    for (std::size_t k = 1; k < inputs.size(); ++k) {
      expected = static_cast<T>(
          expected + weights[k] * inputs[k]->data()[broadcast_offset(*inputs[k], index)]);
    }
    wrong += z.data()[broadcast_offset(z, index)] == expected ? 0 : 1;
    for (std::size_t d = index.size(); d-- > 0;) {
      if (++index[d] < z.sizes[d]) {
        break;
      }
      index[d] = 0;
    }
  }
  return wrong;
}

}  // namespace vecadd_test
