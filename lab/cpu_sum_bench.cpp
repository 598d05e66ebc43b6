// Evidence for: docs/benchmarks.md, "CPU kernels against torch.add", and docs/kernel-notes.md,
// "CPU kernels".
// vecadd's CPU kernels (through the kernel library's public API alone: vecadd::plan_sum and
// vecadd::sum_cpu) beside torch.add's (at::add_out) on the same arrays, same-dtype and mixed,
// contiguous and broadcast, one thread or several (both on torch's intra-op threads, as the
// bindings run vecadd's ranges). Each case is first checked to give torch's bits; then the two
// take turns, round by round, the one going first alternating, and each round keeps the ratio
// torch's time / vecadd's (above 1: vecadd faster). lab/cpu_sum_bench.sh builds and runs it:
//
//   lab/cpu_sum_bench.sh [--threads 1,2] [--rounds 15] [--min-log2 12] [--max-log2 22]
//                        [--step 2] [--cases all|same|mixed|NAME,...] [--json FILE]
//                        [--clock wall|cpu]
//   lab/cpu_sum_bench.sh --parity   # sum_cpu against at::add over every dtype pair
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <vecadd/vecadd.h>

namespace {

struct DTypePair {
  vecadd::DType vecadd;
  at::ScalarType torch;
};

const DTypePair kDTypes[] = {{vecadd::DType::kBool, at::kBool},
                             {vecadd::DType::kUInt8, at::kByte},
                             {vecadd::DType::kInt8, at::kChar},
                             {vecadd::DType::kInt16, at::kShort},
                             {vecadd::DType::kInt32, at::kInt},
                             {vecadd::DType::kInt64, at::kLong},
                             {vecadd::DType::kFloat16, at::kHalf},
                             {vecadd::DType::kBFloat16, at::kBFloat16},
                             {vecadd::DType::kFloat32, at::kFloat},
                             {vecadd::DType::kFloat64, at::kDouble},
                             {vecadd::DType::kComplex32, at::kComplexHalf},
                             {vecadd::DType::kComplex64, at::kComplexFloat},
                             {vecadd::DType::kComplex128, at::kComplexDouble}};

vecadd::DType vecadd_dtype(at::ScalarType type) {
  for (const DTypePair& pair : kDTypes) {
    if (pair.torch == type) {
      return pair.vecadd;
    }
  }
  std::fprintf(stderr, "no vecadd dtype for %s\n", c10::toString(type));
  std::exit(2);
}

// One timed case: x's and y's dtypes, z's (the promoted one), y's shape (broadcast or not),
// and whether y is a Python number.
struct Case {
  std::string name;
  at::ScalarType x;
  at::ScalarType y;
  bool broadcast = false;
  bool python_number = false;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const DTypePair& pair : kDTypes) {
    cases.push_back({std::string(vecadd::dtype_name(pair.vecadd)), pair.torch, pair.torch});
  }
  const Case mixed[] = {
      {"float32+bfloat16", at::kFloat, at::kBFloat16},
      {"bfloat16+float32", at::kBFloat16, at::kFloat},
      {"float32+float16", at::kFloat, at::kHalf},
      {"float16+float32", at::kHalf, at::kFloat},
      {"float64+float32", at::kDouble, at::kFloat},
      {"int64+int32", at::kLong, at::kInt},
      {"int32+float32", at::kInt, at::kFloat},
      {"uint8+int8", at::kByte, at::kChar},
      {"bool+int64", at::kBool, at::kLong},
      {"complex64+float32", at::kComplexFloat, at::kFloat},
      {"float32+2.0", at::kFloat, at::kDouble, false, true},
      {"bfloat16+2.0", at::kBFloat16, at::kDouble, false, true},
      {"float32+bias", at::kFloat, at::kFloat, true},
      {"float32+bfloat16 bias", at::kFloat, at::kBFloat16, true},
  };
  cases.insert(cases.end(), std::begin(mixed), std::end(mixed));
  return cases;
}

