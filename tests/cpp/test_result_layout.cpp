// The shape and strides of a new result (vecadd/result_layout.h): torch.add's layout, no torch.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.h"
#include "vecadd/result_layout.h"

namespace {

using Sizes = std::vector<std::int64_t>;

vecadd::Operand shape(const Sizes& sizes, const Sizes& strides = {}) {
  return {static_cast<int>(sizes.size()), sizes.data(), strides.empty() ? nullptr : strides.data()};
}

Sizes strides_for(const Sizes& x_sizes, const Sizes& x_strides, const Sizes& y_sizes,
                  const Sizes& y_strides) {
  const Sizes z = vecadd::broadcast_shape(shape(x_sizes, x_strides), shape(y_sizes, y_strides));
  return vecadd::result_strides(shape(x_sizes, x_strides), shape(y_sizes, y_strides), z);
}

}  // namespace

TEST(shapes_broadcast_from_the_trailing_dimension) {
  CHECK(vecadd::broadcast_shape(shape({2, 1, 4}), shape({3, 1})) == (Sizes{2, 3, 4}));
  CHECK(vecadd::broadcast_shape(shape({}), shape({5})) == Sizes{5});
  CHECK(vecadd::broadcast_shape(shape({0, 3}), shape({1, 3})) == (Sizes{0, 3}));
}

TEST(shapes_that_do_not_broadcast_name_both_and_the_dimension) {
  std::string message;
  try {
    vecadd::broadcast_shape(shape({2, 3}), shape({4}));
  } catch (const std::invalid_argument& error) {
    message = error.what();
  }
  CHECK(message.rfind(vecadd::kBroadcastErrorPrefix, 0) == 0);
  CHECK(message.find("x of shape [2, 3] and y of shape [4]") != std::string::npos);
  CHECK(message.find("in dimension -1, x has 3 and y has 4") != std::string::npos);
}

TEST(operands_that_do_not_broadcast_are_each_named_once) {
  std::string message;
  const Sizes three = {3};
  const Sizes two_by_four = {2, 4};
  const vecadd::Operand operands[] = {shape(three), shape(three), shape(two_by_four)};
  const char* const names[] = {"a", "b", "c"};
  try {
    vecadd::broadcast_shape(operands, names, 3);
  } catch (const std::invalid_argument& error) {
    message = error.what();
  }
  CHECK(message == std::string(vecadd::kBroadcastErrorPrefix) +
                       "a of shape [3], b of shape [3] and c of shape [2, 4] cannot be broadcast "
                       "together: in dimension -1, a has 3 and c has 4; expected sizes that are "
                       "equal or 1 in each trailing dimension");
}

TEST(row_major_inputs_give_a_row_major_result) {
  CHECK(strides_for({2, 3, 4}, {}, {2, 3, 4}, {}) == (Sizes{12, 4, 1}));
  CHECK(strides_for({2, 1, 4}, {}, {2, 1, 4}, {}) == (Sizes{4, 4, 1}));
  CHECK(strides_for({6, 4}, {}, {4}, {}) == (Sizes{4, 1}));
}

TEST(a_transposed_pair_gives_a_transposed_result) {
  CHECK(strides_for({4, 6}, {1, 4}, {4, 6}, {1, 4}) == (Sizes{1, 4}));
}

TEST(channels_last_stays_channels_last) {
  // N=2, C=8, H=3, W=5 in channels-last memory: C innermost, then W, H, N.
  const Sizes activations = {2, 8, 3, 5};
  const Sizes channels_last = {120, 1, 40, 8};
  CHECK(strides_for(activations, channels_last, activations, channels_last) == channels_last);
  // A per-channel bias broadcast over a channels-last input keeps the input's order.
  CHECK(strides_for(activations, channels_last, {8, 1, 1}, {}) == channels_last);
}

TEST_MAIN()
