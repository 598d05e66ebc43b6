// CUDA entry points of the kernel library: a vectorized kernel for contiguous arrays, a
// vectorized row kernel for layouts whose innermost dimension is contiguous in z and
// contiguous or repeated in x and y (the usual broadcasts), and an index-decomposing
// kernel for everything else.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "contiguous_kernel.cuh"
#include "element_math.h"
#include "launch.cuh"
#include "pack.cuh"
#include "strided_index.cuh"
#include "vecadd/vecadd.h"

namespace vecadd {
namespace {

constexpr int kStridedThreads = 128;
constexpr int kStridedUnroll = 4;
constexpr int kRowThreads = 128;
constexpr int kVectorBytes = 16;
// Largest n for 32-bit index arithmetic, with headroom so that index + stride cannot wrap.
constexpr std::int64_t kMaxIndex32 = std::numeric_limits<std::int32_t>::max() / 2;

// Calls that move fewer bytes than this (x, y and z together) are short. Measured on an
// H200 (docs/kernel-notes.md, version 14):
// - Short calls keep 128-thread blocks and let the next kernel launch as soon as every block
//   has started, which hides most of the launch latency between back-to-back calls.
// - Longer aligned contiguous calls take 1024-thread blocks with streaming stores (evicted
//   first, leaving the L2 to x and y), and let the next kernel launch after their stores.
// - Longer 128-thread grids let it launch only as they exit: an earlier launch cost them up
//   to 40 %.
constexpr std::int64_t kShortCallBytes = std::int64_t{4} << 20;

template <class T>
bool is_short_call(std::int64_t count) {
  return 3 * count * static_cast<std::int64_t>(sizeof(T)) < kShortCallBytes;
}

// The overlap of a 128-thread grid over count elements.
template <class T>
detail::Overlap small_block_overlap(std::int64_t count) {
  return is_short_call<T>(count) ? detail::Overlap::kNextAtStart : detail::Overlap::kNextAtExit;
}

// Each block takes kStridedThreads * kStridedUnroll consecutive elements; each thread
// loads its kStridedUnroll elements (a block-width apart, so each load is one warp-wide
// sweep) before it stores any, to keep several loads in flight.
template <class T, class Indexer>
__global__ void __launch_bounds__(kStridedThreads)
    add_strided_kernel(const T* x, const T* y, T* z, Indexer layout, typename Indexer::Index count,
                       typename detail::ElementMath<T>::compute_type alpha,
                       detail::Overlap overlap) {
  using Index = typename Indexer::Index;
  detail::begin_kernel(overlap);
  const Index first =
      static_cast<Index>(blockIdx.x) * (kStridedThreads * kStridedUnroll) + threadIdx.x;
  detail::ElementOffsets<Index> offsets[kStridedUnroll];
  T x_values[kStridedUnroll];
  T y_values[kStridedUnroll];
#pragma unroll
  for (int u = 0; u < kStridedUnroll; ++u) {
    const Index i = first + u * kStridedThreads;
    if (i < count) {
      offsets[u] = layout.offsets(i);
      x_values[u] = x[offsets[u].x];
      y_values[u] = y[offsets[u].y];
    }
  }
#pragma unroll
  for (int u = 0; u < kStridedUnroll; ++u) {
    if (first + u * kStridedThreads < count) {
      z[offsets[u].z] = detail::add_scaled(x_values[u], y_values[u], alpha);
    }
  }
  detail::end_kernel(overlap);
}

// The kWidth elements of a row from `column` on: one 16-byte load, or, for an operand that
// repeats one element along the row (a (rows, 1) operand), that element kWidth times.
template <int kWidth, class T, class Index>
__device__ __forceinline__ detail::Pack<T, kWidth> row_pack(const T* row, Index column,
                                                            bool repeats) {
  using PackT = detail::Pack<T, kWidth>;
  if (!repeats) {
    return *reinterpret_cast<const PackT*>(row + column);
  }
  PackT pack;
  const T value = *row;
#pragma unroll
  for (int k = 0; k < kWidth; ++k) {
    pack.values[k] = value;
  }
  return pack;
}

// One 16-byte pack of z per thread along rows that are contiguous in z; the outer
// coordinates of the row are decomposed once per pack instead of once per element.
template <class T, int kWidth, class Indexer>
__global__ void __launch_bounds__(kRowThreads)
    add_rows_kernel(const T* x, const T* y, T* z, Indexer outer,
                    typename Indexer::Index packs_per_row, typename Indexer::Index pack_count,
                    bool x_repeats, bool y_repeats,
                    typename detail::ElementMath<T>::compute_type alpha, detail::Overlap overlap) {
  using Index = typename Indexer::Index;
  using PackT = detail::Pack<T, kWidth>;
  detail::begin_kernel(overlap);
  const Index p = static_cast<Index>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (p >= pack_count) {
    detail::end_kernel(overlap);
    return;
  }
  const Index row = p / packs_per_row;
  const Index column = (p - row * packs_per_row) * kWidth;
  const auto offsets = outer.offsets(row);
  const PackT x_pack = row_pack<kWidth>(x + offsets.x, column, x_repeats);
  const PackT y_pack = row_pack<kWidth>(y + offsets.y, column, y_repeats);
  *reinterpret_cast<PackT*>(z + offsets.z + column) = detail::add_packs(x_pack, y_pack, alpha);
  detail::end_kernel(overlap);
}

bool is_vector_aligned(const void* pointer) {
  return reinterpret_cast<std::uintptr_t>(pointer) % kVectorBytes == 0;
}

// Largest element offset a strided operand reaches (strides are non-negative in torch).
std::int64_t max_offset(const std::int64_t* strides, const StridedLayout& layout) {
  std::int64_t reach = 0;
  for (int d = 0; d < layout.ndim; ++d) {
    reach += (layout.sizes[d] - 1) * (strides[d] < 0 ? -strides[d] : strides[d]);
  }
  return reach;
}

// How the row kernel reads x and y along a row: packs, or one repeated element.
struct RowPlan {
  bool usable = false;
  bool x_repeats = false;
  bool y_repeats = false;
};

// Whether the row kernel can take a layout: the innermost dimension is contiguous in z,
// every row of z starts on a 16-byte boundary, and x and y each either match that (packs)
// or repeat one element along the row (inner stride 0).
RowPlan plan_rows(const void* x, const void* y, const void* z, const StridedLayout& layout,
                  int width) {
  RowPlan plan;
  if (layout.ndim < 1) {
    return plan;
  }
  const int inner = layout.ndim - 1;
  // Rows of packs: contiguous, and every row of the operand 16-byte aligned.
  const auto packs_fit = [&](const void* pointer, const std::int64_t* strides) {
    if (strides[inner] != 1 || !is_vector_aligned(pointer)) {
      return false;
    }
    for (int d = 0; d < inner; ++d) {
      if (strides[d] % width != 0) {
        return false;
      }
    }
    return true;
  };
  plan.x_repeats = layout.x_strides[inner] == 0;
  plan.y_repeats = layout.y_strides[inner] == 0;
  plan.usable = layout.sizes[inner] % width == 0 && packs_fit(z, layout.z_strides) &&
                (plan.x_repeats || packs_fit(x, layout.x_strides)) &&
                (plan.y_repeats || packs_fit(y, layout.y_strides)) &&
                !(plan.x_repeats && plan.y_repeats);
  return plan;
}

// A launch's status, with the runtime's record of the last error cleared: a failed launch
// must not resurface at the next, unrelated check.
cudaError_t settled(cudaError_t launched) {
  const cudaError_t last = cudaGetLastError();
  return launched != cudaSuccess ? launched : last;
}

// The layout less its innermost dimension.
StridedLayout outer_dimensions(const StridedLayout& layout) {
  StridedLayout outer = layout;
  outer.ndim = layout.ndim - 1;
  return outer;
}

template <class T, class Indexer>
cudaError_t launch_rows(const T* x, const T* y, T* z, const StridedLayout& layout,
                        const RowPlan& plan, std::int64_t count,
                        typename detail::ElementMath<T>::compute_type alpha, cudaStream_t stream) {
  using Index = typename Indexer::Index;
  constexpr int kWidth = kVectorBytes / sizeof(T);
  const std::int64_t pack_count = count / kWidth;
  const std::int64_t packs_per_row = layout.sizes[layout.ndim - 1] / kWidth;
  const std::int64_t blocks = (pack_count + kRowThreads - 1) / kRowThreads;
  return detail::launch_kernel<add_rows_kernel<T, kWidth, Indexer>>(
      static_cast<unsigned>(blocks), kRowThreads, stream, small_block_overlap<T>(count), x, y, z,
      Indexer::of(outer_dimensions(layout)), static_cast<Index>(packs_per_row),
      static_cast<Index>(pack_count), plan.x_repeats, plan.y_repeats, alpha);
}

template <class T, class Indexer>
cudaError_t launch_strided(const T* x, const T* y, T* z, const StridedLayout& layout,
                           std::int64_t count, typename detail::ElementMath<T>::compute_type alpha,
                           cudaStream_t stream) {
  constexpr std::int64_t kTile = std::int64_t{kStridedThreads} * kStridedUnroll;
  const std::int64_t blocks = (count + kTile - 1) / kTile;
  return detail::launch_kernel<add_strided_kernel<T, Indexer>>(
      static_cast<unsigned>(blocks), kStridedThreads, stream, small_block_overlap<T>(count), x, y,
      z, Indexer::of(layout), static_cast<typename Indexer::Index>(count), alpha);
}

// The launch shape for n contiguous elements with 16-byte aligned operands.
template <class T, class Index>
cudaError_t launch_aligned(const T* x, const T* y, T* z, std::int64_t n,
                           typename detail::ElementMath<T>::compute_type alpha,
                           cudaStream_t stream) {
  constexpr int kWidth = kVectorBytes / sizeof(T);
  if (is_short_call<T>(n)) {
    return detail::launch_contiguous<T, kWidth, 128, 1, Index>(x, y, z, n, alpha, stream,
                                                               detail::Overlap::kNextAtStart);
  }
  return detail::launch_contiguous<T, kWidth, 1024, 1, Index, detail::StoreCaching::kStreaming>(
      x, y, z, n, alpha, stream, detail::Overlap::kNextAfterStores);
}

}  // namespace

template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, T alpha, cudaStream_t stream) {
  if (n <= 0) {
    return cudaSuccess;
  }
  const auto scale = detail::ElementMath<T>::load(alpha);
  // 16-byte packs where all three operands allow them, 32-bit indices wherever n allows.
  // Unaligned views (x[1:]) cannot use 16-byte accesses: four single elements per thread.
  const bool aligned = is_vector_aligned(x) && is_vector_aligned(y) && is_vector_aligned(z);
  const bool fits_32 = n <= kMaxIndex32;
  cudaError_t launched;
  if (aligned && fits_32) {
    launched = launch_aligned<T, std::int32_t>(x, y, z, n, scale, stream);
  } else if (aligned) {
    launched = launch_aligned<T, std::int64_t>(x, y, z, n, scale, stream);
  } else if (fits_32) {
    launched = detail::launch_contiguous<T, 1, 128, 4, std::int32_t>(x, y, z, n, scale, stream,
                                                                     small_block_overlap<T>(n));
  } else {
    launched = detail::launch_contiguous<T, 1, 128, 4, std::int64_t>(x, y, z, n, scale, stream,
                                                                     small_block_overlap<T>(n));
  }
  return settled(launched);
}

