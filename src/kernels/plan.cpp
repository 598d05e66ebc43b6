// The planner (vecadd/plan.h): from the caller's shapes to merged dimensions, a kernel and an
// index width.
#include "vecadd/plan.h"
#include "vecadd/vecadd.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace vecadd {
namespace {

constexpr std::size_t kVectorBytes = 16;
// Largest index or offset for 32-bit arithmetic, with headroom so that index + stride cannot wrap.
constexpr std::int64_t kMaxIndex32 = std::numeric_limits<std::int32_t>::max() / 2;

[[noreturn]] void fail(const std::string& message) {
  throw std::invalid_argument("vecadd::plan_add_n: " + message);
}

[[noreturn]] void fail_sum(const std::string& message) {
  throw std::invalid_argument("vecadd::plan_sum: " + message);
}

std::string text(std::int64_t value) {
  return std::to_string(value);
}

// Appends a dimension with every operand's stride (strides[o]) to `dims`.
void push(Dimensions& dims, std::int64_t size, const std::int64_t* strides) {
  if (dims.ndim == kMaxPlanDims) {
    fail("more than " + text(kMaxPlanDims) + " dimensions of size 2 or more; expected fewer");
  }
  dims.sizes[dims.ndim] = size;
  for (int o = 0; o < dims.operands; ++o) {
    dims.set_stride(o, dims.ndim, strides[o]);
  }
  ++dims.ndim;
}

// Reverses the order of the dimensions (gathered innermost first).
void reverse(Dimensions& dims) {
  for (int d = 0, e = dims.ndim - 1; d < e; ++d, --e) {
    std::swap(dims.sizes[d], dims.sizes[e]);
    for (int o = 0; o < dims.operands; ++o) {
      const std::int64_t first = dims.stride(o, d);
      dims.set_stride(o, d, dims.stride(o, e));
      dims.set_stride(o, e, first);
    }
  }
}

// Dimensions [first, last) of `dims`.
void slice(const Dimensions& dims, int first, int last, Dimensions& into) {
  into.hold(dims.operands);
  into.ndim = last - first;
  for (int d = 0; d < into.ndim; ++d) {
    into.sizes[d] = dims.sizes[first + d];
    for (int o = 0; o < dims.operands; ++o) {
      into.set_stride(o, d, dims.stride(o, first + d));
    }
  }
}

std::int64_t magnitude(std::int64_t value) {
  return value < 0 ? -value : value;
}

bool is_aligned(const void* pointer, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

// Orders the dimensions by z's strides (z is the last operand), largest outermost (stable, so
// equal strides keep their order), then merges each into its inner neighbour wherever every
// operand allows.
void order_and_merge(const Dimensions& kept, Dimensions& merged) {
  const int z = kept.operands - 1;
  int order[kMaxPlanDims];
  for (int d = 0; d < kept.ndim; ++d) {
    order[d] = d;
  }
  // Insertion sort: at most 63 dimensions, usually one to four.
  for (int i = 1; i < kept.ndim; ++i) {
    for (int j = i;
         j > 0 && magnitude(kept.stride(z, order[j])) > magnitude(kept.stride(z, order[j - 1]));
         --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  // Built innermost first, then reversed.
  merged.hold(kept.operands);
  merged.ndim = 0;
  PerOperand<std::int64_t> column(kept.operands);
  for (int i = kept.ndim - 1; i >= 0; --i) {
    const int d = order[i];
    if (merged.ndim > 0) {
      const int inner = merged.ndim - 1;
      const std::int64_t size = merged.sizes[inner];
      bool mergeable = true;
      for (int o = 0; o < kept.operands && mergeable; ++o) {
        mergeable = kept.stride(o, d) == merged.stride(o, inner) * size;
      }
      if (mergeable) {
        merged.sizes[inner] *= kept.sizes[d];
        continue;
      }
    }
    for (int o = 0; o < kept.operands; ++o) {
      column[o] = kept.stride(o, d);
    }
    push(merged, kept.sizes[d], column.data());
  }
  reverse(merged);
}

// Whether an operand's rows are vector packs: contiguous along the row, and every row of it
// (over all outer dimensions) starting on the boundary of a `width`-element vector.
bool rows_are_packs(const void* data, int operand, const Dimensions& dims, std::int64_t width,
                    std::size_t element_size) {
  const int inner = dims.ndim - 1;
  if (dims.stride(operand, inner) != 1 || !is_aligned(data, width * element_size)) {
    return false;
  }
  for (int d = 0; d < inner; ++d) {
    if (dims.stride(operand, d) % width != 0) {
      return false;
    }
  }
  return true;
}

// Largest element offset a launch over `dims` reaches in one operand.
std::int64_t reach(const Dimensions& dims, int operand) {
  std::int64_t farthest = 0;
  for (int d = 0; d < dims.ndim; ++d) {
    farthest += (dims.sizes[d] - 1) * magnitude(dims.stride(operand, d));
  }
  return farthest;
}

// `pointers` and `element_sizes` have one entry per operand (inputs, then z); a null input
// pointer is a constant, which repeats everywhere and takes no part in the layout. `one_run`:
// every array is one dense run of `count` elements in the same order, and `kept` holds only
// the operand count.
Plan plan_dimensions(const void* const* pointers, const std::size_t* element_sizes,
                     const Dimensions& kept, std::int64_t count, bool one_run) {
  Plan plan;
  plan.count = count;
  plan.inputs = kept.operands - 1;
  plan.launch.hold(kept.operands);
  plan.outer.hold(kept.operands);
  if (count == 0) {
    return plan;
  }
  const auto is_array = [&](int o) { return pointers[o] != nullptr || o == plan.inputs; };
  std::size_t widest = 1;
  for (int o = 0; o < kept.operands; ++o) {
    widest = is_array(o) ? std::max(widest, element_sizes[o]) : widest;
  }
  const auto width = static_cast<std::int64_t>(std::max<std::size_t>(1, kVectorBytes / widest));
  plan.vector_width = static_cast<int>(width);
  plan.vector_aligned = true;
  for (int o = 0; o < kept.operands; ++o) {
    plan.vector_aligned = plan.vector_aligned && is_aligned(pointers[o], width * element_sizes[o]);
  }
  Dimensions dims;
  if (one_run) {
    dims.hold(kept.operands);
  } else {
    order_and_merge(kept, dims);
  }
  bool dense = one_run || dims.ndim <= 1;
  for (int o = 0; o < kept.operands && !one_run && dims.ndim == 1; ++o) {
    dense = dense && (!is_array(o) || dims.stride(o, 0) == 1);
  }
  if (dense) {
    plan.kernel = Kernel::kContiguous;
    plan.launch.ndim = 1;
    plan.launch.sizes[0] = count;
    for (int o = 0; o < kept.operands; ++o) {
      plan.launch.set_stride(o, 0, is_array(o) ? 1 : 0);
    }
    plan.index_width = count <= kMaxIndex32 ? IndexWidth::k32 : IndexWidth::k64;
    return plan;
  }

  // The innermost kMaxDims dimensions are one launch's; the rest loop on the host.
  const int outer = std::max(0, dims.ndim - kMaxDims);
  slice(dims, 0, outer, plan.outer);
  slice(dims, outer, dims.ndim, plan.launch);

  const int inner = dims.ndim - 1;
  const int z = kept.operands - 1;
  bool rows = plan.inputs <= 64 && widest <= kVectorBytes && kVectorBytes % widest == 0 &&
              dims.sizes[inner] % width == 0 &&
              rows_are_packs(pointers[z], z, dims, width, element_sizes[z]);
  bool any_packed = false;
  for (int i = 0; i < plan.inputs && rows; ++i) {
    const bool repeats = dims.stride(i, inner) == 0;
    plan.repeats |= repeats ? std::uint64_t{1} << i : 0;
    any_packed = any_packed || !repeats;
    rows = repeats || rows_are_packs(pointers[i], i, dims, width, element_sizes[i]);
  }
  rows = rows && any_packed;
  plan.kernel = rows ? Kernel::kRows : Kernel::kStrided;
  if (!rows) {
    plan.repeats = 0;
  }
  bool fits_32 = plan.launch.count() <= kMaxIndex32;
  for (int o = 0; o < kept.operands && fits_32; ++o) {
    fits_32 = reach(plan.launch, o) <= kMaxIndex32;
  }
  plan.index_width = fits_32 ? IndexWidth::k32 : IndexWidth::k64;
  return plan;
}

// Walks one operand's dimensions from the innermost out, lined up with z's: the element
// stride it has along each of z's dimensions (0 where it repeats).
class BroadcastWalk {
 public:
  BroadcastWalk() = default;
  // `name` names the operand in errors; without one, it is "input `index`".
  BroadcastWalk(const Operand& operand, const char* name, int index, const Operand& z_shape)
      : operand_(&operand), name_(name), index_(index), offset_(z_shape.ndim - operand.ndim) {
    if (operand.ndim < 0 || operand.ndim > z_shape.ndim) {
      fail("operand '" + name_text() + "' has " + text(operand.ndim) +
           " dimensions; expected at most the " + text(z_shape.ndim) + " of z");
    }
  }

  // Called for d = z's last dimension down to 0, in that order.
  std::int64_t stride_along(int d, std::int64_t z_size) {
    if (d < offset_) {
      return 0;
    }
    const int own = d - offset_;
    const std::int64_t size = operand_->sizes[own];
    const std::int64_t stride = operand_->strides ? operand_->strides[own] : dense_;
    dense_ *= size;
    if (size == z_size) {
      return stride;
    }
    if (size != 1) {
      fail("operand '" + name_text() + "' has size " + text(size) + " in dimension " + text(own) +
           "; expected " + text(z_size) + " (z's size there) or 1 to broadcast");
    }
    return 0;
  }

 private:
  std::string name_text() const { return name_ ? name_ : "input " + text(index_); }

  const Operand* operand_ = nullptr;
  const char* name_ = nullptr;
  int index_ = 0;
  int offset_ = 0;
  std::int64_t dense_ = 1;
};

// Whether `operand` is z's shape laid out densely in row-major order (strides of size-1
// dimensions aside), or a constant (no array, no dimensions).
bool is_run_of(const Operand& operand, const void* data, const Operand& z_shape) {
  if (data == nullptr && operand.ndim == 0) {
    return true;
  }
  if (operand.ndim != z_shape.ndim) {
    return false;
  }
  std::int64_t dense = 1;
  for (int d = operand.ndim - 1; d >= 0; --d) {
    const std::int64_t size = operand.sizes[d];
    if (size != z_shape.sizes[d] ||
        (operand.strides != nullptr && size != 1 && operand.strides[d] != dense)) {
      return false;
    }
    dense *= size;
  }
  return true;
}

}  // namespace

Plan plan_add_n(const void* const* inputs, const Operand* input_shapes, int input_count,
                const void* z, const Operand& z_shape, const std::size_t* element_sizes,
                const char* const* names) {
  if (input_count < 1) {
    fail("no inputs; expected at least one");
  }
  if (z_shape.ndim < 0) {
    fail("z has " + text(z_shape.ndim) + " dimensions; expected 0 or more");
  }
  std::int64_t count = 1;
  for (int d = 0; d < z_shape.ndim; ++d) {
    if (z_shape.sizes[d] < 0) {
      fail("z has size " + text(z_shape.sizes[d]) + " in dimension " + text(d) +
           "; expected 0 or more");
    }
    count *= z_shape.sizes[d];
  }
  const int operands = input_count + 1;
  PerOperand<const void*> pointers(operands);
  std::copy(inputs, inputs + input_count, pointers.data());
  pointers[input_count] = z;
  // Most calls: operands of z's shape, each one dense run; no walk or merge to make.
  bool one_run = count != 0 && is_run_of(z_shape, z, z_shape);
  for (int i = 0; i < input_count && one_run; ++i) {
    one_run = is_run_of(input_shapes[i], inputs[i], z_shape);
  }
  if (one_run) {
    Dimensions operand_count;
    operand_count.hold(operands);
    return plan_dimensions(pointers.data(), element_sizes, operand_count, count, true);
  }
  PerOperand<BroadcastWalk> walks(operands);
  for (int i = 0; i < input_count; ++i) {
    walks[i] = BroadcastWalk(input_shapes[i], names ? names[i] : nullptr, i, z_shape);
  }
  walks[input_count] = BroadcastWalk(z_shape, "z", input_count, z_shape);
  // Gathered innermost first, then reversed; size-1 dimensions are dropped.
  Dimensions kept;
  kept.hold(operands);
  PerOperand<std::int64_t> column(operands);
  for (int d = z_shape.ndim - 1; d >= 0; --d) {
    const std::int64_t size = z_shape.sizes[d];
    for (int o = 0; o <= input_count; ++o) {
      column[o] = walks[o].stride_along(d, size);
    }
    if (size != 1 && count != 0) {
      push(kept, size, column.data());
    }
  }
  reverse(kept);
  return plan_dimensions(pointers.data(), element_sizes, kept, count, false);
}

Plan plan_add_n(const void* const* inputs, const Operand* input_shapes, int input_count,
                const void* z, const Operand& z_shape, std::size_t element_size,
                const char* const* names) {
  PerOperand<std::size_t> sizes(std::max(input_count, 0) + 1);
  std::fill(sizes.data(), sizes.data() + std::max(input_count, 0) + 1, element_size);
  return plan_add_n(inputs, input_shapes, input_count, z, z_shape, sizes.data(), names);
}

Plan plan_sum(const Sum& sum, const char* const* names) {
  const auto name = [&](int i) { return names ? std::string(names[i]) : "input " + text(i); };
  const int count = std::max(sum.count, 0);
  PerOperand<const void*> pointers(count);
  PerOperand<Operand> shapes(count);
  PerOperand<std::size_t> sizes(count + 1);
  for (int i = 0; i < count; ++i) {
    const SumInput& input = sum.inputs[i];
    if (dtype_size(input.dtype) == 0) {
      fail_sum(name(i) + " has dtype number " + text(static_cast<int>(input.dtype)) +
               "; expected a vecadd::DType");
    }
    if (input.data == nullptr && input.shape.ndim != 0) {
      fail_sum(name(i) + " is a constant (its data is null) with " + text(input.shape.ndim) +
               " dimensions; expected 0");
    }
    if (input.scalar && input.data != nullptr) {
      fail_sum(name(i) +
               " is a scalar but has an array; expected its value in `value` and "
               "null data");
    }
    pointers[i] = input.data;
    shapes[i] = input.shape;
    sizes[i] = dtype_size(input.dtype);
  }
  if (dtype_size(sum.z.dtype) == 0 || dtype_size(sum.common) == 0) {
    fail_sum("z's dtype number " + text(static_cast<int>(sum.z.dtype)) +
             " or the common dtype "
             "number " +
             text(static_cast<int>(sum.common)) + " is not a vecadd::DType");
  }
  sizes[count] = dtype_size(sum.z.dtype);
  return plan_add_n(pointers.data(), shapes.data(), sum.count, sum.z.data, sum.z.shape,
                    sizes.data(), names);
}

Plan plan_add(const void* x, const Operand& x_shape, const void* y, const Operand& y_shape,
              const void* z, const Operand& z_shape, std::size_t element_size) {
  const void* const inputs[] = {x, y};
  const Operand shapes[] = {x_shape, y_shape};
  const char* const names[] = {"x", "y"};
  return plan_add_n(inputs, shapes, 2, z, z_shape, element_size, names);
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kBool:
    case DType::kUInt8:
    case DType::kInt8:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
    case DType::kComplex32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  static constexpr const char* kNames[kDTypeCount] = {
      "bool",     "uint8",   "int8",    "int16",     "int32",     "int64",     "float16",
      "bfloat16", "float32", "float64", "complex32", "complex64", "complex128"};
  const auto index = static_cast<std::size_t>(dtype);
  return index < kDTypeCount ? kNames[index] : "unknown";
}

ParallelFor serial_for() {
  return {1, [](std::int64_t count, std::int64_t /*grain*/, const RangeBody& body) {
            if (count > 0) {
              body(0, count);
            }
          }};
}

ParallelFor default_parallel_for() {
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return {threads, [threads](std::int64_t count, std::int64_t grain, const RangeBody& body) {
            if (count <= 0) {
              return;
            }
            const std::int64_t chunks =
                std::min<std::int64_t>(threads, std::max<std::int64_t>(1, count / grain));
            if (chunks == 1) {
              body(0, count);
              return;
            }
            std::vector<std::thread> workers;
            workers.reserve(static_cast<std::size_t>(chunks - 1));
            const std::int64_t step = (count + chunks - 1) / chunks;
            for (std::int64_t begin = step; begin < count; begin += step) {
              workers.emplace_back(body, begin, std::min(count, begin + step));
            }
            body(0, std::min(count, step));
            for (std::thread& worker : workers) {
              worker.join();
            }
          }};
}

}  // namespace vecadd
