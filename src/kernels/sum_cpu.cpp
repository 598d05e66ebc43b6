// CPU entry points of the kernel library: a plan's dimensions walked as rows on the caller's
// parallel-for, each row summed by the row kernels of the instruction set picked once per
// process (sum_rows.cpp, built once per instruction set). The typed entry points (add_cpu,
// add_n_cpu) describe their arrays as a Sum and run the same code.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "outer_loop.h"
#include "sum_call.h"
#include "sum_rows.h"
#include "vecadd/vecadd.h"

namespace vecadd {
namespace {

using detail::CpuKernels;
using detail::RowOperand;
using detail::RowSum;

// The instruction sets this build holds, widest last, as torch names its CPU capabilities.
#if defined(__x86_64__) || defined(_M_X64)
bool has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
}
bool has_avx512() {
  return has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
#endif

// The AVX2 build wherever the CPU has AVX2, AVX-512 CPUs included: torch's add registers no
// AVX-512 kernel (those CPUs run its AVX2 one), and the AVX-512 build streams memory up to 30 %
// slower on Zen 4 (docs/benchmarks.md). VECADD_CPU_CAPABILITY names another: default, or avx512
// where the CPU has it (as ATEN_CPU_CAPABILITY does for torch's kernels).
CpuKernels choose_kernels() {
  const char* asked = std::getenv("VECADD_CPU_CAPABILITY");
  const std::string_view name = asked != nullptr ? asked : "";
  static_cast<void>(name);
#if defined(__x86_64__) || defined(_M_X64)
  if (name == "avx512" && has_avx512()) {
    return detail::cpu_kernels_avx512();
  }
  if (name != "default" && has_avx2()) {
    return detail::cpu_kernels_avx2();
  }
#endif
  return detail::cpu_kernels_default();
}

const CpuKernels& kernels() {
  static const CpuKernels chosen = choose_kernels();
  return chosen;
}

// Elements per range that a thread takes at least: below this, threads cost more than they save.
constexpr std::int64_t kGrainSize = 32768;

// Dimensions of a slab, with each operand's element offset to start from: the innermost
// dimension as rows, the outer ones advanced as an odometer, on the calling thread.
void strided_serial(const RowSum& sum, detail::RowKernel row, const Dimensions& dims,
                    const std::int64_t* start) {
  const int operands = sum.count + 1;
  if (dims.ndim == 1 && operands <= kInlineOperands) {  // the common call: one row
    std::int64_t steps[kInlineOperands];
    for (int o = 0; o < operands; ++o) {
      steps[o] = dims.stride(o, 0);
    }
    row(sum, start, steps, dims.sizes[0], 1, steps);
    return;
  }
  const std::int64_t count = dims.count();
  if (count == 0) {
    return;
  }
  // The inner two dimensions go to the row kernel at once: rows of the innermost.
  const int inner = dims.ndim - 1;
  const std::int64_t run = dims.ndim == 0 ? 1 : dims.sizes[inner];
  const std::int64_t rows = dims.ndim >= 2 ? dims.sizes[inner - 1] : 1;
  detail::OperandArray<std::int64_t> base(operands);
  detail::OperandArray<std::int64_t> steps(operands);
  detail::OperandArray<std::int64_t> row_steps(operands);
  for (int o = 0; o < operands; ++o) {
    base[o] = start[o];
    steps[o] = dims.ndim > 0 ? dims.stride(o, inner) : 0;
    row_steps[o] = dims.ndim >= 2 ? dims.stride(o, inner - 1) : 0;
  }
  const int outer = std::max(0, dims.ndim - 2);  // dimensions walked here, as an odometer
  std::int64_t coordinate[kMaxPlanDims];
  std::fill_n(coordinate, outer, 0);
  for (std::int64_t done = 0; done < count; done += run * rows) {
    row(sum, base.data(), steps.data(), run, rows, row_steps.data());
    for (int d = outer - 1; d >= 0; --d) {
      for (int o = 0; o < operands; ++o) {
        base[o] += dims.stride(o, d);
      }
      if (++coordinate[d] < dims.sizes[d]) {
        break;
      }
      for (int o = 0; o < operands; ++o) {
        base[o] -= dims.stride(o, d) * dims.sizes[d];
      }
      coordinate[d] = 0;
    }
  }
}

// Dimensions over the caller's threads. They split the outermost dimension into slabs of whole
// rows; when it is too short to keep every thread busy, they split the outer two dimensions
// together instead, and a thread's range then runs as one slab per index of the outermost
// dimension it touches.
void strided_parallel(const RowSum& sum, detail::RowKernel row, const Dimensions& dims,
                      const std::int64_t* offsets, const ParallelFor& parallel) {
  // Work for one thread stays on this one, without the parallel-for's cost (small calls).
  if (dims.ndim == 0 || parallel.threads <= 1 || dims.count() <= kGrainSize) {
    strided_serial(sum, row, dims, offsets);
    return;
  }
  const int operands = sum.count + 1;
  const bool split_two = dims.ndim >= 2 && dims.sizes[0] < 4 * parallel.threads;
  const std::int64_t second = split_two ? dims.sizes[1] : 1;
  const std::int64_t units = dims.sizes[0] * second;
  const std::int64_t grain = std::max<std::int64_t>(1, kGrainSize / (dims.count() / units));
  parallel.run(units, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t unit = begin; unit < end;) {
      const std::int64_t outer = unit / second;
      const std::int64_t inner = unit % second;
      const std::int64_t take = split_two ? std::min(end - unit, second - inner) : end - unit;
      // The slab: dims less the outermost dimension when it is part of one index of it.
      const int dropped = split_two ? 1 : 0;
      Dimensions slab;
      slab.hold(operands);
      slab.ndim = dims.ndim - dropped;
      PerOperand<std::int64_t> start(operands);
      for (int d = 0; d < slab.ndim; ++d) {
        slab.sizes[d] = dims.sizes[d + dropped];
      }
      for (int o = 0; o < operands; ++o) {
        for (int d = 0; d < slab.ndim; ++d) {
          slab.set_stride(o, d, dims.stride(o, d + dropped));
        }
        start[o] =
            offsets[o] + outer * dims.stride(o, 0) + (split_two ? inner * dims.stride(o, 1) : 0);
      }
      slab.sizes[0] = take;
      strided_serial(sum, row, slab, start.data());
      unit += take;
    }
  });
}