// Random values of `type` (integers small, so that no call overflows).
at::Tensor random_tensor(at::IntArrayRef shape, at::ScalarType type, int seed) {
  at::manual_seed(seed);
  if (at::isIntegralType(type, /*includeBool=*/true)) {
    return at::randint(type == at::kBool ? 2 : 100, shape, at::kLong).to(type);
  }
  return at::randn(shape, at::kDouble).to(type);
}

// The same call through vecadd's public API, on torch's threads.
struct VecaddCall {
  std::vector<std::int64_t> x_sizes, y_sizes, z_sizes;
  vecadd::SumInput inputs[2];
  vecadd::Sum sum;
  vecadd::Plan plan;
  vecadd::ParallelFor parallel;

  VecaddCall(const at::Tensor& x, const at::Tensor* y, double y_number, const at::Tensor& z)
      : x_sizes(x.sizes().vec()), z_sizes(z.sizes().vec()) {
    inputs[0].data = x.data_ptr();
    inputs[0].shape = {static_cast<int>(x_sizes.size()), x_sizes.data(), nullptr};
    inputs[0].dtype = vecadd_dtype(x.scalar_type());
    if (y != nullptr) {
      y_sizes = y->sizes().vec();
      inputs[1].data = y->data_ptr();
      inputs[1].shape = {static_cast<int>(y_sizes.size()), y_sizes.data(), nullptr};
      inputs[1].dtype = vecadd_dtype(y->scalar_type());
    } else {
      inputs[1].dtype = vecadd::DType::kFloat64;
      inputs[1].value = vecadd::Number::of_real(y_number);
      inputs[1].scalar = true;
    }
    const vecadd::DType common = vecadd_dtype(z.scalar_type());
    sum = {inputs,
           2,
           {z.data_ptr(), {static_cast<int>(z_sizes.size()), z_sizes.data(), nullptr}, common},
           common};
    plan = vecadd::plan_sum(sum);
    parallel = {at::get_num_threads(),
                [](std::int64_t count, std::int64_t grain, const vecadd::RangeBody& body) {
                  at::parallel_for(0, count, grain,
                                   [&](std::int64_t begin, std::int64_t end) { body(begin, end); });
                }};
  }

  void operator()() const { vecadd::sum_cpu(sum, plan, parallel); }
};

// Floating values as doubles (complex ones as pairs), to compare with NaNs equal.
at::Tensor as_doubles(const at::Tensor& t) {
  return t.is_complex() ? at::view_as_real(t.to(at::kComplexDouble)) : t.to(at::kDouble);
}

bool same_values(const at::Tensor& a, const at::Tensor& b) {
  if (a.is_complex() || a.is_floating_point()) {
    const at::Tensor a64 = as_doubles(a);
    const at::Tensor b64 = as_doubles(b);
    return at::equal(a64.isnan(), b64.isnan()) &&
           at::equal(at::where(a64.isnan(), 0, a64), at::where(b64.isnan(), 0, b64));
  }
  return at::equal(a, b);
}

// Which clock times a round: the wall clock, or the CPU time of this process (of this thread
// alone with one thread): while other programs share the cores, CPU time leaves out the time
// the benchmark waits for a core (--clock cpu).
bool use_cpu_clock = false;

double now_seconds() {
  if (!use_cpu_clock) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  timespec time{};
  clock_gettime(at::get_num_threads() == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID,
                &time);
  return static_cast<double>(time.tv_sec) + 1e-9 * static_cast<double>(time.tv_nsec);
}

double seconds_of(const std::function<void()>& call, int calls) {
  const double start = now_seconds();
  for (int i = 0; i < calls; ++i) {
    call();
  }
  return (now_seconds() - start) / calls;
}

struct Cell {
  double torch_seconds;
  double vecadd_seconds;
  double ratio;  // median of per-round ratios
  double lowest;
  double highest;
};

