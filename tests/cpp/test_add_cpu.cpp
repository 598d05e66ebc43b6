// vecadd::add_cpu over plans: broadcasts, any strides, more dimensions than one launch walks,
// and the caller's threads, each checked element by element against the plain loop.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "arrays.h"
#include "check.h"
#include "vecadd/vecadd.h"

namespace {

using vecadd_test::Array;
using vecadd_test::make_array;
using vecadd_test::mismatches;
using Sizes = std::vector<std::int64_t>;

template <class T>
std::int64_t run_and_count_mismatches(const Array<T>& x, const Array<T>& y, Array<T>& z, T alpha,
                                      const vecadd::ParallelFor& parallel) {
  const vecadd::Plan plan =
      vecadd::plan_add(x.data(), x.operand(), y.data(), y.operand(), z.data(), z.operand());
  vecadd::add_cpu(x.data(), y.data(), z.data(), plan, alpha, parallel);
  return mismatches(x, y, z, alpha);
}

// Each case: x, y and z of one broadcast call, in layouts that reach every kernel choice.
template <class T>
void check_layouts(const vecadd::ParallelFor& parallel) {
  {  // contiguous
    const auto x = make_array<T>({70000}, {}, 0, 1);
    const auto y = make_array<T>({70000}, {}, 0, 2);
    auto z = make_array<T>({70000});
    CHECK_EQ(run_and_count_mismatches<T>(x, y, z, T(3), parallel), 0);
  }
  {  // a row broadcast, a column broadcast and a scalar
    const auto x = make_array<T>({300, 257}, {}, 0, 3);
    auto z = make_array<T>({300, 257});
    CHECK_EQ(run_and_count_mismatches<T>(x, make_array<T>({257}, {}, 0, 4), z, T(2), parallel), 0);
    CHECK_EQ(run_and_count_mismatches<T>(x, make_array<T>({300, 1}, {}, 0, 5), z, T(1), parallel),
             0);
    CHECK_EQ(run_and_count_mismatches<T>(make_array<T>({}, {}, 0, 6), x, z, T(-1), parallel), 0);
  }
  {  // x transposed, y sliced with a step, z row-major
    const auto x = make_array<T>({200, 150}, {1, 200}, 0, 7);
    const auto y = make_array<T>({200, 150}, {450, 3}, 1, 8);
    auto z = make_array<T>({200, 150});
    CHECK_EQ(run_and_count_mismatches<T>(x, y, z, T(5), parallel), 0);
  }
  {  // a permuted z: the call follows z's order
    const auto x = make_array<T>({4, 5, 6}, {}, 0, 9);
    const auto y = make_array<T>({5, 1}, {}, 0, 10);
    auto z = make_array<T>({4, 5, 6}, {1, 24, 4});
    CHECK_EQ(run_and_count_mismatches<T>(x, y, z, T(1), parallel), 0);
  }
  {  // eleven dimensions that cannot merge: three loop on the host
    const Sizes sizes(11, 2);
    const auto x = make_array<T>(sizes, vecadd_test::unmergeable_strides(11), 0, 11);
    const auto y = make_array<T>(Sizes(sizes.begin() + 3, sizes.end()), {}, 0, 12);
    auto z = make_array<T>(sizes);
    CHECK_EQ(run_and_count_mismatches<T>(x, y, z, T(2), parallel), 0);
  }
  {  // in place: z is x itself
    auto z = make_array<T>({1000, 33}, {}, 0, 13);
    const Array<T> before = z;
    const auto y = make_array<T>({33}, {}, 0, 14);
    const vecadd::Plan plan =
        vecadd::plan_add(z.data(), z.operand(), y.data(), y.operand(), z.data(), z.operand());
    vecadd::add_cpu(z.data(), y.data(), z.data(), plan, T(1), parallel);
    CHECK_EQ(mismatches(before, y, z, T(1)), 0);
  }
}

// A parallel-for that records which threads ran its ranges, around the default one.
struct RecordingParallelFor {
  std::mutex lock;
  std::set<std::thread::id> threads;
  std::atomic<int> ranges{0};

  vecadd::ParallelFor wrap(const vecadd::ParallelFor& inner) {
    return {inner.threads,
            [this, inner](std::int64_t count, std::int64_t grain, const vecadd::RangeBody& body) {
              inner.run(count, grain, [&](std::int64_t begin, std::int64_t end) {
                ++ranges;
                {
                  const std::lock_guard<std::mutex> guard(lock);
                  threads.insert(std::this_thread::get_id());
                }
                body(begin, end);
              });
            }};
  }
};

}  // namespace

TEST(float32_layouts_on_one_thread) {
  check_layouts<float>(vecadd::serial_for());
}

TEST(float64_int32_int64_layouts_on_the_default_threads) {
  check_layouts<double>(vecadd::default_parallel_for());
  check_layouts<std::int32_t>(vecadd::default_parallel_for());
  check_layouts<std::int64_t>(vecadd::default_parallel_for());
}