[[noreturn]] void fail(const std::string& message) {
  throw std::invalid_argument("vecadd::sum_cpu: " + message);
}

// The row kernels' view of a call: weights and constants in the compute type.
template <DType C>
void describe(const Sum& sum, detail::OperandArray<RowOperand>& inputs, RowSum& rows) {
  for (int i = 0; i < sum.count; ++i) {
    const SumInput& input = sum.inputs[i];
    RowOperand& operand = inputs[i];
    operand.data = static_cast<char*>(const_cast<void*>(input.data));
    operand.element_size = static_cast<std::int64_t>(dtype_size(input.dtype));
    operand.dtype = input.dtype;
    operand.weight = detail::ComputeValue::of(detail::weight_in<C>(input.weight));
    operand.weight_is_one = detail::weight_is_one<C>(input.weight);
    if (input.data == nullptr) {
      operand.constant = detail::constant_in<C>(input);
    }
  }
  rows.inputs = inputs.data();
  rows.count = sum.count;
  rows.z.data = static_cast<char*>(sum.z.data);
  rows.z.element_size = static_cast<std::int64_t>(dtype_size(sum.z.dtype));
  rows.z.dtype = sum.z.dtype;
  rows.common = C;
  rows.kind = detail::compute_kind(C);
}

// Element offsets an operand's view reaches: 1 + the largest (0 for no elements).
std::int64_t reach_of(const Operand& shape) {
  std::int64_t reach = 1;
  std::int64_t dense = 1;
  for (int d = shape.ndim - 1; d >= 0; --d) {
    if (shape.sizes[d] == 0) {
      return 0;
    }
    const std::int64_t stride = shape.strides != nullptr ? shape.strides[d] : dense;
    reach += (shape.sizes[d] - 1) * (stride < 0 ? -stride : stride);
    dense *= shape.sizes[d];
  }
  return reach;
}

// An input of another dtype than the common one that z repeats many times (a bias beside a
// matrix) is cast to the common dtype once, into `storage`, element offsets kept, rather than
// once per row it meets: as torch.add does, but only for inputs this small.
void convert_if_repeated(const SumInput& input, std::int64_t count, const RowSum& rows,
                         RowOperand& operand, std::vector<unsigned char>& storage) {
  constexpr std::int64_t kLargest = std::int64_t{1} << 16;  // elements
  constexpr std::int64_t kRepeats = 4;                      // z's elements per element at least
  if (input.data == nullptr || input.dtype == rows.common || count < 4096) {
    return;
  }
  const std::int64_t reach = reach_of(input.shape);
  if (reach == 0 || reach > kLargest || reach * kRepeats > count) {
    return;
  }
  const auto size = static_cast<std::int64_t>(dtype_size(rows.common));
  storage.resize(static_cast<std::size_t>(reach * size));
  // The cast is a sum of one input of weight one, into the common dtype.
  RowOperand source = operand;
  source.weight_is_one = true;
  RowSum cast;
  cast.inputs = &source;
  cast.count = 1;
  cast.z.data = reinterpret_cast<char*>(storage.data());
  cast.z.element_size = size;
  cast.z.dtype = rows.common;
  cast.common = rows.common;
  cast.kind = rows.kind;
  const std::int64_t origin[2] = {0, 0};
  const std::int64_t steps[2] = {1, 1};
  kernels().sum_row[static_cast<int>(rows.common)](cast, origin, steps, reach, 1, origin);
  operand.data = reinterpret_cast<char*>(storage.data());
  operand.element_size = size;
  operand.dtype = rows.common;
}

