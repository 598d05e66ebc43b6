// vecadd::sum_cpu: sums whose operands each have their own dtype, checked element by element
// against the plain reference (reference.h): every pair of dtypes through every common dtype,
// out= casting, constants and scalars, weights, and the layouts and threads of a plan. ctest
// runs it once per instruction set the CPU has (VECADD_CPU_CAPABILITY).
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "reference.h"
#include "vecadd/vecadd.h"

namespace {

using vecadd::DType;
using vecadd::Number;
using vecadd_test::CallInput;
using vecadd_test::MixedArray;
using vecadd_test::Sizes;

// Whether the CPU's sums fuse sum + w * x into one rounding: never (vecadd/vecadd.h), on every
// instruction set, so that a multiply then an add (exported programs) gives the same bits.
bool fused() {
  return false;
}

// Runs the call on the CPU into z and returns the elements that differ from the reference.
std::int64_t run_and_check(const std::vector<CallInput>& inputs, MixedArray& z, DType common,
                           const vecadd::ParallelFor& parallel = vecadd::serial_for()) {
  std::vector<const void*> data;
  for (const CallInput& input : inputs) {
    data.push_back(input.array != nullptr ? input.array->data() : nullptr);
  }
  const std::vector<vecadd::SumInput> described = vecadd_test::sum_inputs(inputs, data);
  const vecadd::Sum sum{described.data(),
                        static_cast<int>(described.size()),
                        {z.data(), z.operand(), z.dtype},
                        common};
  vecadd::sum_cpu(sum, vecadd::plan_sum(sum), parallel);
  std::string first;
  const std::int64_t wrong = vecadd_test::sum_mismatches(inputs, z, common, fused(), &first);
  if (wrong != 0) {
    std::printf("  common %s, z %s: %s\n", vecadd::dtype_name(common), vecadd::dtype_name(z.dtype),
                first.c_str());
  }
  return wrong;
}

// A weight that exercises each compute type: 3 for integers, true for bool, -0.75 (+0.5i).
Number weight_for(DType common) {
  return {common == DType::kBool ? 1 : 3, -0.75, vecadd_test::is_complex(common) ? 0.5 : 0.0};
}

// Enough elements for whole vectors, a partial one and more than one block of a row.
constexpr std::int64_t kLength = 1100;

}  // namespace

TEST(every_dtype_casts_to_every_common_dtype_as_torch_casts) {
  const auto values = vecadd_test::interesting_values();
  for (const DType from : vecadd_test::kAllDTypes) {
    const MixedArray x = vecadd_test::make_mixed(from, {kLength}, values);
    for (const DType common : vecadd_test::kAllDTypes) {
      MixedArray z = vecadd_test::make_mixed(common, {kLength}, {vecadd_test::Ref::of_int(0)});
      CHECK_EQ(run_and_check({vecadd_test::array_input(x)}, z, common), 0);
    }
  }
}

TEST(every_pair_of_dtypes_sums_in_every_common_dtype) {
  const auto values = vecadd_test::interesting_values();
  for (const DType first : vecadd_test::kAllDTypes) {
    const MixedArray x = vecadd_test::make_mixed(first, {kLength}, values);
    for (const DType second : vecadd_test::kAllDTypes) {
      // y's values shifted against x's, so that every value meets several others.
      const MixedArray y = vecadd_test::make_mixed(second, {kLength}, values, {}, 0, 7);
      for (const DType common : vecadd_test::kAllDTypes) {
        MixedArray z = vecadd_test::make_mixed(common, {kLength}, {vecadd_test::Ref::of_int(0)});
        CHECK_EQ(run_and_check(
                     {vecadd_test::array_input(x), vecadd_test::array_input(y, weight_for(common))},
                     z, common),
                 0);
      }
    }
  }
}