TEST(large_calls_are_split_across_the_callers_threads) {
  // A parallel-for that claims four threads splits work into ranges whatever the machine.
  const vecadd::ParallelFor four = {
      4, [](std::int64_t count, std::int64_t grain, const vecadd::RangeBody& body) {
        const std::int64_t step = std::max(grain, (count + 3) / 4);
        std::vector<std::thread> workers;
        for (std::int64_t begin = 0; begin < count; begin += step) {
          workers.emplace_back(body, begin, std::min(count, begin + step));
        }
        for (std::thread& worker : workers) {
          worker.join();
        }
      }};
  RecordingParallelFor contiguous;
  const auto x = make_array<float>({1 << 20}, {}, 0, 1);
  const auto y = make_array<float>({1 << 20}, {}, 0, 2);
  auto z = make_array<float>({1 << 20});
  CHECK_EQ(run_and_count_mismatches<float>(x, y, z, 1.0f, contiguous.wrap(four)), 0);
  CHECK_EQ(contiguous.ranges.load(), 4);
  CHECK_EQ(static_cast<int>(contiguous.threads.size()), 4);

  // A strided call with a short outer dimension splits its outer two dimensions.
  RecordingParallelFor strided;
  const auto column_major = make_array<float>({2, 512, 512}, {1, 2, 1024}, 0, 3);
  const auto bias = make_array<float>({512}, {}, 0, 4);
  auto out = make_array<float>({2, 512, 512});
  CHECK_EQ(run_and_count_mismatches<float>(column_major, bias, out, 2.0f, strided.wrap(four)), 0);
  CHECK(strided.ranges.load() >= 4);
  CHECK(strided.threads.size() >= 2);
}

TEST(small_calls_stay_on_the_calling_thread) {
  RecordingParallelFor recording;
  const auto x = make_array<float>({1000}, {}, 0, 1);
  const auto y = make_array<float>({1000}, {}, 0, 2);
  auto z = make_array<float>({1000});
  CHECK_EQ(run_and_count_mismatches<float>(x, y, z, 1.0f,
                                           recording.wrap(vecadd::default_parallel_for())),
           0);
  // One thread's grain: the call runs where it is, without asking the parallel-for at all.
  CHECK_EQ(recording.ranges.load(), 0);
  CHECK(recording.threads.empty());
}

TEST(the_contiguous_entry_point_agrees_with_plans) {
  const auto x = make_array<double>({5, 7}, {}, 0, 1);
  const auto y = make_array<double>({5, 7}, {}, 0, 2);
  auto z = make_array<double>({5, 7});
  vecadd::add_cpu(x.data(), y.data(), z.data(), 35, 0.5);
  CHECK_EQ(mismatches(x, y, z, 0.5), 0);
}

// n inputs in the layouts of the row, strided and contiguous kernels, against the plain loop.
template <class T>
std::int64_t sum_and_count_mismatches(const std::vector<const Array<T>*>& inputs,
                                      const std::vector<T>& weights, Array<T>& z) {
  std::vector<const T*> data;
  std::vector<vecadd::Operand> shapes;
  for (const Array<T>* input : inputs) {
    data.push_back(input->data());
    shapes.push_back(input->operand());
  }
  const vecadd::Plan plan = vecadd::plan_add_n(
      data.data(), shapes.data(), static_cast<int>(inputs.size()), z.data(), z.operand());
  vecadd::add_n_cpu(data.data(), weights.data(), z.data(), plan);
  return vecadd_test::sum_mismatches(inputs, weights, z);
}

TEST(sums_of_n_inputs_in_every_layout) {
  for (const int n : {1, 3, 9, 40}) {
    std::vector<Array<std::int64_t>> owned;
    for (int i = 0; i < n; ++i) {
      // A per-row value, a bias, a transposed matrix and plain matrices in turn.
      const int kind = i % 4;
      owned.push_back(kind == 1   ? make_array<std::int64_t>({33, 1}, {}, 0, i + 1)
                      : kind == 2 ? make_array<std::int64_t>({40}, {}, 0, i + 1)
                      : kind == 3 ? make_array<std::int64_t>({33, 40}, {1, 33}, 0, i + 1)
                                  : make_array<std::int64_t>({33, 40}, {}, 0, i + 1));
    }
    std::vector<const Array<std::int64_t>*> inputs;
    std::vector<std::int64_t> weights;
    for (int i = 0; i < n; ++i) {
      inputs.push_back(&owned[static_cast<std::size_t>(i)]);
      weights.push_back(i % 3 - 1);
    }
    auto z = make_array<std::int64_t>({33, 40});
    CHECK_EQ(sum_and_count_mismatches(inputs, weights, z), 0);
  }
}

TEST_MAIN()
