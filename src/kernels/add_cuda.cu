// CUDA entry points of the kernel library: a vectorized kernel for contiguous arrays, a
// vectorized row kernel for layouts whose innermost dimension is contiguous in z and
// contiguous or repeated in each input (the usual broadcasts), and an index-decomposing
// kernel for everything else, each summing a launch's weighted inputs. The planner (plan.cpp)
// picks one; this file launches it. One launch takes up to kMaxLaunchInputs inputs; a sum of
// more runs in launches of that many, carrying the partial sums in compute type.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <string_view>
#include <type_traits>

#include "contiguous_kernel.cuh"
#include "element_math.h"
#include "launch.cuh"
#include "outer_loop.h"
#include "pack.cuh"
#include "strided_index.cuh"
#include "sum_call.h"
#include "sum_cuda.h"
#include "vecadd/cuda.h"

namespace vecadd {
namespace {

template <class T>
using compute_t = typename detail::ElementMath<T>::compute_type;

constexpr int kStridedThreads = 128;
constexpr int kStridedUnroll = 4;
constexpr int kRowThreads = 128;
constexpr int kVectorBytes = 16;
// Inputs of one launch: a capacity of 2 (add, and add_n of two) keeps the kernels that were
// tuned for x + alpha * y; up to 8 take the contiguous, row and strided kernels; up to
// kMaxLaunchInputs the strided kernel (its parameters stay under CUDA's 4 KiB).
constexpr int kSmallCapacity = 8;
constexpr int kMaxLaunchInputs = 32;

// Launch policy, measured on an H200 (docs/kernel-notes.md, versions 14-17). Bytes count every
// input and z together; what the kernel before a launch is, is known in CUDA graphs only.
// - Outside a graph, and after one of vecadd's own kernels in one, every launch overlaps the
//   kernel before it (back-to-back eager calls cost 8 % more each without). After any other
//   kernel in a graph, only calls from kOverlapAfterOtherBytes on do: below it the overlap
//   cost 3-7 % in graphs of torch kernels around vecadd.
// - Calls are 128-thread grids, save one: right after a vecadd kernel, aligned contiguous
//   two-input calls from kShortCallBytes on take 1024-thread blocks, released after their
//   stores, which stream (evicted first) only once z alone outgrows the L2. They won only
//   behind vecadd's early release, and cost up to 8 % with the cache cold.
// - Short 128-thread grids let the next kernel launch as soon as every block has started, which
//   hides most of the launch latency between back-to-back calls; longer ones only as they exit:
//   an earlier launch cost them up to 40 %.
// - Calls of two inputs take two 16-byte packs per thread in 128-thread grids where that grid
//   still fills the SMs (packs_per_thread), as torch.add's kernels do: on an H100 (kernel
//   durations, version 20) the 4-byte cells' worst cold ratio to torch.add went from 0.972 to
//   0.989 and the graphed pipeline's warm worst from 0.831 to 0.942; a 24 MiB 8-byte call ran
//   up to 3 % faster cold on the H200; 2-byte calls of 3-12 MiB and 48 MiB and float32 at
//   3 MiB ran 2-7 % faster warm on the H100 (version 21).
using detail::kShortCallBytes;
using detail::small_block_order;
constexpr std::int64_t kTwoPackMaxBytes = std::int64_t{128} << 20;
constexpr std::int64_t kTwoPackMinBlocksPerSm = 2;

template <class T>
std::int64_t call_bytes(int inputs, std::int64_t count) {
  return (inputs + 1) * count * static_cast<std::int64_t>(sizeof(T));
}

// Where a strided launch's sums start and end: none for a launch that holds every input; for a
// sum of more inputs, compute-type partial sums (indexed by the launch's linear index) that the
// first launch writes, the middle ones read and write, and the last one reads.
template <class T>
struct PartialSums {
  compute_t<T>* sums = nullptr;
  bool read = false;
  bool write = false;
};

// Each block takes kStridedThreads * kStridedUnroll consecutive elements; each thread
// loads its kStridedUnroll elements of an input (a block-width apart, so each load is one
// warp-wide sweep) before it adds any, to keep several loads in flight.
template <class T, class Indexer, int kCapacity>
__global__ void __launch_bounds__(kStridedThreads)
    sum_strided_kernel(detail::Inputs<T, kCapacity> in, T* z, Indexer layout,
                       typename Indexer::Index count, PartialSums<T> partial,
                       detail::Release release) {
  using Index = typename Indexer::Index;
  detail::begin_kernel(release);
  const int inputs = in.size();
  const Index first =
      static_cast<Index>(blockIdx.x) * (kStridedThreads * kStridedUnroll) + threadIdx.x;
  detail::OperandOffsets<Index, kCapacity + 1> offsets[kStridedUnroll];
  compute_t<T> sums[kStridedUnroll];
#pragma unroll
  for (int u = 0; u < kStridedUnroll; ++u) {
    const Index e = first + u * kStridedThreads;
    if (e < count) {
      offsets[u] = layout.offsets(e);
      if (partial.read) {
        sums[u] = partial.sums[e];
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kCapacity; ++i) {
    if (i < inputs) {
      T values[kStridedUnroll];
#pragma unroll
      for (int u = 0; u < kStridedUnroll; ++u) {
        if (first + u * kStridedThreads < count) {
          values[u] = in.data[i][offsets[u].of[i]];
        }
      }
#pragma unroll
      for (int u = 0; u < kStridedUnroll; ++u) {
        sums[u] = i == 0 && !partial.read ? detail::first_term(values[u], in.weights[i])
                                          : detail::next_term(sums[u], values[u], in.weights[i]);
      }
    }
  }
#pragma unroll
  for (int u = 0; u < kStridedUnroll; ++u) {
    const Index e = first + u * kStridedThreads;
    if (e < count) {
      if (partial.write) {
        partial.sums[e] = sums[u];
      } else {
        z[offsets[u].of[kCapacity]] = detail::ElementMath<T>::store(sums[u]);
      }
    }
  }
  detail::end_kernel(release);
}

// The kWidth elements of a row from `column` on: one 16-byte load, or, for an input that
// repeats one element along the row (a (rows, 1) operand), that element kWidth times.
template <int kWidth, class T, class Index>
__device__ __forceinline__ detail::Pack<T, kWidth> row_pack(const T* row, Index column,
                                                            bool repeats) {
  using PackT = detail::Pack<T, kWidth>;
  if (!repeats) {
    return detail::load_pack(reinterpret_cast<const PackT*>(row + column));
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
// `repeats` has bit i set where input i repeats one element along each row.
template <class T, int kWidth, class Indexer, int kCapacity>
__global__ void __launch_bounds__(kRowThreads)
    sum_rows_kernel(detail::Inputs<T, kCapacity> in, T* z, Indexer outer,
                    typename Indexer::Index packs_per_row, typename Indexer::Index pack_count,
                    std::uint32_t repeats, detail::Release release) {
  using Index = typename Indexer::Index;
  using PackT = detail::Pack<T, kWidth>;
  detail::begin_kernel(release);
  const Index p = static_cast<Index>(blockIdx.x) * kRowThreads + threadIdx.x;
  if (p >= pack_count) {
    detail::end_kernel(release);
    return;
  }
  const int inputs = in.size();
  const Index row = p / packs_per_row;
  const Index column = (p - row * packs_per_row) * kWidth;
  const auto offsets = outer.offsets(row);
  detail::PackSums<T, kWidth> sums;
#pragma unroll
  for (int i = 0; i < kCapacity; ++i) {
    if (i < inputs) {
      sums.add(row_pack<kWidth>(in.data[i] + offsets.of[i], column, (repeats >> i) & 1u),
               in.weights[i], i == 0);
    }
  }
  detail::store_pack<detail::StoreCaching::kDefault>(
      reinterpret_cast<PackT*>(z + offsets.of[kCapacity] + column), sums.rounded());
  detail::end_kernel(release);
}

// A launch's status, with the runtime's record of the last error cleared: a failed launch
// must not resurface at the next, unrelated check.
cudaError_t settled(cudaError_t launched) {
  const cudaError_t last = cudaGetLastError();
  return launched != cudaSuccess ? launched : last;
}

// The dimensions of a plan less their innermost one.
Dimensions outer_dimensions(const Dimensions& dims) {
  Dimensions outer;
  outer.hold(dims.operands);
  outer.ndim = dims.ndim - 1;
  for (int d = 0; d < outer.ndim; ++d) {
    outer.sizes[d] = dims.sizes[d];
    for (int o = 0; o < dims.operands; ++o) {
      outer.set_stride(o, d, dims.stride(o, d));
    }
  }
  return outer;
}

// One launch's inputs: their arrays (at an outer index's offsets) and weights, and which of the
// plan's operands each is (z last, in slot kCapacity).
template <class T, int kCapacity>
struct Launch {
  detail::Inputs<T, kCapacity> in = {};
  T* z = nullptr;
  int operands[kCapacity + 1] = {};
};

template <class T, int kCapacity, class Indexer>
cudaError_t launch_rows(const Launch<T, kCapacity>& launch, const Plan& plan, std::int64_t bytes,
                        cudaStream_t stream, detail::Predecessor previous) {
  using Index = typename Indexer::Index;
  constexpr int kWidth = kVectorBytes / sizeof(T);
  const std::int64_t count = plan.launch.count();
  const std::int64_t pack_count = count / kWidth;
  const std::int64_t packs_per_row = plan.launch.sizes[plan.launch.ndim - 1] / kWidth;
  const std::int64_t blocks = (pack_count + kRowThreads - 1) / kRowThreads;
  std::uint32_t repeats = 0;
  for (int i = 0; i < launch.in.count; ++i) {
    repeats |= (plan.repeats >> launch.operands[i]) & 1u ? 1u << i : 0u;
  }
  return detail::launch_kernel<sum_rows_kernel<T, kWidth, Indexer, kCapacity>>(
      static_cast<unsigned>(blocks), kRowThreads, stream, small_block_order(bytes, previous),
      launch.in, launch.z, Indexer::of(outer_dimensions(plan.launch), launch.operands),
      static_cast<Index>(packs_per_row), static_cast<Index>(pack_count), repeats);
}

template <class T, int kCapacity, class Indexer>
cudaError_t launch_strided(const Launch<T, kCapacity>& launch, const Plan& plan, std::int64_t bytes,
                           PartialSums<T> partial, cudaStream_t stream,
                           detail::Predecessor previous) {
  constexpr std::int64_t kTile = std::int64_t{kStridedThreads} * kStridedUnroll;
  const std::int64_t count = plan.launch.count();
  const std::int64_t blocks = (count + kTile - 1) / kTile;
  return detail::launch_kernel<sum_strided_kernel<T, Indexer, kCapacity>>(
      static_cast<unsigned>(blocks), kStridedThreads, stream, small_block_order(bytes, previous),
      launch.in, launch.z, Indexer::of(plan.launch, launch.operands),
      static_cast<typename Indexer::Index>(count), partial);
}

// A property of the current device, looked up once per device (0 when unknown).
template <cudaDeviceAttr kAttribute>
std::int64_t device_property() {
  constexpr int kMaxDevices = 64;
  static std::atomic<std::int64_t> known[kMaxDevices] = {};  // 0 not looked up, -1 unknown
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    return 0;
  }
  std::int64_t value = known[device].load(std::memory_order_relaxed);
  if (value == 0) {
    int read = 0;
    const bool found = cudaDeviceGetAttribute(&read, kAttribute, device) == cudaSuccess;
    value = found && read > 0 ? read : -1;
    known[device].store(value, std::memory_order_relaxed);
  }
  return value > 0 ? value : 0;
}

// Blocks of a contiguous grid over n elements, `threads` to a block and `packs` per thread.
template <class T>
std::int64_t grid_blocks(std::int64_t n, int threads, int packs) {
  const std::int64_t tile = std::int64_t{threads} * packs * (kVectorBytes / sizeof(T));
  return (n + tile - 1) / tile;
}

// Whether a call's x, y and z together fill a quarter to a half of the L2 (12.5-25 MiB on the
// H100): resident when warm, yet too large for every block to start at once.
inline bool fills_a_quarter_to_half_of_l2(std::int64_t bytes) {
  const std::int64_t l2 = device_property<cudaDevAttrL2CacheSize>();
  return 4 * bytes > l2 && 2 * bytes <= l2;
}

// 16-byte packs per thread of a 128-thread contiguous grid. Two halve the grid, as torch.add's
// kernels do, where the two-pack grid still gives every SM a block (calls below kShortCallBytes,
// whose blocks all start at once) or kTwoPackMinBlocksPerSm blocks (so that a GPU with more SMs
// keeps one pack for longer); docs/kernel-notes.md has the measurements behind each exception.
template <class T>
int packs_per_thread(std::int64_t n, std::int64_t bytes) {
  const bool short_call = bytes < kShortCallBytes;
  // 8-byte calls below kShortCallBytes lost 1-3 % with two packs on the H200 (version 17).
  if (sizeof(T) == 8 && short_call) {
    return 1;
  }
  // One pack matched torch.add from there on; 2-byte calls gained nothing from 64 MiB.
  if (bytes >= (sizeof(T) == 2 ? kTwoPackMaxBytes / 2 : kTwoPackMaxBytes)) {
    return 1;
  }
  // Warm 2-byte calls of a quarter to a half of the L2 ran 16 % slower with two packs on the
  // H100 (2^22 elements), 2-7 % faster below and above it (version 21).
  if (sizeof(T) == 2 && fills_a_quarter_to_half_of_l2(bytes)) {
    return 1;
  }
  const std::int64_t least_blocks =
      (short_call ? 1 : kTwoPackMinBlocksPerSm) * device_property<cudaDevAttrMultiProcessorCount>();
  return grid_blocks<T>(n, 128, 2) >= least_blocks ? 2 : 1;
}

// A candidate for the warm int64 cells still below torch.add on the H100 (2^20: 0.952, a
// quarter to a half of the L2): 8-byte calls there take one pack too. On the H200, float64
// 2^20 lost with one pack in the pipeline and cold (version 17), so it is off; the lab selects
// it with VECADD_LAUNCH_CANDIDATE=one-pack-8-byte (lab/gpu_kernel_ab.sh).
template <class T>
int candidate_packs(std::int64_t n, std::int64_t bytes) {
  if (sizeof(T) == 8 && fills_a_quarter_to_half_of_l2(bytes)) {
    return 1;
  }
  return packs_per_thread<T>(n, bytes);
}

// Lab only: VECADD_LAUNCH_CANDIDATE puts candidate_packs in the place of packs_per_thread, so
// that one build times both (lab/gpu_kernel_ab.sh). Read once per process.
bool candidate_selected() {
  static const bool selected = [] {
    const char* value = std::getenv("VECADD_LAUNCH_CANDIDATE");
    return value != nullptr && std::string_view(value) == "one-pack-8-byte";
  }();
  return selected;
}

// The element types every launch shape is instantiated for: the six of add_n_cuda, whose
// launches were tuned one by one. Other dtypes, and launches with a constant or inputs of another
// dtype than z, take the 128-thread contiguous grids alone (and the dynamic kernel otherwise).
template <class T>
constexpr bool kTunedType =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16> || std::is_same_v<T, float> ||
    std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

// The launch shape for n contiguous elements with vector-aligned operands. Input 0 is of First,
// the others of Rest (z's T unless the launch mixes dtypes); a Constant joins the sum or not.
template <class T, class Index, int kCapacity, class First = T, class Rest = T,
          class Constant = detail::NoConstant>
cudaError_t launch_aligned(const Launch<T, kCapacity>& launch, std::int64_t n, std::int64_t bytes,
                           cudaStream_t stream, detail::Predecessor previous,
                           Constant constant = {}) {
  // Each operand's pack holds kWidth elements: 16 bytes of the widest.
  constexpr int kWidth = kVectorBytes / std::max({sizeof(T), sizeof(First), sizeof(Rest)});
  constexpr bool kTuned = kTunedType<T> && std::is_same_v<First, T> && std::is_same_v<Rest, T> &&
                          std::is_same_v<Constant, detail::NoConstant>;
  const detail::LaunchOrder order = small_block_order(bytes, previous);
  if constexpr (kCapacity > 2) {
    return detail::launch_contiguous<T, kWidth, 128, 1, Index>(launch.in, launch.z, n, stream,
                                                               order);
  } else {
    if (!kTuned || previous != detail::Predecessor::kVecadd || bytes < kShortCallBytes) {
      const int packs =
          candidate_selected() ? candidate_packs<T>(n, bytes) : packs_per_thread<T>(n, bytes);
      if (packs == 2) {
        return detail::launch_contiguous<T, kWidth, 128, 2, Index, detail::StoreCaching::kDefault,
                                         First, Rest>(launch.in, launch.z, n, stream, order,
                                                      constant);
      }
      return detail::launch_contiguous<T, kWidth, 128, 1, Index, detail::StoreCaching::kDefault,
                                       First, Rest>(launch.in, launch.z, n, stream, order,
                                                    constant);
    }
    if constexpr (kTuned) {
      constexpr detail::LaunchOrder kAfterStores{true, detail::Release::kAfterStores};
      // Streaming (evict-first) stores only where z cannot stay in the L2 anyway: below that,
      // the kernel after this one finds z there.
      if (n * static_cast<std::int64_t>(sizeof(T)) > device_property<cudaDevAttrL2CacheSize>()) {
        return detail::launch_contiguous<T, kWidth, 1024, 1, Index,
                                         detail::StoreCaching::kStreaming>(launch.in, launch.z, n,
                                                                           stream, kAfterStores);
      }
      return detail::launch_contiguous<T, kWidth, 1024, 1, Index>(launch.in, launch.z, n, stream,
                                                                  kAfterStores);
    }
    return cudaErrorInvalidValue;  // not reached: only tuned launches get here
  }
}

// One launch of the plan's kernel over its launch dimensions.
template <class T, int kCapacity>
cudaError_t launch_plan(const Launch<T, kCapacity>& launch, const Plan& plan, cudaStream_t stream) {
  const bool narrow = plan.index_width == IndexWidth::k32;
  const std::int64_t count = plan.launch.count();
  const std::int64_t bytes = call_bytes<T>(launch.in.count, count);
  const detail::Predecessor previous = detail::previous_kernel(stream);
  using Strided32 = detail::StridedIndexer32<kCapacity + 1>;
  using Strided64 = detail::StridedIndexer64<kCapacity + 1>;
  switch (plan.kernel) {
    case Kernel::kNothing:
      return cudaSuccess;
    case Kernel::kContiguous:
      // Unaligned views (x[1:]) cannot use 16-byte accesses: four single elements per thread.
      if (plan.vector_aligned) {
        return narrow ? launch_aligned<T, std::int32_t>(launch, count, bytes, stream, previous)
                      : launch_aligned<T, std::int64_t>(launch, count, bytes, stream, previous);
      }
      return narrow ? detail::launch_contiguous<T, 1, 128, 4, std::int32_t>(
                          launch.in, launch.z, count, stream, small_block_order(bytes, previous))
                    : detail::launch_contiguous<T, 1, 128, 4, std::int64_t>(
                          launch.in, launch.z, count, stream, small_block_order(bytes, previous));
    case Kernel::kRows:
      return narrow ? launch_rows<T, kCapacity, Strided32>(launch, plan, bytes, stream, previous)
                    : launch_rows<T, kCapacity, Strided64>(launch, plan, bytes, stream, previous);
    case Kernel::kStrided:
      return narrow ? launch_strided<T, kCapacity, Strided32>(launch, plan, bytes, {}, stream,
                                                              previous)
                    : launch_strided<T, kCapacity, Strided64>(launch, plan, bytes, {}, stream,
                                                              previous);
  }
  return cudaErrorInvalidValue;
}

// Inputs [first, first + count) of the call and z, at an outer index's offsets.
template <class T, int kCapacity>
Launch<T, kCapacity> launch_of(const T* const* inputs, const compute_t<T>* weights, T* z,
                               const Plan& plan, const std::int64_t* offsets, int first,
                               int count) {
  Launch<T, kCapacity> launch;
  launch.in.count = count;
  for (int i = 0; i < count; ++i) {
    launch.operands[i] = first + i;
    launch.in.data[i] = inputs[first + i] + offsets[first + i];
    launch.in.weights[i] = weights[first + i];
  }
  launch.operands[kCapacity] = plan.inputs;
  launch.z = z + offsets[plan.inputs];
  return launch;
}

// A sum of more inputs than one launch takes: launches of kMaxLaunchInputs inputs each, on the
// strided kernel, carrying compute-type partial sums between them (the sum still rounds once).
template <class T>
cudaError_t launch_in_parts(const T* const* inputs, const compute_t<T>* weights, T* z,
                            const Plan& plan, const std::int64_t* offsets,
                            compute_t<T>* partial_sums, cudaStream_t stream) {
  using Strided64 = detail::StridedIndexer64<kMaxLaunchInputs + 1>;
  const std::int64_t bytes = call_bytes<T>(plan.inputs, plan.launch.count());
  for (int first = 0; first < plan.inputs; first += kMaxLaunchInputs) {
    const int count = std::min(kMaxLaunchInputs, plan.inputs - first);
    const auto launch =
        launch_of<T, kMaxLaunchInputs>(inputs, weights, z, plan, offsets, first, count);
    const PartialSums<T> partial{partial_sums, first > 0, first + count < plan.inputs};
    const cudaError_t status = settled(launch_strided<T, kMaxLaunchInputs, Strided64>(
        launch, plan, bytes, partial, stream, detail::Predecessor::kUnknown));
    if (status != cudaSuccess) {
      return status;
    }
  }
  return cudaSuccess;
}

// Every input and z of T, any layout: the kernels tuned for add and add_n.
template <class T>
cudaError_t sum_uniform(const T* const* inputs, const compute_t<T>* scales, T* z, const Plan& plan,
                        cudaStream_t stream) {
  const int n = plan.inputs;
  compute_t<T>* partial_sums = nullptr;
  if (n > kMaxLaunchInputs) {
    const auto bytes = static_cast<std::size_t>(plan.launch.count()) * sizeof(compute_t<T>);
    const cudaError_t allocated = cudaMallocAsync(&partial_sums, bytes, stream);
    if (allocated != cudaSuccess) {
      return settled(allocated);
    }
  }
  const cudaError_t status =
      detail::for_each_outer_index(plan.outer, cudaSuccess, [&](const std::int64_t* offsets) {
        if (n == 2) {
          return settled(
              launch_plan(launch_of<T, 2>(inputs, scales, z, plan, offsets, 0, n), plan, stream));
        }
        if (n <= kSmallCapacity) {
          return settled(launch_plan(
              launch_of<T, kSmallCapacity>(inputs, scales, z, plan, offsets, 0, n), plan, stream));
        }
        return launch_in_parts(inputs, scales, z, plan, offsets, partial_sums, stream);
      });
  if (partial_sums != nullptr) {
    const cudaError_t freed = cudaFreeAsync(partial_sums, stream);
    if (status == cudaSuccess && freed != cudaSuccess) {
      return settled(freed);
    }
  }
  return status;
}

// Whether a plan runs as one contiguous launch of vector packs with 32-bit indices: the one
// layout the specialised mixed-dtype and constant launches take.
bool one_aligned_run(const Plan& plan) {
  return plan.kernel == Kernel::kContiguous && plan.vector_aligned &&
         plan.index_width == IndexWidth::k32 && plan.outer.ndim == 0;
}

// The specialised launches of a Sum whose common dtype is C (storage T): true when one took it,
// with its launch status in `status`; false leaves it to the dynamic kernel.
template <DType C>
bool launch_specialised(const Sum& sum, const Plan& plan, cudaStream_t stream,
                        cudaError_t& status) {
  using T = detail::storage_of<C>;
  using K = detail::compute_of<C>;
  static_assert(std::is_same_v<K, compute_t<T>>, "one compute type per dtype");
  const int n = sum.count;
  int arrays_of_c = 0;
  int constants = 0;
  for (int i = 0; i < n; ++i) {
    arrays_of_c += sum.inputs[i].data != nullptr && sum.inputs[i].dtype == C ? 1 : 0;
    constants += sum.inputs[i].data == nullptr ? 1 : 0;
  }
  if (sum.z.dtype != C) {
    return false;
  }
  auto* z = static_cast<T*>(sum.z.data);
  const std::int64_t count = plan.launch.count();
  if (arrays_of_c == n) {
    if constexpr (kTunedType<T>) {
      PerOperand<const T*> inputs(n);
      PerOperand<K> scales(n);
      for (int i = 0; i < n; ++i) {
        inputs[i] = static_cast<const T*>(sum.inputs[i].data);
        scales[i] = detail::weight_in<C>(sum.inputs[i].weight);
      }
      status = sum_uniform<T>(inputs.data(), scales.data(), z, plan, stream);
      return true;
    } else {
      if (n != 2 || !one_aligned_run(plan)) {
        return false;
      }
      const T* const inputs[] = {static_cast<const T*>(sum.inputs[0].data),
                                 static_cast<const T*>(sum.inputs[1].data)};
      const K scales[] = {detail::weight_in<C>(sum.inputs[0].weight),
                          detail::weight_in<C>(sum.inputs[1].weight)};
      const std::int64_t no_offsets[3] = {};
      const auto launch = launch_of<T, 2>(inputs, scales, z, plan, no_offsets, 0, 2);
      status = settled(launch_aligned<T, std::int32_t>(launch, count, call_bytes<T>(2, count),
                                                       stream, detail::previous_kernel(stream)));
      return true;
    }
  }
  if constexpr (kTunedType<T>) {
    // One array of C and a constant (torch.add(x, 2.0)).
    if (n == 2 && arrays_of_c == 1 && constants == 1 && one_aligned_run(plan)) {
      const int array = sum.inputs[0].data != nullptr ? 0 : 1;
      const SumInput& constant = sum.inputs[1 - array];
      const K value = detail::constant_in<C>(constant).template as<K>();
      const K constant_weight = detail::weight_in<C>(constant.weight);
      const bool leads = array == 1;
      // Leading, the constant is the first term, weighed here as the kernel would weigh it.
      const detail::ConstantTerm<T> term{leads && !detail::weight_is_one<C>(constant.weight)
                                             ? detail::product(constant_weight, value)
                                             : value,
                                         constant_weight, leads};
      Launch<T, 1> launch;
      launch.in.count = 1;
      launch.in.data[0] = static_cast<const T*>(sum.inputs[array].data);
      launch.in.weights[0] = detail::weight_in<C>(sum.inputs[array].weight);
      launch.z = z;
      status = settled(launch_aligned<T, std::int32_t, 1, T, T>(
          launch, count, call_bytes<T>(1, count), stream, detail::previous_kernel(stream), term));
      return true;
    }
  }
  if constexpr (C == DType::kFloat32) {
    // float32 beside bfloat16 or float16 (autocast's residual streams), either way round.
    if (n == 2 && constants == 0 && one_aligned_run(plan)) {
      const DType first = sum.inputs[0].dtype;
      const DType second = sum.inputs[1].dtype;
      Launch<float, 2> launch;
      launch.in.count = 2;
      for (int i = 0; i < 2; ++i) {
        launch.in.data[i] = static_cast<const float*>(sum.inputs[i].data);
        launch.in.weights[i] = detail::weight_in<C>(sum.inputs[i].weight);
      }
      launch.z = z;
      const auto bytes = static_cast<std::int64_t>(
          count * (dtype_size(first) + dtype_size(second) + sizeof(float)));
      const detail::Predecessor previous = detail::previous_kernel(stream);
      const auto pair = [&](auto first_tag, auto rest_tag) {
        using First = typename decltype(first_tag)::type;
        using Rest = typename decltype(rest_tag)::type;
        status = settled(launch_aligned<float, std::int32_t, 2, First, Rest>(launch, count, bytes,
                                                                             stream, previous));
        return true;
      };
      using Float = detail::TypeTag<float>;
      using BFloat16 = detail::TypeTag<bfloat16>;
      using Float16 = detail::TypeTag<float16>;
      if (first == DType::kFloat32 && second == DType::kBFloat16) {
        return pair(Float{}, BFloat16{});
      }
      if (first == DType::kBFloat16 && second == DType::kFloat32) {
        return pair(BFloat16{}, Float{});
      }
      if (first == DType::kFloat32 && second == DType::kFloat16) {
        return pair(Float{}, Float16{});
      }
      if (first == DType::kFloat16 && second == DType::kFloat32) {
        return pair(Float16{}, Float{});
      }
    }
  }
  return false;
}

}  // namespace

cudaError_t sum_cuda(const Sum& sum, const Plan& plan, cudaStream_t stream) {
  if (sum.count < 1 || plan.inputs != sum.count || dtype_size(sum.z.dtype) == 0) {
    return cudaErrorInvalidValue;
  }
  for (int i = 0; i < sum.count; ++i) {
    if (dtype_size(sum.inputs[i].dtype) == 0) {
      return cudaErrorInvalidValue;
    }
  }
  if (plan.kernel == Kernel::kNothing) {
    return cudaSuccess;
  }
  cudaError_t status = cudaErrorInvalidValue;
  bool launched = false;
  const bool known = detail::visit_dtype(sum.common, [&](auto tag) {
    launched = launch_specialised<decltype(tag)::value>(sum, plan, stream, status);
  });
  if (!known) {
    return cudaErrorInvalidValue;
  }
  return launched ? status : detail::sum_dynamic(sum, plan, stream);
}

template <class T>
cudaError_t add_n_cuda(const T* const* inputs, const alpha_t<T>* weights, T* z, const Plan& plan,
                       cudaStream_t stream) {
  if (plan.kernel == Kernel::kNothing) {
    return cudaSuccess;
  }
  PerOperand<compute_t<T>> scales(plan.inputs);
  for (int i = 0; i < plan.inputs; ++i) {
    scales[i] = detail::scale_of<T>(weights[i]);
  }
  return sum_uniform(inputs, scales.data(), z, plan, stream);
}

template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
                     cudaStream_t stream) {
  const T* const inputs[] = {x, y};
  const alpha_t<T> weights[] = {alpha_t<T>(1), alpha};
  return add_n_cuda(inputs, weights, z, plan, stream);
}

template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha,
                     cudaStream_t stream) {
  if (n <= 0) {
    return cudaSuccess;
  }
  const Operand run{1, &n, nullptr};
  return add_cuda(x, y, z, plan_add(x, run, y, run, z, run), alpha, stream);
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

#define VECADD_INSTANTIATE_CUDA(T)                                                                 \
  template cudaError_t add_n_cuda<T>(const T* const*, const alpha_t<T>*, T*, const Plan&,          \
                                     cudaStream_t);                                                \
  template cudaError_t add_cuda<T>(const T*, const T*, T*, const Plan&, alpha_t<T>, cudaStream_t); \
  template cudaError_t add_cuda<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>, cudaStream_t);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_INSTANTIATE_CUDA)
#undef VECADD_INSTANTIATE_CUDA

}  // namespace vecadd
