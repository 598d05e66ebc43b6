// The CPU kernels' interface between the runner (sum_cpu.cpp: plans, threads, dimensions) and
// the row kernels (sum_rows.cpp), which are compiled once per instruction set and picked once
// per process, as torch picks its CPU kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "element_math.h"
#include "sum_call.h"
#include "vecadd/vecadd.h"

namespace vecadd::detail {

// Plain values, one per operand: on the stack for up to kInlineOperands of them and left
// uninitialized (every call fills what it reads), on the heap beyond. PerOperand's zeroing and
// its vector cost a 16-element call more than its kernel.
template <class T>
class OperandArray {
 public:
  explicit OperandArray(int count)
      : heap_(count > kInlineOperands ? new T[static_cast<std::size_t>(count)] : nullptr) {}
  T* data() { return heap_ ? heap_.get() : inline_; }
  T& operator[](int index) { return data()[index]; }

 private:
  T inline_[kInlineOperands];
  std::unique_ptr<T[]> heap_;
};

// One operand of a sum as a row kernel reads it: an array (element offsets and steps come with
// each row) or, with `data` nullptr, a constant already in the compute type. Plain data, filled
// field by field on every call.
struct RowOperand {
  char* data;
  std::int64_t element_size;
  DType dtype;
  bool weight_is_one;  // the first term is the input itself
  ComputeValue constant;
  ComputeValue weight;  // in the compute type
};

// One call: its inputs and z, the common dtype and its compute kind.
struct RowSum {
  const RowOperand* inputs = nullptr;
  int count = 0;
  RowOperand z;
  DType common = DType::kFloat32;
  ComputeKind kind = ComputeKind::kFloat;
};

// Sums `rows` rows of n elements: operand o (inputs, then z) starts row r at
// base[o] + r * row_steps[o] elements from its data and advances steps[o] elements per element.
// (A kernel call takes a plan's inner two dimensions, so that what a row costs besides its loop
// is decided once per call.)
using RowKernel = void (*)(const RowSum& sum, const std::int64_t* base, const std::int64_t* steps,
                           std::int64_t n, std::int64_t rows, const std::int64_t* row_steps);

// What one instruction set's build of sum_rows.cpp provides: a row kernel per common dtype.
struct CpuKernels {
  const char* capability;
  RowKernel sum_row[kDTypeCount];
};

// Each build of sum_rows.cpp defines one of these (x86-64: default, avx2, avx512; others: the
// default alone, named for the architecture).
CpuKernels cpu_kernels_default();
#if defined(__x86_64__) || defined(_M_X64)
CpuKernels cpu_kernels_avx2();
CpuKernels cpu_kernels_avx512();
#endif

}  // namespace vecadd::detail