TEST(the_rounded_sum_is_cast_into_every_out_dtype) {
  const auto values = vecadd_test::interesting_values();
  for (const DType common : vecadd_test::kAllDTypes) {
    const MixedArray x = vecadd_test::make_mixed(common, {kLength}, values);
    const MixedArray y = vecadd_test::make_mixed(common, {kLength}, values, {}, 0, 3);
    for (const DType out : vecadd_test::kAllDTypes) {
      MixedArray z = vecadd_test::make_mixed(out, {kLength}, {vecadd_test::Ref::of_int(0)});
      CHECK_EQ(run_and_check({vecadd_test::array_input(x), vecadd_test::array_input(y)}, z, common),
               0);
    }
  }
}

TEST(constants_of_every_dtype_through_the_common_dtype_or_straight) {
  const auto values = vecadd_test::interesting_values();
  const Number constants[] = {Number::of_integer(300), Number{5000000007, 0.1, 0.0},
                              Number{-1, 65519.0, 2.5}, Number{1, 1.0 / 3.0, -1.0}};
  for (const DType common : vecadd_test::kAllDTypes) {
    const MixedArray x = vecadd_test::make_mixed(common, {kLength}, values);
    for (const DType dtype : vecadd_test::kAllDTypes) {
      for (const Number& value : constants) {
        for (const bool scalar : {false, true}) {
          MixedArray z = vecadd_test::make_mixed(common, {kLength}, {vecadd_test::Ref::of_int(0)});
          // The constant second (x + alpha * c, torch.add(x, 2.0)) and first (c + x).
          CHECK_EQ(
              run_and_check({vecadd_test::array_input(x),
                             vecadd_test::constant_input(dtype, value, scalar, weight_for(common))},
                            z, common),
              0);
          CHECK_EQ(run_and_check({vecadd_test::constant_input(dtype, value, scalar),
                                  vecadd_test::array_input(x, weight_for(common))},
                                 z, common),
                   0);
        }
      }
    }
  }
}

TEST(a_scalar_skips_the_rounding_to_a_16_bit_common_dtype) {
  // 1 + (2^-11 + 2^-22): through float16 the constant is 2^-11 and the sum a tie that rounds to
  // 1; straight in float it is just above the tie and rounds up to 1 + 2^-10.
  const MixedArray x =
      vecadd_test::make_mixed(DType::kFloat16, {16}, {vecadd_test::Ref::of_int(1)});
  const Number value = Number::of_real(0.00048828125 + 2.384185791015625e-7);
  for (const bool scalar : {false, true}) {
    MixedArray z = vecadd_test::make_mixed(DType::kFloat32, {16}, {vecadd_test::Ref::of_int(0)});
    CHECK_EQ(run_and_check({vecadd_test::array_input(x),
                            vecadd_test::constant_input(DType::kFloat64, value, scalar)},
                           z, DType::kFloat16),
             0);
    const double expected = scalar ? 1.0009765625 : 1.0;
    CHECK(vecadd_test::load(z.data(), DType::kFloat32).re == expected);
  }
}

TEST(integer_weights_wrap_and_bool_sums_are_or_and_and) {
  // int8: 100 + 300 * 1 wraps: 300 is 44 in int8, 100 + 44 = 144 is -112.
  const MixedArray x = vecadd_test::make_mixed(DType::kInt8, {70}, {vecadd_test::Ref::of_int(100)});
  const MixedArray y = vecadd_test::make_mixed(DType::kInt8, {70}, {vecadd_test::Ref::of_int(1)});
  MixedArray z = vecadd_test::make_mixed(DType::kInt8, {70}, {vecadd_test::Ref::of_int(0)});
  CHECK_EQ(run_and_check(
               {vecadd_test::array_input(x), vecadd_test::array_input(y, Number::of_integer(300))},
               z, DType::kInt8),
           0);
  CHECK_EQ(vecadd_test::load(z.data(), DType::kInt8).i, -112);
  // bool: x or (w and y), for every combination.
  const std::vector<vecadd_test::Ref> bits = {vecadd_test::Ref::of_int(0),
                                              vecadd_test::Ref::of_int(1)};
  const MixedArray p = vecadd_test::make_mixed(DType::kBool, {2, 2}, bits);          // 0 1 0 1
  const MixedArray q = vecadd_test::make_mixed(DType::kBool, {2, 2}, bits, {1, 0});  // 0 0 1 1
  for (const std::int64_t w : {0, 1, 2}) {
    MixedArray r = vecadd_test::make_mixed(DType::kBool, {2, 2}, bits);
    CHECK_EQ(run_and_check(
                 {vecadd_test::array_input(p), vecadd_test::array_input(q, Number::of_integer(w))},
                 r, DType::kBool),
             0);
    const bool expected[] = {false, true, w != 0, true};
    for (int k = 0; k < 4; ++k) {
      CHECK_EQ(vecadd_test::load(static_cast<const unsigned char*>(r.data()) + k, DType::kBool).i,
               expected[k] ? 1 : 0);
    }
  }
}

