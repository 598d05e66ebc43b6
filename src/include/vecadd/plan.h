// vecadd's planner: decides, once per call and on the host, how z = x + alpha * y walks its
// arrays. Like torch's TensorIterator, but for two inputs and one output and with no torch:
// size-1 dimensions are dropped, the rest ordered by z's strides (z's innermost last) and
// merged wherever x, y and z all allow, and the kernel and index width are picked from what
// remains. The add_cpu/add_cuda overloads that take a Plan run it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace vecadd {

// Most dimensions one kernel launch walks after merging; a call with more walks the extra
// outer dimensions on the host, one launch per index.
inline constexpr int kMaxDims = 8;

// Dimensions of size 2 or more that any array can have (its element count fits 63 bits).
inline constexpr int kMaxPlanDims = 64;

// Shape and element strides (not bytes) of a broadcast, possibly non-contiguous call.
// Dimension 0 is the outermost; a stride of 0 repeats an element along that dimension.
struct StridedLayout {
  int ndim = 0;
  std::int64_t sizes[kMaxDims] = {};
  std::int64_t x_strides[kMaxDims] = {};
  std::int64_t y_strides[kMaxDims] = {};
  std::int64_t z_strides[kMaxDims] = {};
};

// Number of elements a layout covers (1 for ndim == 0, like a 0-dim tensor).
inline std::int64_t element_count(const StridedLayout& layout) {
  std::int64_t count = 1;
  for (int d = 0; d < layout.ndim; ++d) {
    count *= layout.sizes[d];
  }
  return count;
}

// One operand as its owner sees it: sizes and element strides, outermost first. Operands
// broadcast as in NumPy and torch: trailing dimensions line up, and a size-1 or missing
// dimension repeats. `strides == nullptr` means dense row-major.
struct Operand {
  int ndim = 0;
  const std::int64_t* sizes = nullptr;
  const std::int64_t* strides = nullptr;
};

// Which kernel runs a call.
enum class Kernel : std::uint8_t {
  kNothing,     // z has no elements
  kContiguous,  // x, y and z are one dense run each, in the same memory order
  kRows,        // rows contiguous in z, each of x and y contiguous or one repeated element
                // along them, every row on a 16-byte boundary (CUDA; the CPU walks them too)
  kStrided,     // anything else: each element's offsets are computed from its index
};

// Width of the index arithmetic inside a launch: 32 bits when no index or offset can exceed it.
enum class IndexWidth : std::uint8_t { k32, k64 };

// Dimensions of a plan that lie outside the kMaxDims a launch walks: looped on the host.
struct OuterDimensions {
  int ndim = 0;
  std::int64_t sizes[kMaxPlanDims - kMaxDims];
  std::int64_t x_strides[kMaxPlanDims - kMaxDims];
  std::int64_t y_strides[kMaxPlanDims - kMaxDims];
  std::int64_t z_strides[kMaxPlanDims - kMaxDims];
};

// How one call runs: made by plan_add for particular arrays (alignment is part of it), run
// by add_cpu or add_cuda on those same arrays.
struct Plan {
  Kernel kernel = Kernel::kNothing;
  IndexWidth index_width = IndexWidth::k64;
  std::int64_t count = 0;       // elements of z
  bool vector_aligned = false;  // x, y and z all start on a 16-byte boundary
  bool x_repeats = false;       // kRows: x is one element repeated along each row
  bool y_repeats = false;       // kRows: likewise y
  StridedLayout layout;         // merged dimensions one launch walks (kContiguous: one)
  OuterDimensions outer;        // merged dimensions outside those, looped on the host
};

// Plans z = x + alpha * y over arrays of `element_size` bytes each. z must have the
// broadcast shape of x and y: std::invalid_argument names the operand and dimension when
// it does not. z must not partly overlap x or y (being the very same array is fine), and
// must not have elements that share memory; the planner does not check either.
Plan plan_add(const void* x, const Operand& x_shape, const void* y, const Operand& y_shape,
              const void* z, const Operand& z_shape, std::size_t element_size);

// The same for a layout already in the planner's terms (broadcast strides, any order).
Plan plan_add(const void* x, const void* y, const void* z, const StridedLayout& layout,
              std::size_t element_size);

// Typed front ends, so that callers need not pass sizeof(T).
template <class T>
Plan plan_add(const T* x, const Operand& x_shape, const T* y, const Operand& y_shape, const T* z,
              const Operand& z_shape) {
  return plan_add(static_cast<const void*>(x), x_shape, static_cast<const void*>(y), y_shape,
                  static_cast<const void*>(z), z_shape, sizeof(T));
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
