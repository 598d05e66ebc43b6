// The planner's decisions: which kernel, which index width, which merged dimensions.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrays.h"
#include "check.h"
#include "vecadd/plan.h"

namespace {

using Sizes = std::vector<std::int64_t>;

// The planner reads addresses only for their alignment: these are never dereferenced.
const void* address(std::uintptr_t value) {
  return reinterpret_cast<const void*>(value);
}
const void* const kAligned = address(0x10000);
const void* const kAlignedToo = address(0x20000);
const void* const kAlignedOut = address(0x30000);
const void* const kOffByOneFloat = address(0x40004);

vecadd::Operand shape(const Sizes& sizes, const Sizes& strides) {
  return {static_cast<int>(sizes.size()), sizes.data(), strides.empty() ? nullptr : strides.data()};
}

// A float32 call with every operand at a 16-byte boundary.
vecadd::Plan plan_floats(const Sizes& x_sizes, const Sizes& x_strides, const Sizes& y_sizes,
                         const Sizes& y_strides, const Sizes& z_sizes, const Sizes& z_strides) {
  return vecadd::plan_add(kAligned, shape(x_sizes, x_strides), kAlignedToo,
                          shape(y_sizes, y_strides), kAlignedOut, shape(z_sizes, z_strides),
                          sizeof(float));
}

Sizes sizes_of(const vecadd::Dimensions& dims) {
  return Sizes(dims.sizes, dims.sizes + dims.ndim);
}

// Operand numbers of a two-input plan: x, y, then z.
constexpr int kX = 0;
constexpr int kY = 1;
constexpr int kZ = 2;

std::string planner_error(const Sizes& x_sizes, const Sizes& z_sizes) {
  try {
    plan_floats(x_sizes, {}, z_sizes, {}, z_sizes, {});
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

}  // namespace

TEST(contiguous_arrays_of_any_rank_are_one_run) {
  const vecadd::Plan plan = plan_floats({3, 4, 5}, {}, {3, 4, 5}, {}, {3, 4, 5}, {});
  CHECK(plan.kernel == vecadd::Kernel::kContiguous);
  CHECK_EQ(plan.count, 60);
  CHECK(sizes_of(plan.launch) == Sizes{60});
  CHECK(plan.index_width == vecadd::IndexWidth::k32);
  CHECK(plan.vector_aligned);
  CHECK_EQ(plan.outer.ndim, 0);
}

TEST(a_shared_permuted_dense_order_is_one_run) {
  // (2, 3, 4) stored with dimension 1 innermost, the same in x, y and z (a transposed pair).
  const Sizes strides = {12, 1, 3};
  const vecadd::Plan plan = plan_floats({2, 3, 4}, strides, {2, 3, 4}, strides, {2, 3, 4}, strides);
  CHECK(plan.kernel == vecadd::Kernel::kContiguous);
  CHECK(sizes_of(plan.launch) == Sizes{24});
}

TEST(size_one_dimensions_are_dropped_whatever_their_strides) {
  const vecadd::Plan plan =
      plan_floats({1, 5, 1}, {99, 1, 7}, {5, 1}, {1, 42}, {1, 5, 1}, {5, 1, 1});
  CHECK(plan.kernel == vecadd::Kernel::kContiguous);
  CHECK_EQ(plan.count, 5);
}

TEST(zero_dim_and_empty_calls) {
  const vecadd::Plan scalar = plan_floats({}, {}, {}, {}, {}, {});
  CHECK(scalar.kernel == vecadd::Kernel::kContiguous);
  CHECK_EQ(scalar.count, 1);
  const vecadd::Plan empty = plan_floats({0, 4}, {}, {4}, {}, {0, 4}, {});
  CHECK(empty.kernel == vecadd::Kernel::kNothing);
  CHECK_EQ(empty.count, 0);
}

TEST(unaligned_contiguous_views_keep_the_contiguous_kernel_without_vectors) {
  const Sizes n = {1000};
  const vecadd::Plan plan = vecadd::plan_add(kOffByOneFloat, shape(n, {}), kAligned, shape(n, {}),
                                             kAlignedOut, shape(n, {}), sizeof(float));
  CHECK(plan.kernel == vecadd::Kernel::kContiguous);
  CHECK(!plan.vector_aligned);
}

TEST(a_bias_along_rows_takes_the_row_kernel) {
  const vecadd::Plan plan = plan_floats({64, 32}, {}, {32}, {}, {64, 32}, {});
  CHECK(plan.kernel == vecadd::Kernel::kRows);
  CHECK(!(plan.repeats >> kX & 1));
  CHECK(!(plan.repeats >> kY & 1));
  CHECK(sizes_of(plan.launch) == (Sizes{64, 32}));
  CHECK_EQ(plan.launch.stride(kY, 0), 0);
  CHECK_EQ(plan.launch.stride(kY, 1), 1);
}

TEST(a_value_per_row_repeats_along_the_row) {
  const vecadd::Plan plan = plan_floats({64, 32}, {}, {64, 1}, {}, {64, 32}, {});
  CHECK(plan.kernel == vecadd::Kernel::kRows);
  CHECK(plan.repeats >> kY & 1);
  CHECK(!(plan.repeats >> kX & 1));
  const vecadd::Plan swapped = plan_floats({64, 1}, {}, {64, 32}, {}, {64, 32}, {});
  CHECK(swapped.kernel == vecadd::Kernel::kRows);
  CHECK(swapped.repeats >> kX & 1);
}

TEST(rows_that_break_16_byte_packs_are_strided) {
  // 30 floats per row: rows after the first start off a 16-byte boundary.
  const vecadd::Plan odd_rows = plan_floats({64, 30}, {}, {30}, {}, {64, 30}, {});
  CHECK(odd_rows.kernel == vecadd::Kernel::kStrided);
  // Both operands repeat along the row: nothing to pack.
  const vecadd::Plan both_repeat = plan_floats({64, 1}, {}, {64, 1}, {}, {64, 32}, {});
  CHECK(both_repeat.kernel == vecadd::Kernel::kStrided);
  // x read across (column-major) while z is row-major.
  const vecadd::Plan mixed = plan_floats({64, 32}, {1, 64}, {64, 32}, {}, {64, 32}, {});
  CHECK(mixed.kernel == vecadd::Kernel::kStrided);
  CHECK(sizes_of(mixed.launch) == (Sizes{64, 32}));
}

TEST(dimensions_follow_z_and_merge_where_all_three_allow) {
  // z stored channels-last: (N, C, H, W) with C innermost; x likewise, y a per-channel bias.
  const Sizes z_strides = {3 * 3 * 8, 1, 3 * 8, 8};
  const vecadd::Plan plan =
      plan_floats({2, 8, 3, 3}, z_strides, {8, 1, 1}, {}, {2, 8, 3, 3}, z_strides);
  CHECK(plan.kernel == vecadd::Kernel::kRows);
  // N, H and W merge into one outer dimension of 18 rows; C (8 floats) is the row.
  CHECK(sizes_of(plan.launch) == (Sizes{18, 8}));
  CHECK_EQ(plan.launch.stride(kZ, 0), 8);
  CHECK_EQ(plan.launch.stride(kY, 0), 0);
  CHECK_EQ(plan.launch.stride(kY, 1), 1);
}

TEST(more_dimensions_than_one_launch_takes_loop_outside) {
  // Ten dimensions of 2 in z, x stepping over a gap in each so that none can merge.
  const Sizes sizes(10, 2);
  const vecadd::Plan plan =
      plan_floats(sizes, vecadd_test::unmergeable_strides(10), sizes, {}, sizes, {});
  CHECK(plan.kernel == vecadd::Kernel::kStrided);
  CHECK_EQ(plan.outer.ndim, 2);
  CHECK_EQ(plan.launch.ndim, vecadd::kMaxDims);
  CHECK_EQ(plan.launch.count(), 256);
  CHECK_EQ(plan.outer.stride(kX, 0), 19683);
  CHECK_EQ(plan.outer.stride(kZ, 1), 256);
}

TEST(index_width_follows_the_farthest_offset) {
  const vecadd::Plan near = plan_floats({4, 4}, {1 << 20, 1}, {4}, {}, {4, 4}, {});
  CHECK(near.index_width == vecadd::IndexWidth::k32);
  const std::int64_t far_stride = std::int64_t{1} << 31;
  const vecadd::Plan far = plan_floats({4, 4}, {far_stride, 1}, {4}, {}, {4, 4}, {});
  CHECK(far.index_width == vecadd::IndexWidth::k64);
  const vecadd::Plan long_run = plan_floats({far_stride}, {}, {far_stride}, {}, {far_stride}, {});
  CHECK(long_run.kernel == vecadd::Kernel::kContiguous);
  CHECK(long_run.index_width == vecadd::IndexWidth::k64);
}

TEST(n_inputs_merge_only_where_every_input_allows) {
  // Four inputs of (6, 8): three row-major, one a per-row value; z row-major.
  const Sizes sizes = {6, 8};
  const Sizes column = {6, 1};
  const void* const inputs[] = {kAligned, kAlignedToo, kAligned, kAlignedToo};
  const vecadd::Operand shapes[] = {shape(sizes, {}), shape(sizes, {}), shape(column, {}),
                                    shape(sizes, {})};
  const vecadd::Plan rows =
      vecadd::plan_add_n(inputs, shapes, 4, kAlignedOut, shape(sizes, {}), sizeof(float));
  CHECK(rows.kernel == vecadd::Kernel::kRows);
  CHECK_EQ(rows.inputs, 4);
  CHECK_EQ(rows.launch.operands, 5);
  CHECK(sizes_of(rows.launch) == (Sizes{6, 8}));
  CHECK_EQ(rows.repeats, std::uint64_t{0b0100});
  // The same inputs all of (6, 8) are one run; one input alone still plans its output.
  const vecadd::Operand dense[] = {shape(sizes, {}), shape(sizes, {}), shape(sizes, {}),
                                   shape(sizes, {})};
  const vecadd::Plan run =
      vecadd::plan_add_n(inputs, dense, 4, kAlignedOut, shape(sizes, {}), sizeof(float));
  CHECK(run.kernel == vecadd::Kernel::kContiguous);
  CHECK(sizes_of(run.launch) == Sizes{48});
  const vecadd::Plan one =
      vecadd::plan_add_n(inputs, dense, 1, kAlignedOut, shape(sizes, {}), sizeof(float));
  CHECK(one.kernel == vecadd::Kernel::kContiguous);
  CHECK_EQ(one.inputs, 1);
}

TEST(an_input_of_no_size_in_a_dimension_is_refused_by_number) {
  const Sizes sizes = {2, 4};
  const Sizes wrong = {3};
  const void* const inputs[] = {kAligned, kAligned, kAligned};
  const vecadd::Operand shapes[] = {shape(sizes, {}), shape(sizes, {}), shape(wrong, {})};
  std::string message;
  try {
    vecadd::plan_add_n(inputs, shapes, 3, kAlignedOut, shape(sizes, {}), sizeof(float));
  } catch (const std::invalid_argument& error) {
    message = error.what();
  }
  CHECK(message.find("operand 'input 2' has size 3 in dimension 0") != std::string::npos);
  std::string none;
  try {
    vecadd::plan_add_n(inputs, shapes, 0, kAlignedOut, shape(sizes, {}), sizeof(float));
  } catch (const std::invalid_argument& error) {
    none = error.what();
  }
  CHECK(none.find("no inputs; expected at least one") != std::string::npos);
}

TEST(shapes_that_do_not_broadcast_are_refused_by_name) {
  const std::string message = planner_error({3}, {2, 4});
  CHECK(message.find("operand 'x'") != std::string::npos);
  CHECK(message.find("size 3 in dimension 0") != std::string::npos);
  CHECK(message.find("expected 4") != std::string::npos);
  const std::string too_many = planner_error({1, 2, 4}, {2, 4});
  CHECK(too_many.find("3 dimensions; expected at most the 2 of z") != std::string::npos);
  CHECK(planner_error({1, 4}, {2, 4}).empty());
}

TEST(serial_and_default_parallel_for_cover_every_index_once) {
  for (const vecadd::ParallelFor& parallel :
       {vecadd::serial_for(), vecadd::default_parallel_for()}) {
    std::vector<int> seen(100000, 0);
    parallel.run(static_cast<std::int64_t>(seen.size()), 1000,
                 [&](std::int64_t begin, std::int64_t end) {
                   for (std::int64_t i = begin; i < end; ++i) {
                     ++seen[static_cast<std::size_t>(i)];
                   }
                 });
    bool once = true;
    for (const int count : seen) {
      once = once && count == 1;
    }
    CHECK(once);
    CHECK(parallel.threads >= 1);
  }
}

TEST_MAIN()
