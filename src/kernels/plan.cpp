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
  throw std::invalid_argument("vecadd::plan_add: " + message);
}

std::string text(std::int64_t value) {
  return std::to_string(value);
}

// The call's dimensions while planning, outermost first.
struct Dimensions {
  int ndim = 0;
  std::int64_t sizes[kMaxPlanDims];
  std::int64_t x_strides[kMaxPlanDims];
  std::int64_t y_strides[kMaxPlanDims];
  std::int64_t z_strides[kMaxPlanDims];

  void push(std::int64_t size, std::int64_t x, std::int64_t y, std::int64_t z) {
    if (ndim == kMaxPlanDims) {
      fail("more than " + text(kMaxPlanDims) + " dimensions of size 2 or more; expected fewer");
    }
    sizes[ndim] = size;
    x_strides[ndim] = x;
    y_strides[ndim] = y;
    z_strides[ndim] = z;
    ++ndim;
  }

  void reverse() {
    std::reverse(sizes, sizes + ndim);
    std::reverse(x_strides, x_strides + ndim);
    std::reverse(y_strides, y_strides + ndim);
    std::reverse(z_strides, z_strides + ndim);
  }
};

std::int64_t magnitude(std::int64_t value) {
  return value < 0 ? -value : value;
}

bool is_vector_aligned(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % kVectorBytes == 0;
}