void run(const RowSum& rows, const Plan& plan, const ParallelFor& parallel) {
  const detail::RowKernel row = kernels().sum_row[static_cast<int>(rows.common)];
  // Every kernel alike: the strided loop takes unit-step rows its fast way.
  detail::for_each_outer_index(plan.outer, true, [&](const std::int64_t* offsets) {
    strided_parallel(rows, row, plan.launch, offsets, parallel);
    return true;
  });
}

}  // namespace

const char* cpu_capability() {
  return kernels().capability;
}

void sum_cpu(const Sum& sum, const Plan& plan, const ParallelFor& parallel) {
  if (plan.inputs != sum.count) {
    fail("the plan is for " + std::to_string(plan.inputs) + " inputs but the sum has " +
         std::to_string(sum.count) + "; expected the plan plan_sum made for this sum");
  }
  if (plan.kernel == Kernel::kNothing) {
    return;
  }
  for (int i = 0; i < sum.count; ++i) {
    if (dtype_size(sum.inputs[i].dtype) == 0) {
      fail("input " + std::to_string(i) +
           "'s dtype is outside vecadd::DType; expected one of its "
           "values");
    }
  }
  detail::OperandArray<RowOperand> inputs(sum.count);
  RowSum rows;
  if (dtype_size(sum.z.dtype) == 0 || !detail::visit_dtype(sum.common, [&](auto tag) {
        describe<decltype(tag)::value>(sum, inputs, rows);
      })) {
    fail("the common dtype or z's dtype is outside vecadd::DType; expected one of its values");
  }
  std::vector<unsigned char> converted[kInlineOperands];
  for (int i = 0; i < sum.count && i < kInlineOperands; ++i) {
    convert_if_repeated(sum.inputs[i], plan.count, rows, inputs[i], converted[i]);
  }
  run(rows, plan, parallel);
}

template <class T>
void add_n_cpu(const T* const* inputs, const alpha_t<T>* weights, T* z, const Plan& plan,
               const ParallelFor& parallel) {
  if (plan.kernel == Kernel::kNothing) {
    return;
  }
  constexpr DType kDType = detail::dtype_of<T>();
  using K = detail::compute_of<kDType>;
  detail::OperandArray<RowOperand> operands(plan.inputs);
  for (int i = 0; i < plan.inputs; ++i) {
    RowOperand& operand = operands[i];
    const K weight = detail::scale_of<T>(weights[i]);
    operand.data = reinterpret_cast<char*>(const_cast<T*>(inputs[i]));
    operand.element_size = sizeof(T);
    operand.dtype = kDType;
    operand.weight_is_one = weight == K(1);
    operand.weight = detail::ComputeValue::of(weight);
  }
  RowSum rows;
  rows.inputs = operands.data();
  rows.count = plan.inputs;
  rows.z.data = reinterpret_cast<char*>(z);
  rows.z.element_size = sizeof(T);
  rows.z.dtype = kDType;
  rows.common = kDType;
  rows.kind = detail::compute_kind(kDType);
  run(rows, plan, parallel);
}

template <class T>
void add_cpu(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
             const ParallelFor& parallel) {
  const T* const inputs[] = {x, y};
  const alpha_t<T> weights[] = {alpha_t<T>(1), alpha};
  add_n_cpu(inputs, weights, z, plan, parallel);
}

template <class T>
void add_cpu(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha) {
  const Operand run{1, &n, nullptr};
  add_cpu(x, y, z, plan_add(x, run, y, run, z, run), alpha, serial_for());
}

#define VECADD_INSTANTIATE_CPU(T)                                                                \
  template void add_n_cpu<T>(const T* const*, const alpha_t<T>*, T*, const Plan&,                \
                             const ParallelFor&);                                                \
  template void add_cpu<T>(const T*, const T*, T*, const Plan&, alpha_t<T>, const ParallelFor&); \
  template void add_cpu<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CPU)
#undef VECADD_INSTANTIATE_CPU

}  // namespace vecadd
