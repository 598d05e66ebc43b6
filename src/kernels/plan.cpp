// The planner (vecadd/plan.h): from the caller's shapes to merged dimensions, a kernel and an
// index width.
#include "vecadd/plan.h"

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

std::string text(std::int64_t value) {
  return std::to_string(value);
}

// Dimensions while planning: appended one at a time, each with every operand's stride.
struct Gathered {
  int operands = 0;
  std::vector<std::int64_t> sizes;
  std::vector<std::vector<std::int64_t>> strides;  // per dimension: every operand's stride

  void push(std::int64_t size, std::vector<std::int64_t> operand_strides) {
    if (static_cast<int>(sizes.size()) == kMaxPlanDims) {
      fail("more than " + text(kMaxPlanDims) + " dimensions of size 2 or more; expected fewer");
    }
    sizes.push_back(size);
    strides.push_back(std::move(operand_strides));
  }

  int ndim() const { return static_cast<int>(sizes.size()); }

  // Dimensions [first, last) as a plan's Dimensions.
  Dimensions slice(int first, int last) const {
    Dimensions dims;
    dims.ndim = last - first;
    dims.operands = operands;
    dims.sizes.assign(sizes.begin() + first, sizes.begin() + last);
    dims.strides.resize(static_cast<std::size_t>(operands) * static_cast<std::size_t>(dims.ndim));
    for (int o = 0; o < operands; ++o) {
      for (int d = 0; d < dims.ndim; ++d) {
        dims.strides[static_cast<std::size_t>(o * dims.ndim + d)] = strides[first + d][o];
      }
    }
    return dims;
  }
};

std::int64_t magnitude(std::int64_t value) {
  return value < 0 ? -value : value;
}

bool is_vector_aligned(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % kVectorBytes == 0;
}

// Orders the dimensions by z's strides (z is the last operand), largest outermost (stable, so
// equal strides keep their order), then merges each into its inner neighbour wherever every
// operand allows.
Gathered order_and_merge(const Gathered& kept) {
  const int z = kept.operands - 1;
  std::vector<int> order(static_cast<std::size_t>(kept.ndim()));
  for (int d = 0; d < kept.ndim(); ++d) {
    order[d] = d;
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return magnitude(kept.strides[a][z]) > magnitude(kept.strides[b][z]);
  });
  // Built innermost first, then reversed.
  Gathered merged;
  merged.operands = kept.operands;
  for (int i = kept.ndim() - 1; i >= 0; --i) {
    const int d = order[i];
    if (merged.ndim() > 0) {
      const std::int64_t size = merged.sizes.back();
      const std::vector<std::int64_t>& inner = merged.strides.back();
      bool mergeable = true;
      for (int o = 0; o < kept.operands && mergeable; ++o) {
        mergeable = kept.strides[d][o] == inner[o] * size;
      }
      if (mergeable) {
        merged.sizes.back() *= kept.sizes[d];
        continue;
      }
    }
    merged.push(kept.sizes[d], kept.strides[d]);
  }
  std::reverse(merged.sizes.begin(), merged.sizes.end());
  std::reverse(merged.strides.begin(), merged.strides.end());
  return merged;
}