// Orders the dimensions by z's strides, largest outermost (stable, so equal strides keep
// their order), then merges each into its inner neighbour wherever all three allow.
Dimensions order_and_merge(const Dimensions& kept) {
  int order[kMaxPlanDims];
  for (int d = 0; d < kept.ndim; ++d) {
    order[d] = d;
  }
  // Insertion sort: at most 63 dimensions, usually one to four.
  for (int i = 1; i < kept.ndim; ++i) {
    for (int j = i;
         j > 0 && magnitude(kept.z_strides[order[j]]) > magnitude(kept.z_strides[order[j - 1]]);
         --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  // Built innermost first, then reversed.
  Dimensions merged;
  for (int i = kept.ndim - 1; i >= 0; --i) {
    const int d = order[i];
    if (merged.ndim > 0) {
      const int inner = merged.ndim - 1;
      const std::int64_t size = merged.sizes[inner];
      if (kept.x_strides[d] == merged.x_strides[inner] * size &&
          kept.y_strides[d] == merged.y_strides[inner] * size &&
          kept.z_strides[d] == merged.z_strides[inner] * size) {
        merged.sizes[inner] *= kept.sizes[d];
        continue;
      }
    }
    merged.push(kept.sizes[d], kept.x_strides[d], kept.y_strides[d], kept.z_strides[d]);
  }
  merged.reverse();
  return merged;
}

// Whether an operand's rows are 16-byte packs: contiguous along the row, and every row of
// it (over all outer dimensions) starting on a 16-byte boundary.
bool rows_are_packs(const void* data, const std::int64_t* strides, const Dimensions& dims,
                    std::int64_t width) {
  const int inner = dims.ndim - 1;
  if (strides[inner] != 1 || !is_vector_aligned(data)) {
    return false;
  }
  for (int d = 0; d < inner; ++d) {
    if (strides[d] % width != 0) {
      return false;
    }
  }
  return true;
}

// Largest element offset a launch over `layout` reaches in one operand.
std::int64_t reach(const std::int64_t* strides, const StridedLayout& layout) {
  std::int64_t farthest = 0;
  for (int d = 0; d < layout.ndim; ++d) {
    farthest += (layout.sizes[d] - 1) * magnitude(strides[d]);
  }
  return farthest;
}

Plan plan_dimensions(const void* x, const void* y, const void* z, const Dimensions& kept,
                     std::int64_t count, std::size_t element_size) {
  Plan plan;
  plan.count = count;
  if (count == 0) {
    return plan;
  }
  plan.vector_aligned = is_vector_aligned(x) && is_vector_aligned(y) && is_vector_aligned(z);
  const Dimensions dims = order_and_merge(kept);
  const bool one_run = dims.ndim == 0 || (dims.ndim == 1 && dims.x_strides[0] == 1 &&
                                          dims.y_strides[0] == 1 && dims.z_strides[0] == 1);
  if (one_run) {
    plan.kernel = Kernel::kContiguous;
    plan.layout.ndim = 1;
    plan.layout.sizes[0] = count;
    plan.layout.x_strides[0] = plan.layout.y_strides[0] = plan.layout.z_strides[0] = 1;
    plan.index_width = count <= kMaxIndex32 ? IndexWidth::k32 : IndexWidth::k64;
    return plan;
  }

  // The innermost kMaxDims dimensions are one launch's; the rest loop on the host.
  const int outer = std::max(0, dims.ndim - kMaxDims);
  plan.outer.ndim = outer;
  for (int d = 0; d < outer; ++d) {
    plan.outer.sizes[d] = dims.sizes[d];
    plan.outer.x_strides[d] = dims.x_strides[d];
    plan.outer.y_strides[d] = dims.y_strides[d];
    plan.outer.z_strides[d] = dims.z_strides[d];
  }
  plan.layout.ndim = dims.ndim - outer;
  for (int d = 0; d < plan.layout.ndim; ++d) {
    plan.layout.sizes[d] = dims.sizes[outer + d];
    plan.layout.x_strides[d] = dims.x_strides[outer + d];
    plan.layout.y_strides[d] = dims.y_strides[outer + d];
    plan.layout.z_strides[d] = dims.z_strides[outer + d];
  }

  const int inner = dims.ndim - 1;
  const auto width = static_cast<std::int64_t>(kVectorBytes / element_size);
  plan.x_repeats = dims.x_strides[inner] == 0;
  plan.y_repeats = dims.y_strides[inner] == 0;
  const bool rows = element_size <= kVectorBytes && kVectorBytes % element_size == 0 &&
                    dims.sizes[inner] % width == 0 &&
                    rows_are_packs(z, dims.z_strides, dims, width) &&
                    (plan.x_repeats || rows_are_packs(x, dims.x_strides, dims, width)) &&
                    (plan.y_repeats || rows_are_packs(y, dims.y_strides, dims, width)) &&
                    !(plan.x_repeats && plan.y_repeats);
  plan.kernel = rows ? Kernel::kRows : Kernel::kStrided;
  if (!rows) {
    plan.x_repeats = plan.y_repeats = false;
  }
  const bool fits_32 = element_count(plan.layout) <= kMaxIndex32 &&
                       reach(plan.layout.x_strides, plan.layout) <= kMaxIndex32 &&
                       reach(plan.layout.y_strides, plan.layout) <= kMaxIndex32 &&
                       reach(plan.layout.z_strides, plan.layout) <= kMaxIndex32;
  plan.index_width = fits_32 ? IndexWidth::k32 : IndexWidth::k64;
  return plan;
}

// Walks one operand's dimensions from the innermost out, lined up with z's: the element
// stride it has along each of z's dimensions (0 where it repeats).
class BroadcastWalk {
 public:
  BroadcastWalk(const Operand& operand, const char* name, const Operand& z_shape)
      : operand_(operand), name_(name), offset_(z_shape.ndim - operand.ndim) {
    if (operand.ndim < 0 || operand.ndim > z_shape.ndim) {
      fail(std::string("operand '") + name + "' has " + text(operand.ndim) +
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
      fail(std::string("operand '") + name_ + "' has size " + text(size) + " in dimension " +
           text(own) + "; expected " + text(z_size) + " (z's size there) or 1 to broadcast");
    }
    return 0;
  }

 private:
  const Operand& operand_;
  const char* name_;
  int offset_;
  std::int64_t dense_ = 1;
};

}  // namespace

Plan plan_add(const void* x, const Operand& x_shape, const void* y, const Operand& y_shape,
              const void* z, const Operand& z_shape, std::size_t element_size) {
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
  BroadcastWalk x_walk(x_shape, "x", z_shape);
  BroadcastWalk y_walk(y_shape, "y", z_shape);
  BroadcastWalk z_walk(z_shape, "z", z_shape);
  // Gathered innermost first, then reversed; size-1 dimensions are dropped.
  Dimensions kept;
  for (int d = z_shape.ndim - 1; d >= 0; --d) {
    const std::int64_t size = z_shape.sizes[d];
    const std::int64_t x_stride = x_walk.stride_along(d, size);
    const std::int64_t y_stride = y_walk.stride_along(d, size);
    const std::int64_t z_stride = z_walk.stride_along(d, size);
    if (size != 1 && count != 0) {
      kept.push(size, x_stride, y_stride, z_stride);
    }
  }
  kept.reverse();
  return plan_dimensions(x, y, z, kept, count, element_size);
}

Plan plan_add(const void* x, const void* y, const void* z, const StridedLayout& layout,
              std::size_t element_size) {
  if (layout.ndim < 0 || layout.ndim > kMaxDims) {
    fail("the layout has " + text(layout.ndim) + " dimensions; expected 0 to " + text(kMaxDims));
  }
  Dimensions kept;
  const std::int64_t count = element_count(layout);
  for (int d = 0; d < layout.ndim && count != 0; ++d) {
    if (layout.sizes[d] != 1) {
      kept.push(layout.sizes[d], layout.x_strides[d], layout.y_strides[d], layout.z_strides[d]);
    }
  }
  return plan_dimensions(x, y, z, kept, count, element_size);
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