TEST(weights_are_read_in_the_compute_type) {
  // A float32 sum rounds its weight to float once; a float64 sum keeps it.
  const double weight = 0.1;
  const MixedArray x = vecadd_test::make_mixed(DType::kFloat64, {8}, {vecadd_test::Ref::of_int(0)});
  const MixedArray y = vecadd_test::make_mixed(DType::kFloat64, {8}, {vecadd_test::Ref::of_int(1)});
  for (const DType common : {DType::kFloat32, DType::kFloat64}) {
    MixedArray z = vecadd_test::make_mixed(DType::kFloat64, {8}, {vecadd_test::Ref::of_int(0)});
    CHECK_EQ(run_and_check({vecadd_test::array_input(x),
                            vecadd_test::array_input(y, Number::of_real(weight))},
                           z, common),
             0);
    const double got = vecadd_test::load(z.data(), DType::kFloat64).re;
    CHECK(got == (common == DType::kFloat32 ? static_cast<double>(0.1f) : 0.1));
  }
  // A complex weight multiplies as complex numbers: (1 + 2i) * i = -2 + i.
  const MixedArray u =
      vecadd_test::make_mixed(DType::kComplex64, {8}, {vecadd_test::Ref::of_int(0)});
  const MixedArray v =
      vecadd_test::make_mixed(DType::kComplex64, {8}, {vecadd_test::Ref::of_complex(1, 2)});
  MixedArray w = vecadd_test::make_mixed(DType::kComplex64, {8}, {vecadd_test::Ref::of_int(0)});
  CHECK_EQ(run_and_check({vecadd_test::array_input(u),
                          vecadd_test::array_input(v, Number::of_real(0.0, 1.0))},
                         w, DType::kComplex64),
           0);
  CHECK(vecadd_test::load(w.data(), DType::kComplex64).re == -2.0);
  CHECK(vecadd_test::load(w.data(), DType::kComplex64).im == 1.0);
}