Cell time_pair(const std::function<void()>& torch_call, const std::function<void()>& vecadd_call,
               std::int64_t bytes, int rounds) {
  torch_call();
  vecadd_call();
  // Calls per round: about 2 ms of torch's time, at least 3.
  const double one = seconds_of(torch_call, 3);
  const int calls = std::max(3, static_cast<int>(2e-3 / std::max(one, 1e-9)));
  static_cast<void>(bytes);
  std::vector<double> ratios, torch_times, vecadd_times;
  for (int round = 0; round < rounds; ++round) {
    double t = 0;
    double v = 0;
    if (round % 2 == 0) {
      t = seconds_of(torch_call, calls);
      v = seconds_of(vecadd_call, calls);
    } else {
      v = seconds_of(vecadd_call, calls);
      t = seconds_of(torch_call, calls);
    }
    ratios.push_back(t / v);
    torch_times.push_back(t);
    vecadd_times.push_back(v);
  }
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  return {median(torch_times), median(vecadd_times), median(ratios),
          *std::min_element(ratios.begin(), ratios.end()),
          *std::max_element(ratios.begin(), ratios.end())};
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    parts.push_back(part);
  }
  return parts;
}

// The value of a 0-dim tensor as a vecadd::Number (read in its own dtype).
vecadd::Number number_of(const at::Tensor& t) {
  if (t.is_complex()) {
    const c10::complex<double> v = t.item<c10::complex<double>>();
    return vecadd::Number::of_real(v.real(), v.imag());
  }
  if (t.is_floating_point()) {
    return vecadd::Number::of_real(t.item<double>());
  }
  return vecadd::Number::of_integer(t.item<std::int64_t>());
}

