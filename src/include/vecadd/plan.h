// vecadd's planner: decides, once per call and on the host, how a weighted sum
// z = w_0 * x_0 + ... + w_(n-1) * x_(n-1) walks its arrays. Like torch's TensorIterator, but for
// n inputs and one output and with no torch: size-1 dimensions are dropped, the rest ordered by
// z's strides (z's innermost last) and merged wherever every operand allows, and the kernel and
// index width are picked from what remains. z = x + alpha * y is the two-input case. The
// add_n_cpu/add_n_cuda (and add_cpu/add_cuda) overloads that take a Plan run it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace vecadd {

// Most dimensions one kernel launch walks after merging; a call with more walks the extra
// outer dimensions on the host, one launch per index.
inline constexpr int kMaxDims = 8;

// Dimensions of size 2 or more that any array can have (its element count fits 63 bits).
inline constexpr int kMaxPlanDims = 64;

// One operand as its owner sees it: sizes and element strides, outermost first. Operands
// broadcast as in NumPy and torch: trailing dimensions line up, and a size-1 or missing
// dimension repeats. `strides == nullptr` means dense row-major.
struct Operand {
  int ndim = 0;
  const std::int64_t* sizes = nullptr;
  const std::int64_t* strides = nullptr;
};

// Operands whose strides a Dimensions keeps on the stack (add's x, y and z, add_n's up to four
// tensors and z); more go to the heap, whose allocations cost more than a small call's kernel.
inline constexpr int kInlineOperands = 5;

// One value per operand (or per input): on the stack for up to kInlineOperands of them, add's
// common call, which then allocates nothing; on the heap beyond.
template <class T>
class PerOperand {
 public:
  explicit PerOperand(int count) : heap_(count > kInlineOperands ? count : 0) {}
  T* data() { return heap_.empty() ? inline_ : heap_.data(); }
  const T* data() const { return heap_.empty() ? inline_ : heap_.data(); }
  T& operator[](int index) { return data()[index]; }
  const T& operator[](int index) const { return data()[index]; }

 private:
  T inline_[kInlineOperands] = {};
  std::vector<T> heap_;
};

// Some dimensions of a call, outermost first, and each operand's element strides along them
// (the inputs in order, then z); a stride of 0 repeats an element along that dimension.
class Dimensions {
 public:
  int ndim = 0;
  int operands = 0;
  std::int64_t sizes[kMaxPlanDims];  // the first ndim are the dimensions' sizes

  // Room for `operand_count` operands' strides over up to kMaxPlanDims dimensions.
  void hold(int operand_count) {
    operands = operand_count;
    if (operand_count > kInlineOperands) {
      heap_.resize(static_cast<std::size_t>(operand_count) * kMaxPlanDims);
    }
  }
  std::int64_t stride(int operand, int d) const { return table()[operand * kMaxPlanDims + d]; }
  void set_stride(int operand, int d, std::int64_t stride) {
    table()[operand * kMaxPlanDims + d] = stride;
  }
  // Elements the dimensions cover (1 for none, like a 0-dim tensor).
  std::int64_t count() const {
    std::int64_t product = 1;
    for (int d = 0; d < ndim; ++d) {
      product *= sizes[d];
    }
    return product;
  }

 private:
  const std::int64_t* table() const { return operands > kInlineOperands ? heap_.data() : inline_; }
  std::int64_t* table() { return operands > kInlineOperands ? heap_.data() : inline_; }
  std::int64_t inline_[kInlineOperands * kMaxPlanDims];
  std::vector<std::int64_t> heap_;
};

// Which kernel runs a call.
enum class Kernel : std::uint8_t {
  kNothing,     // z has no elements
  kContiguous,  // every operand is one dense run, in the same memory order
  kRows,        // rows contiguous in z, each input contiguous or one repeated element along
                // them, every row on a 16-byte boundary (CUDA; the CPU walks them too)
  kStrided,     // anything else: each element's offsets are computed from its index
};