// Mixed-dtype calls in the layouts of every kernel choice, on one thread and four.
void check_layouts(const vecadd::ParallelFor& parallel) {
  const auto values = vecadd_test::random_values(5, 97);
  const auto more = vecadd_test::random_values(6, 89);
  for (const DType common : {DType::kFloat32, DType::kBFloat16, DType::kInt64, DType::kComplex64}) {
    const DType other = common == DType::kFloat32 ? DType::kBFloat16 : DType::kFloat32;
    const DType wide = common == DType::kInt64 ? DType::kInt32 : DType::kFloat16;
    {  // contiguous, long enough for the threads
      const MixedArray x = vecadd_test::make_mixed(other, {70000}, values);
      const MixedArray y = vecadd_test::make_mixed(wide, {70000}, more);
      MixedArray z = vecadd_test::make_mixed(common, {70000}, {vecadd_test::Ref::of_int(0)});
      CHECK_EQ(run_and_check(
                   {vecadd_test::array_input(x), vecadd_test::array_input(y, weight_for(common))},
                   z, common, parallel),
               0);
    }
    {  // a row broadcast, a column broadcast and a 0-dim array
      const MixedArray x = vecadd_test::make_mixed(common, {300, 257}, values);
      MixedArray z = vecadd_test::make_mixed(common, {300, 257}, {vecadd_test::Ref::of_int(0)});
      for (const Sizes& shape : {Sizes{257}, Sizes{300, 1}, Sizes{}}) {
        const MixedArray y = vecadd_test::make_mixed(other, shape, more);
        CHECK_EQ(run_and_check(
                     {vecadd_test::array_input(x), vecadd_test::array_input(y, weight_for(common))},
                     z, common, parallel),
                 0);
        CHECK_EQ(run_and_check(
                     {vecadd_test::array_input(y), vecadd_test::array_input(x, weight_for(common))},
                     z, common, parallel),
                 0);
      }
    }
    {  // x transposed, y sliced with a step and off by one element, z row-major
      const MixedArray x = vecadd_test::make_mixed(other, {200, 150}, values, {1, 200});
      const MixedArray y = vecadd_test::make_mixed(wide, {200, 150}, more, {450, 3}, 1);
      MixedArray z = vecadd_test::make_mixed(common, {200, 150}, {vecadd_test::Ref::of_int(0)});
      CHECK_EQ(run_and_check(
                   {vecadd_test::array_input(x), vecadd_test::array_input(y, weight_for(common))},
                   z, common, parallel),
               0);
    }
    {  // a permuted z of another dtype: the call follows z's order
      const MixedArray x = vecadd_test::make_mixed(common, {4, 5, 6}, values);
      const MixedArray y = vecadd_test::make_mixed(other, {5, 1}, more);
      MixedArray z = vecadd_test::make_mixed(DType::kComplex128, {4, 5, 6},
                                             {vecadd_test::Ref::of_int(0)}, {1, 24, 4});
      CHECK_EQ(run_and_check({vecadd_test::array_input(x), vecadd_test::array_input(y)}, z, common,
                             parallel),
               0);
    }
    {  // eleven dimensions that cannot merge: three loop on the host
      const Sizes sizes(11, 2);
      Sizes gaps(11);
      std::int64_t next = 1;
      for (int d = 10; d >= 0; --d) {
        gaps[d] = next;
        next *= 3;
      }
      const MixedArray x = vecadd_test::make_mixed(other, sizes, values, gaps);
      const MixedArray y =
          vecadd_test::make_mixed(wide, Sizes(sizes.begin() + 3, sizes.end()), more);
      MixedArray z = vecadd_test::make_mixed(common, sizes, {vecadd_test::Ref::of_int(0)});
      CHECK_EQ(run_and_check({vecadd_test::array_input(x), vecadd_test::array_input(y)}, z, common,
                             parallel),
               0);
    }
  }
}

TEST(layouts_on_one_thread) {
  check_layouts(vecadd::serial_for());
}

TEST(layouts_on_four_threads) {
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
  check_layouts(four);
}

TEST(in_place_the_result_is_an_input) {
  // z is x itself: read each block before it is written, in the common dtype or a 16-bit one.
  for (const DType dtype : {DType::kFloat32, DType::kBFloat16, DType::kInt16, DType::kComplex32}) {
    MixedArray z = vecadd_test::make_mixed(dtype, {1000, 33}, vecadd_test::random_values(1, 31));
    const MixedArray before = z;
    const MixedArray y =
        vecadd_test::make_mixed(DType::kFloat16, {33}, vecadd_test::random_values(2, 33));
    const vecadd::SumInput inputs[] = {{z.data(), z.operand(), dtype},
                                       {y.data(), y.operand(), y.dtype, weight_for(dtype)}};
    const vecadd::Sum sum{inputs, 2, {z.data(), z.operand(), dtype}, dtype};
    vecadd::sum_cpu(sum, vecadd::plan_sum(sum));
    CHECK_EQ(vecadd_test::sum_mismatches(
                 {vecadd_test::array_input(before), vecadd_test::array_input(y, weight_for(dtype))},
                 z, dtype, fused()),
             0);
  }
}