// Whether an operand's rows are 16-byte packs: contiguous along the row, and every row of
// it (over all outer dimensions) starting on a 16-byte boundary.
bool rows_are_packs(const void* data, int operand, const Gathered& dims, std::int64_t width) {
  const int inner = dims.ndim() - 1;
  if (dims.strides[inner][operand] != 1 || !is_vector_aligned(data)) {
    return false;
  }
  for (int d = 0; d < inner; ++d) {
    if (dims.strides[d][operand] % width != 0) {
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

// The one dense run of `count` elements every operand is.
Dimensions one_run(int operands, std::int64_t count) {
  Dimensions dims;
  dims.ndim = 1;
  dims.operands = operands;
  dims.sizes = {count};
  dims.strides.assign(static_cast<std::size_t>(operands), 1);
  return dims;
}

Plan plan_dimensions(const std::vector<const void*>& pointers, const Gathered& kept,
                     std::int64_t count, std::size_t element_size) {
  Plan plan;
  plan.count = count;
  plan.inputs = kept.operands - 1;
  plan.outer.operands = plan.launch.operands = kept.operands;
  if (count == 0) {
    return plan;
  }
  plan.vector_aligned = std::all_of(pointers.begin(), pointers.end(), is_vector_aligned);
  const Gathered dims = order_and_merge(kept);
  bool dense = dims.ndim() <= 1;
  for (int o = 0; o < kept.operands && dims.ndim() == 1; ++o) {
    dense = dense && dims.strides[0][o] == 1;
  }
  if (dense) {
    plan.kernel = Kernel::kContiguous;
    plan.launch = one_run(kept.operands, count);
    plan.index_width = count <= kMaxIndex32 ? IndexWidth::k32 : IndexWidth::k64;
    return plan;
  }

  // The innermost kMaxDims dimensions are one launch's; the rest loop on the host.
  const int outer = std::max(0, dims.ndim() - kMaxDims);
  plan.outer = dims.slice(0, outer);
  plan.launch = dims.slice(outer, dims.ndim());

  const int inner = dims.ndim() - 1;
  const int z = kept.operands - 1;
  const auto width = static_cast<std::int64_t>(kVectorBytes / element_size);
  bool rows = element_size <= kVectorBytes && kVectorBytes % element_size == 0 &&
              dims.sizes[inner] % width == 0 && rows_are_packs(pointers[z], z, dims, width);
  bool any_packed = false;
  plan.repeats.assign(static_cast<std::size_t>(plan.inputs), false);
  for (int i = 0; i < plan.inputs && rows; ++i) {
    plan.repeats[i] = dims.strides[inner][i] == 0;
    any_packed = any_packed || !plan.repeats[i];
    rows = plan.repeats[i] || rows_are_packs(pointers[i], i, dims, width);
  }
  rows = rows && any_packed;
  plan.kernel = rows ? Kernel::kRows : Kernel::kStrided;
  if (!rows) {
    plan.repeats.assign(static_cast<std::size_t>(plan.inputs), false);
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
  BroadcastWalk(const Operand& operand, std::string name, const Operand& z_shape)
      : operand_(operand), name_(std::move(name)), offset_(z_shape.ndim - operand.ndim) {
    if (operand.ndim < 0 || operand.ndim > z_shape.ndim) {
      fail("operand '" + name_ + "' has " + text(operand.ndim) +
           " dimensions; expected at most the " + text(z_shape.ndim) + " of z");
    }
  }

  // Called for d = z's last dimension down to 0, in that order.
  std::int64_t stride_along(int d, std::int64_t z_size) {
    if (d < offset_) {
      return 0;
    }
    const int own = d - offset_;
    const std::int64_t size = operand_.sizes[own];
    const std::int64_t stride = operand_.strides ? operand_.strides[own] : dense_;
    dense_ *= size;
    if (size == z_size) {
      return stride;
    }
    if (size != 1) {
      fail("operand '" + name_ + "' has size " + text(size) + " in dimension " + text(own) +
           "; expected " + text(z_size) + " (z's size there) or 1 to broadcast");
    }
    return 0;
  }

 private:
  const Operand& operand_;
  std::string name_;
  int offset_;
  std::int64_t dense_ = 1;
};

}  // namespace

Plan plan_add_n(const void* const* inputs, const Operand* input_shapes, int input_count,
                const void* z, const Operand& z_shape, std::size_t element_size,
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
  std::vector<BroadcastWalk> walks;
  walks.reserve(static_cast<std::size_t>(input_count) + 1);
  for (int i = 0; i < input_count; ++i) {
    walks.emplace_back(input_shapes[i], names ? names[i] : "input " + text(i), z_shape);
  }
  walks.emplace_back(z_shape, "z", z_shape);
  // Gathered innermost first, then reversed; size-1 dimensions are dropped.
  Gathered kept;
  kept.operands = input_count + 1;
  for (int d = z_shape.ndim - 1; d >= 0; --d) {
    const std::int64_t size = z_shape.sizes[d];
    std::vector<std::int64_t> strides;
    strides.reserve(walks.size());
    for (BroadcastWalk& walk : walks) {
      strides.push_back(walk.stride_along(d, size));
    }
    if (size != 1 && count != 0) {
      kept.push(size, std::move(strides));
    }
  }
  std::reverse(kept.sizes.begin(), kept.sizes.end());
  std::reverse(kept.strides.begin(), kept.strides.end());
  std::vector<const void*> pointers(inputs, inputs + input_count);
  pointers.push_back(z);
  return plan_dimensions(pointers, kept, count, element_size);
}

Plan plan_add(const void* x, const Operand& x_shape, const void* y, const Operand& y_shape,
              const void* z, const Operand& z_shape, std::size_t element_size) {
  const void* const inputs[] = {x, y};
  const Operand shapes[] = {x_shape, y_shape};
  const char* const names[] = {"x", "y"};
  return plan_add_n(inputs, shapes, 2, z, z_shape, element_size, names);
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