// Width of the index arithmetic inside a launch: 32 bits when no index or offset can exceed it.
enum class IndexWidth : std::uint8_t { k32, k64 };

// How one call runs: made by plan_add_n for particular arrays (alignment is part of it), run by
// add_n_cpu or add_n_cuda on those same arrays.
struct Plan {
  Kernel kernel = Kernel::kNothing;
  IndexWidth index_width = IndexWidth::k64;
  std::int64_t count = 0;       // elements of z
  int inputs = 0;               // operands 0 .. inputs - 1; z is operand `inputs`
  bool vector_aligned = false;  // every array starts on the boundary of its vector access
  int vector_width = 1;         // elements of one vector access: 16 bytes over the widest
                                // array's element size (of one size: 16 / element_size)
  std::uint64_t repeats = 0;    // kRows (planned for up to 64 inputs): bit i is set where
                                // input i is one element repeated along each row
  Dimensions launch;            // merged dimensions one launch walks (kContiguous: one)
  Dimensions outer;             // merged dimensions outside those, looped on the host
};

// Plans z = sum of weights[i] * inputs[i] over arrays of `element_size` bytes each. z must have
// the broadcast shape of the inputs: std::invalid_argument names the operand ("input 2", or
// the name given in `names`) and the dimension when it does not. z must not partly overlap an
// input (being the very same array is fine), and must not have elements that share memory;
// the planner does not check either.
Plan plan_add_n(const void* const* inputs, const Operand* input_shapes, int input_count,
                const void* z, const Operand& z_shape, std::size_t element_size,
                const char* const* names = nullptr);

// The same for operands of their own element sizes (`element_sizes`: one per input, then z's):
// each array's alignment is checked for vectors of `vector_width` of its own elements. An input
// with a null pointer is a constant (0 dimensions): it repeats everywhere and takes no part in
// the layout. vecadd::plan_sum (vecadd/vecadd.h) plans a Sum this way.
Plan plan_add_n(const void* const* inputs, const Operand* input_shapes, int input_count,
                const void* z, const Operand& z_shape, const std::size_t* element_sizes,
                const char* const* names = nullptr);

// The two-input case: z = x + alpha * y.
Plan plan_add(const void* x, const Operand& x_shape, const void* y, const Operand& y_shape,
              const void* z, const Operand& z_shape, std::size_t element_size);

// Typed front ends, so that callers need not pass sizeof(T).
template <class T>
Plan plan_add(const T* x, const Operand& x_shape, const T* y, const Operand& y_shape, const T* z,
              const Operand& z_shape) {
  return plan_add(static_cast<const void*>(x), x_shape, static_cast<const void*>(y), y_shape,
                  static_cast<const void*>(z), z_shape, sizeof(T));
}

template <class T>
Plan plan_add_n(const T* const* inputs, const Operand* input_shapes, int input_count, const T* z,
                const Operand& z_shape) {
  PerOperand<const void*> untyped(input_count);
  for (int i = 0; i < input_count; ++i) {
    untyped[i] = inputs[i];
  }
  return plan_add_n(untyped.data(), input_shapes, input_count, static_cast<const void*>(z), z_shape,
                    sizeof(T));
}

// How the CPU entry points spread work over threads. `run(count, grain, body)` calls
// body(begin, end) on disjoint ranges covering [0, count), each at least `grain` long
// where count allows, possibly from several threads at once, and returns once all are
// done. `threads` is how many it may use; the planner's CPU runner sizes its ranges by it.
using RangeBody = std::function<void(std::int64_t begin, std::int64_t end)>;
struct ParallelFor {
  int threads = 1;
  std::function<void(std::int64_t count, std::int64_t grain, const RangeBody& body)> run;
};

// Runs everything on the calling thread.
ParallelFor serial_for();

// Splits across std::thread::hardware_concurrency() threads, started for each call that is
// long enough to need them (a caller with a thread pool should pass its own instead).
ParallelFor default_parallel_for();

}  // namespace vecadd