TEST(sums_of_many_inputs_of_many_dtypes) {
  const DType dtypes[] = {DType::kFloat16, DType::kInt8,     DType::kFloat32,
                          DType::kBool,    DType::kBFloat16, DType::kInt64,
                          DType::kFloat64, DType::kUInt8,    DType::kComplex32};
  for (const DType common : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kComplex128}) {
    for (const int n : {1, 3, 9}) {
      std::vector<MixedArray> owned;
      for (int i = 0; i < n; ++i) {
        // A per-row value, a bias, a transposed matrix and plain matrices in turn.
        const int kind = i % 4;
        const auto values = vecadd_test::random_values(static_cast<unsigned>(i + 1), 41);
        owned.push_back(kind == 1   ? vecadd_test::make_mixed(dtypes[i], {33, 1}, values)
                        : kind == 2 ? vecadd_test::make_mixed(dtypes[i], {40}, values)
                        : kind == 3 ? vecadd_test::make_mixed(dtypes[i], {33, 40}, values, {1, 33})
                                    : vecadd_test::make_mixed(dtypes[i], {33, 40}, values));
      }
      std::vector<CallInput> inputs;
      for (int i = 0; i < n; ++i) {
        inputs.push_back(vecadd_test::array_input(owned[static_cast<std::size_t>(i)],
                                                  Number{i % 3 - 1, (i % 3 - 1) * 0.5, 0.0}));
      }
      inputs.push_back(vecadd_test::constant_input(DType::kFloat64, Number::of_real(0.25), true));
      MixedArray z = vecadd_test::make_mixed(common, {33, 40}, {vecadd_test::Ref::of_int(0)});
      CHECK_EQ(run_and_check(inputs, z, common), 0);
    }
  }
}

TEST(plan_sum_refuses_what_it_cannot_run_in_words) {
  const auto message = [](const vecadd::Sum& sum) {
    try {
      vecadd::plan_sum(sum);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  float x[4] = {};
  float z[4] = {};
  const std::int64_t four = 4;
  const vecadd::Operand vector{1, &four, nullptr};
  vecadd::SumInput inputs[2] = {{x, vector, DType::kFloat32}, {}};
  inputs[1].shape = vector;  // a constant with a dimension
  const vecadd::Sum constant_with_dims{inputs, 2, {z, vector, DType::kFloat32}, DType::kFloat32};
  CHECK(message(constant_with_dims) ==
        "vecadd::plan_sum: input 1 is a constant (its data is null) with 1 dimensions; "
        "expected 0");
  inputs[1] = {x, vector, DType::kFloat32};
  inputs[1].scalar = true;
  CHECK(message(constant_with_dims).find("input 1 is a scalar but has an array") !=
        std::string::npos);
  inputs[1].scalar = false;
  inputs[1].dtype = static_cast<DType>(40);
  CHECK(message(constant_with_dims) ==
        "vecadd::plan_sum: input 1 has dtype number 40; expected a vecadd::DType");
}

TEST(dtypes_are_named_and_sized_as_torch_names_them) {
  CHECK(std::string(vecadd::dtype_name(DType::kComplex32)) == "complex32");
  CHECK(std::string(vecadd::dtype_name(DType::kBFloat16)) == "bfloat16");
  CHECK_EQ(vecadd::dtype_size(DType::kComplex128), std::size_t{16});
  CHECK_EQ(vecadd::dtype_size(DType::kBool), std::size_t{1});
  CHECK_EQ(vecadd::dtype_size(static_cast<DType>(13)), std::size_t{0});
}

// The instruction set picked without VECADD_CPU_CAPABILITY: AVX2 wherever the CPU has it, as
// torch's add (AVX-512 only when asked for).
std::string expected_capability() {
#if defined(__x86_64__) || defined(_M_X64)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    return "avx2";
  }
#endif
  return "default";
}

// ctest runs this program once as the CPU's kernels are picked, then once per instruction set
// that VECADD_CPU_CAPABILITY names; one the CPU lacks is skipped (77).
int main() {
  const char* asked = std::getenv("VECADD_CPU_CAPABILITY");
  const std::string capability = vecadd::cpu_capability();
  std::printf("capability %s\n", capability.c_str());
  if (asked == nullptr && capability != expected_capability()) {
    std::printf("picked %s without VECADD_CPU_CAPABILITY; expected %s\n", capability.c_str(),
                expected_capability().c_str());
    return 1;
  }
  if (asked != nullptr && capability != asked) {
    std::printf("this CPU has no %s: skipped\n", asked);
    return 77;
  }
  return vecadd_test::run_all();
}