template <class T>
cudaError_t add_strided_cuda(const T* x, const T* y, T* z, const StridedLayout& layout, T alpha,
                             cudaStream_t stream) {
  const std::int64_t count = element_count(layout);
  if (count <= 0) {
    return cudaSuccess;
  }
  const auto scale = detail::ElementMath<T>::load(alpha);
  // 32-bit index arithmetic is several times cheaper; use it whenever nothing can overflow.
  const bool fits_32 = count <= kMaxIndex32 &&
                       max_offset(layout.x_strides, layout) <= kMaxIndex32 &&
                       max_offset(layout.y_strides, layout) <= kMaxIndex32 &&
                       max_offset(layout.z_strides, layout) <= kMaxIndex32;
  const RowPlan rows = plan_rows(x, y, z, layout, kVectorBytes / sizeof(T));
  cudaError_t launched;
  if (rows.usable && fits_32) {
    launched =
        launch_rows<T, detail::StridedIndexer32>(x, y, z, layout, rows, count, scale, stream);
  } else if (rows.usable) {
    launched =
        launch_rows<T, detail::StridedIndexer64>(x, y, z, layout, rows, count, scale, stream);
  } else if (fits_32) {
    launched = launch_strided<T, detail::StridedIndexer32>(x, y, z, layout, count, scale, stream);
  } else {
    launched = launch_strided<T, detail::StridedIndexer64>(x, y, z, layout, count, scale, stream);
  }
  return settled(launched);
}

#define VECADD_INSTANTIATE_CUDA(T)                                                          \
  template cudaError_t add_cuda<T>(const T*, const T*, T*, std::int64_t, T, cudaStream_t);  \
  template cudaError_t add_strided_cuda<T>(const T*, const T*, T*, const StridedLayout&, T, \
                                           cudaStream_t);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CUDA)
#undef VECADD_INSTANTIATE_CUDA

}  // namespace vecadd