// --parity: vecadd::sum_cpu against at::add for every pair of dtypes torch.add takes on the CPU,
// the second operand an array, a 0-dim tensor or a Python number (each rounded through the
// common dtype, as torch's CPU kernels read them), alpha 1 and 3, over edge values (out of range,
// infinities, NaN, halfway cases). Prints each pair that differs.
int parity_sweep() {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> reals = {
      0.0,   -0.0,   1.0,          -1.0,    0.1,      2.5,    -3.75,        65504.0,   65520.0,
      1e-8,  3e9,    5000000007.0, 1e20,    inf,      -inf,   std::nan(""), 1.0 / 3.0, 127.0,
      128.0, -129.0, 255.0,        32767.0, -32769.0, 2049.0, 16777217.0};
  std::vector<c10::complex<double>> values;
  for (std::size_t k = 0; k < 4 * reals.size() + 3; ++k) {
    values.emplace_back(reals[k % reals.size()], reals[(k * 7 + 3) % reals.size()]);
  }
  const at::Tensor base = at::tensor(at::ArrayRef<c10::complex<double>>(values));
  const at::Tensor shifted = base.roll(5);
  int checked = 0;
  int differ = 0;
  int refused = 0;
  const auto check = [&](const at::Tensor& x, const at::Tensor& y, const vecadd::SumInput& second,
                         const at::Scalar& alpha, const std::string& what) {
    at::Tensor expected;
    try {
      expected = at::add(x, y, alpha);
    } catch (const std::exception&) {  // c10::Error, or a checked conversion of alpha
      ++refused;
      return;
    }
    at::Tensor z = at::empty_like(expected);
    const std::vector<std::int64_t> x_sizes = x.sizes().vec();
    const std::vector<std::int64_t> z_sizes = z.sizes().vec();
    vecadd::SumInput inputs[2];
    inputs[0] = {x.data_ptr(), {1, x_sizes.data(), nullptr}, vecadd_dtype(x.scalar_type())};
    inputs[1] = second;
    inputs[1].weight = alpha.isIntegral(true) ? vecadd::Number::of_integer(alpha.to<std::int64_t>())
                                              : vecadd::Number::of_real(alpha.to<double>());
    const vecadd::DType common = vecadd_dtype(expected.scalar_type());
    const vecadd::Sum sum{inputs, 2, {z.data_ptr(), {1, z_sizes.data(), nullptr}, common}, common};
    vecadd::sum_cpu(sum, vecadd::plan_sum(sum), vecadd::serial_for());
    ++checked;
    if (!same_values(z, expected)) {
      ++differ;
      const at::Tensor wrong = at::nonzero(as_doubles(z).ne(as_doubles(expected)) &
                                           ~(as_doubles(z).isnan() & as_doubles(expected).isnan()));
      std::printf("  differs: %s (%lld elements)\n", what.c_str(),
                  static_cast<long long>(wrong.size(0)));
    }
  };
  for (const DTypePair& first : kDTypes) {
    const at::Tensor x = base.to(first.torch);
    for (const DTypePair& second : kDTypes) {
      for (const int alpha : {1, 3}) {
        const at::Scalar weight = second.torch == at::kBool && first.torch == at::kBool
                                      ? at::Scalar(alpha == 1)
                                      : at::Scalar(static_cast<std::int64_t>(alpha));
        const std::string name = std::string(vecadd::dtype_name(first.vecadd)) + " + " +
                                 vecadd::dtype_name(second.vecadd) + ", alpha " +
                                 std::to_string(alpha);
        const at::Tensor y = shifted.to(second.torch);
        const std::vector<std::int64_t> y_sizes = y.sizes().vec();
        vecadd::SumInput array{y.data_ptr(), {1, y_sizes.data(), nullptr}, second.vecadd};
        check(x, y, array, weight, name);
        for (const std::int64_t index : {0, 6, 13}) {  // a 0-dim tensor: 0.1, 1e-8 or -inf
          const at::Tensor y0 = shifted[index].to(second.torch);
          vecadd::SumInput constant{nullptr, {}, second.vecadd};
          constant.value = number_of(y0);
          check(x, y0, constant, weight, name + " (0-dim " + std::to_string(index) + ")");
        }
      }
    }
    // Python numbers: wrapped scalars of bool, int, float and complex.
    const std::pair<c10::Scalar, vecadd::DType> numbers[] = {
        {c10::Scalar(true), vecadd::DType::kBool},
        {c10::Scalar(int64_t{300}), vecadd::DType::kInt64},
        {c10::Scalar(0.1), vecadd::DType::kFloat64},
        {c10::Scalar(c10::complex<double>(0.5, -2.0)), vecadd::DType::kComplex128}};
    for (const auto& [number, dtype] : numbers) {
      at::ScalarType wrapped_type = at::kBool;
      for (const DTypePair& pair : kDTypes) {
        wrapped_type = pair.vecadd == dtype ? pair.torch : wrapped_type;
      }
      at::Tensor wrapped = at::scalar_tensor(number, at::device(at::kCPU).dtype(wrapped_type));
      wrapped.unsafeGetTensorImpl()->set_wrapped_number(true);
      vecadd::SumInput constant{nullptr, {}, dtype};
      constant.value = number_of(wrapped);
      check(
          x, wrapped, constant, at::Scalar(int64_t{1}),
          std::string(vecadd::dtype_name(first.vecadd)) + " + Python " + vecadd::dtype_name(dtype));
    }
  }
  std::printf("parity with at::add on the CPU: %d calls checked, %d differ, %d refused by torch\n",
              checked, differ, refused);
  return differ == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--parity") {
    return parity_sweep();
  }
  std::vector<int> thread_counts = {1, 2};
  int rounds = 15;
  int min_log2 = 12;
  int max_log2 = 22;
  int step = 2;
  std::string selection = "all";
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--threads") {
      thread_counts.clear();
      for (const std::string& part : split(value)) {
        thread_counts.push_back(std::stoi(part));
      }
    } else if (flag == "--rounds") {
      rounds = std::stoi(value);
    } else if (flag == "--min-log2") {
      min_log2 = std::stoi(value);
    } else if (flag == "--max-log2") {
      max_log2 = std::stoi(value);
    } else if (flag == "--step") {
      step = std::stoi(value);
    } else if (flag == "--cases") {
      selection = value;
    } else if (flag == "--json") {
      json_path = value;
    } else if (flag == "--clock") {
      use_cpu_clock = value == "cpu";
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::vector<Case> cases;
  const std::vector<std::string> wanted = split(selection);
  for (const Case& c : all_cases()) {
    const bool same = c.x == c.y && !c.broadcast && !c.python_number;
    if (selection == "all" || (selection == "same" && same) || (selection == "mixed" && !same) ||
        std::find(wanted.begin(), wanted.end(), c.name) != wanted.end()) {
      cases.push_back(c);
    }
  }
  std::printf(
      "vecadd CPU capability %s, torch %s, %s clock; ratio = torch.add's time / vecadd's "
      "(median of %d paired rounds, [min, max])\n",
      vecadd::cpu_capability(), TORCH_VERSION, use_cpu_clock ? "CPU" : "wall", rounds);
  std::string json = "{\"capability\": \"" + std::string(vecadd::cpu_capability()) +
                     "\", \"clock\": \"" + (use_cpu_clock ? "cpu" : "wall") + "\", \"rows\": [";
  bool first_row = true;
  int wrong = 0;
  for (const int threads : thread_counts) {
    at::set_num_threads(threads);
    std::printf("\nthreads %d\n%-24s", threads, "case");
    for (int e = min_log2; e <= max_log2; e += step) {
      std::printf("  2^%-18d", e);
    }
    std::printf("\n");
    for (const Case& c : cases) {
      std::printf("%-24s", c.name.c_str());
      for (int e = min_log2; e <= max_log2; e += step) {
        const std::int64_t n = std::int64_t{1} << e;
        const std::int64_t columns = 1024;
        const std::vector<std::int64_t> shape =
            c.broadcast ? std::vector<std::int64_t>{n / columns, columns}
                        : std::vector<std::int64_t>{n};
        const at::Tensor x = random_tensor(shape, c.x, 1);
        at::Tensor y;
        at::Tensor y_operand;
        if (c.python_number) {
          y_operand = at::scalar_tensor(2.0, at::kDouble);
          y_operand.unsafeGetTensorImpl()->set_wrapped_number(true);
        } else {
          y = random_tensor(c.broadcast ? std::vector<std::int64_t>{columns} : shape, c.y, 2);
          y_operand = y;
        }
        const at::ScalarType promoted = at::result_type(x, y_operand);
        const at::Tensor expected = at::add(x, y_operand);
        at::Tensor z_torch = at::empty(shape, x.options().dtype(promoted));
        at::Tensor z_vecadd = at::empty(shape, x.options().dtype(promoted));
        const VecaddCall vecadd_call(x, c.python_number ? nullptr : &y, 2.0, z_vecadd);
        vecadd_call();
        if (!same_values(z_vecadd, expected)) {
          ++wrong;
          std::printf("  %-20s", "DIFFERS FROM TORCH");
          continue;
        }
        const auto torch_call = [&] { at::add_out(z_torch, x, y_operand); };
        const Cell cell = time_pair(torch_call, std::cref(vecadd_call), 0, rounds);
        std::printf("  %5.3f [%5.3f,%5.3f]", cell.ratio, cell.lowest, cell.highest);
        std::fflush(stdout);
        json += std::string(first_row ? "" : ",") + "\n {\"case\": \"" + c.name +
                "\", \"threads\": " + std::to_string(threads) + ", \"log2\": " + std::to_string(e) +
                ", \"torch_s\": " + std::to_string(cell.torch_seconds) +
                ", \"vecadd_s\": " + std::to_string(cell.vecadd_seconds) +
                ", \"ratio\": " + std::to_string(cell.ratio) +
                ", \"min\": " + std::to_string(cell.lowest) +
                ", \"max\": " + std::to_string(cell.highest) + "}";
        first_row = false;
      }
      std::printf("\n");
    }
  }
  json += "\n]}\n";
  if (!json_path.empty()) {
    FILE* file = std::fopen(json_path.c_str(), "w");
    std::fputs(json.c_str(), file);
    std::fclose(file);
  }
  if (wrong > 0) {
    std::printf("%d cells differ from torch.add\n", wrong);
  }
  return wrong == 0 ? 0 : 1;
}
