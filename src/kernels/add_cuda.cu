// CUDA entry points of the kernel library: a vectorized kernel for contiguous arrays, a
// vectorized row kernel for layouts whose innermost dimension is contiguous in z and
// contiguous or repeated in x and y (the usual broadcasts), and an index-decomposing
// kernel for everything else. The planner (plan.cpp) picks one; this file launches it.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>

#include "contiguous_kernel.cuh"
#include "element_math.h"
#include "launch.cuh"
#include "outer_loop.h"
#include "pack.cuh"
#include "strided_index.cuh"
#include "vecadd/cuda.h"

namespace vecadd {
namespace {

constexpr int kStridedThreads = 128;
constexpr int kStridedUnroll = 4;
constexpr int kRowThreads = 128;
constexpr int kVectorBytes = 16;

// Launch policy, measured on an H200 (docs/kernel-notes.md, versions 14-17). Bytes count x, y
// and z together; what the kernel before a launch is, is known in CUDA graphs only.
// - Outside a graph, and after one of vecadd's own kernels in one, every launch overlaps the
//   kernel before it (back-to-back eager calls cost 8 % more each without). After any other
//   kernel in a graph, only calls from kOverlapAfterOtherBytes on do: below it the overlap
//   cost 3-7 % in graphs of torch kernels around vecadd.
// - Calls are 128-thread grids, save one: right after a vecadd kernel, aligned contiguous calls
//   from kShortCallBytes on take 1024-thread blocks, released after their stores, which stream
//   (evicted first) only once z alone outgrows the L2. They won only behind vecadd's early
//   release, and cost up to 8 % with the cache cold.
// - Short 128-thread grids let the next kernel launch as soon as every block has started, which
//   hides most of the launch latency between back-to-back calls; longer ones only as they exit:
//   an earlier launch cost them up to 40 %.
// - 8-byte elements take two 16-byte packs per thread in 128-thread grids from kShortCallBytes
//   to kTwoPackMaxBytes: there a 24 MiB call ran 2-4 % faster than with one in the cache and up
//   to 3 % cold (torch.add's kernel moves 64 bytes per thread); below, two packs cost 1-3 %,
//   above, 0.1-0.3 %.
constexpr std::int64_t kShortCallBytes = std::int64_t{4} << 20;
constexpr std::int64_t kOverlapAfterOtherBytes = std::int64_t{1} << 20;
constexpr std::int64_t kTwoPackMaxBytes = std::int64_t{128} << 20;

template <class T>
std::int64_t call_bytes(std::int64_t count) {
  return 3 * count * static_cast<std::int64_t>(sizeof(T));
}

// The order of a 128-thread grid over count elements after the given kernel.
template <class T>
detail::LaunchOrder small_block_order(std::int64_t count, detail::Predecessor previous) {
  const std::int64_t bytes = call_bytes<T>(count);
  return {previous != detail::Predecessor::kOther || bytes >= kOverlapAfterOtherBytes,
          bytes < kShortCallBytes ? detail::Release::kAtStart : detail::Release::kAtExit};
}

// Each block takes kStridedThreads * kStridedUnroll consecutive elements; each thread
// loads its kStridedUnroll elements (a block-width apart, so each load is one warp-wide
// sweep) before it stores any, to keep several loads in flight.
template <class T, class Indexer>
__global__ void __launch_bounds__(kStridedThreads)
    add_strided_kernel(const T* x, const T* y, T* z, Indexer layout, typename Indexer::Index count,
                       typename detail::ElementMath<T>::compute_type alpha,
                       detail::Release release) {
  using Index = typename Indexer::Index;
  detail::begin_kernel(release);
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
  detail::end_kernel(release);
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
                    typename detail::ElementMath<T>::compute_type alpha, detail::Release release) {
  using Index = typename Indexer::Index;
  using PackT = detail::Pack<T, kWidth>;
  detail::begin_kernel(release);
  const Index p = static_cast<Index>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (p >= pack_count) {
    detail::end_kernel(release);
    return;
  }
  const Index row = p / packs_per_row;
  const Index column = (p - row * packs_per_row) * kWidth;
  const auto offsets = outer.offsets(row);
  const PackT x_pack = row_pack<kWidth>(x + offsets.x, column, x_repeats);
  const PackT y_pack = row_pack<kWidth>(y + offsets.y, column, y_repeats);
  *reinterpret_cast<PackT*>(z + offsets.z + column) = detail::add_packs(x_pack, y_pack, alpha);
  detail::end_kernel(release);
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
cudaError_t launch_rows(const T* x, const T* y, T* z, const StridedLayout& layout, bool x_repeats,
                        bool y_repeats, std::int64_t count,
                        typename detail::ElementMath<T>::compute_type alpha, cudaStream_t stream,
                        detail::Predecessor previous) {
  using Index = typename Indexer::Index;
  constexpr int kWidth = kVectorBytes / sizeof(T);
  const std::int64_t pack_count = count / kWidth;
  const std::int64_t packs_per_row = layout.sizes[layout.ndim - 1] / kWidth;
  const std::int64_t blocks = (pack_count + kRowThreads - 1) / kRowThreads;
  return detail::launch_kernel<add_rows_kernel<T, kWidth, Indexer>>(
      static_cast<unsigned>(blocks), kRowThreads, stream, small_block_order<T>(count, previous), x,
      y, z, Indexer::of(outer_dimensions(layout)), static_cast<Index>(packs_per_row),
      static_cast<Index>(pack_count), x_repeats, y_repeats, alpha);
}

template <class T, class Indexer>
cudaError_t launch_strided(const T* x, const T* y, T* z, const StridedLayout& layout,
                           std::int64_t count, typename detail::ElementMath<T>::compute_type alpha,
                           cudaStream_t stream, detail::Predecessor previous) {
  constexpr std::int64_t kTile = std::int64_t{kStridedThreads} * kStridedUnroll;
  const std::int64_t blocks = (count + kTile - 1) / kTile;
  return detail::launch_kernel<add_strided_kernel<T, Indexer>>(
      static_cast<unsigned>(blocks), kStridedThreads, stream, small_block_order<T>(count, previous),
      x, y, z, Indexer::of(layout), static_cast<typename Indexer::Index>(count), alpha);
}

// Bytes of the current device's L2 cache, looked up once per device (0 when unknown).
std::int64_t l2_cache_bytes() {
  constexpr int kMaxDevices = 64;
  static std::atomic<std::int64_t> known[kMaxDevices] = {};  // 0 not looked up, -1 unknown
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    return 0;
  }
  std::int64_t bytes = known[device].load(std::memory_order_relaxed);
  if (bytes == 0) {
    int value = 0;
    const bool read = cudaDeviceGetAttribute(&value, cudaDevAttrL2CacheSize, device) == cudaSuccess;
    bytes = read && value > 0 ? value : -1;
    known[device].store(bytes, std::memory_order_relaxed);
  }
  return bytes > 0 ? bytes : 0;
}

// The launch shape for n contiguous elements with 16-byte aligned operands.
template <class T, class Index>
cudaError_t launch_aligned(const T* x, const T* y, T* z, std::int64_t n,
                           typename detail::ElementMath<T>::compute_type alpha, cudaStream_t stream,
                           detail::Predecessor previous) {
  constexpr int kWidth = kVectorBytes / sizeof(T);
  const std::int64_t bytes = call_bytes<T>(n);
  if (previous != detail::Predecessor::kVecadd || bytes < kShortCallBytes) {
    const detail::LaunchOrder order = small_block_order<T>(n, previous);
    if constexpr (sizeof(T) == 8) {  // no two-pack kernels for the other types
      if (bytes >= kShortCallBytes && bytes < kTwoPackMaxBytes) {
        return detail::launch_contiguous<T, kWidth, 128, 2, Index>(x, y, z, n, alpha, stream,
                                                                   order);
      }
    }
    return detail::launch_contiguous<T, kWidth, 128, 1, Index>(x, y, z, n, alpha, stream, order);
  }
  constexpr detail::LaunchOrder kAfterStores{true, detail::Release::kAfterStores};
  // Streaming (evict-first) stores only where z cannot stay in the L2 anyway: below that,
  // the kernel after this one finds z there.
  if (n * static_cast<std::int64_t>(sizeof(T)) > l2_cache_bytes()) {
    return detail::launch_contiguous<T, kWidth, 1024, 1, Index, detail::StoreCaching::kStreaming>(
        x, y, z, n, alpha, stream, kAfterStores);
  }
  return detail::launch_contiguous<T, kWidth, 1024, 1, Index>(x, y, z, n, alpha, stream,
                                                              kAfterStores);
}

// One launch of the plan's kernel over its layout, from the given element offsets.
template <class T>
cudaError_t launch_plan(const T* x, const T* y, T* z, const Plan& plan,
                        typename detail::ElementMath<T>::compute_type alpha, cudaStream_t stream) {
  const bool narrow = plan.index_width == IndexWidth::k32;
  const std::int64_t count = element_count(plan.layout);
  const detail::Predecessor previous = detail::previous_kernel(stream);
  switch (plan.kernel) {
    case Kernel::kNothing:
      return cudaSuccess;
    case Kernel::kContiguous:
      // Unaligned views (x[1:]) cannot use 16-byte accesses: four single elements per thread.
      if (plan.vector_aligned) {
        return narrow ? launch_aligned<T, std::int32_t>(x, y, z, count, alpha, stream, previous)
                      : launch_aligned<T, std::int64_t>(x, y, z, count, alpha, stream, previous);
      }
      return narrow ? detail::launch_contiguous<T, 1, 128, 4, std::int32_t>(
                          x, y, z, count, alpha, stream, small_block_order<T>(count, previous))
                    : detail::launch_contiguous<T, 1, 128, 4, std::int64_t>(
                          x, y, z, count, alpha, stream, small_block_order<T>(count, previous));
    case Kernel::kRows:
      return narrow ? launch_rows<T, detail::StridedIndexer32>(x, y, z, plan.layout, plan.x_repeats,
                                                               plan.y_repeats, count, alpha, stream,
                                                               previous)
                    : launch_rows<T, detail::StridedIndexer64>(x, y, z, plan.layout, plan.x_repeats,
                                                               plan.y_repeats, count, alpha, stream,
                                                               previous);
    case Kernel::kStrided:
      return narrow ? launch_strided<T, detail::StridedIndexer32>(x, y, z, plan.layout, count,
                                                                  alpha, stream, previous)
                    : launch_strided<T, detail::StridedIndexer64>(x, y, z, plan.layout, count,
                                                                  alpha, stream, previous);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
                     cudaStream_t stream) {
  const auto scale = detail::scale_of<T>(alpha);
  return detail::for_each_outer_index(
      plan.outer, cudaSuccess, [&](std::int64_t xo, std::int64_t yo, std::int64_t zo) {
        return settled(launch_plan(x + xo, y + yo, z + zo, plan, scale, stream));
      });
}

template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha,
                     cudaStream_t stream) {
  if (n <= 0) {
    return cudaSuccess;
  }
  StridedLayout run;
  run.ndim = 1;
  run.sizes[0] = n;
  run.x_strides[0] = run.y_strides[0] = run.z_strides[0] = 1;
  return add_cuda(x, y, z, plan_add(x, y, z, run, sizeof(T)), alpha, stream);
}

template <class T>
cudaError_t add_strided_cuda(const T* x, const T* y, T* z, const StridedLayout& layout,
                             alpha_t<T> alpha, cudaStream_t stream) {
  return add_cuda(x, y, z, plan_add(x, y, z, layout, sizeof(T)), alpha, stream);
}

// Both from CMake, which compiled this library for that toolkit and list.
const char* cuda_architectures() {
  return VECADD_CUDA_ARCHITECTURES_TEXT;
}
const char* cuda_toolkit_version() {
  return VECADD_CUDA_TOOLKIT_TEXT;
}

const char* cuda_error_text(cudaError_t status) {
  return cudaGetErrorString(status);
}

CudaDevice describe_cuda_device(int device_index) {
  CudaDevice device;
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device_index) != cudaSuccess) {
    cudaGetLastError();  // a failed query must not surface as a later call's error
    return device;
  }
  device.known = true;
  std::copy(std::begin(properties.name), std::end(properties.name), std::begin(device.name));
  device.name[sizeof device.name - 1] = '\0';
  device.major = properties.major;
  device.minor = properties.minor;
  return device;
}

#define VECADD_INSTANTIATE_CUDA(T)                                                       \
  template cudaError_t add_cuda<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>,     \
                                   cudaStream_t);                                        \
  template cudaError_t add_strided_cuda<T>(const T*, const T*, T*, const StridedLayout&, \
                                           alpha_t<T>, cudaStream_t);                    \
  template cudaError_t add_cuda<T>(const T*, const T*, T*, const Plan&, alpha_t<T>, cudaStream_t);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CUDA)
#undef VECADD_INSTANTIATE_CUDA

}  // namespace vecadd
