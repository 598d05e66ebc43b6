// Kernel launches that may overlap the end of the previous kernel in the stream
// (programmatic dependent launch, compute capability 9.0 on). Each vecadd kernel first
// waits until the kernel before it has finished and its writes are visible, so only its
// launch and scheduling overlap, never its memory accesses.
#pragma once

#include <atomic>
#include <cstdint>

#include <cuda_runtime.h>

namespace vecadd::detail {

// When a kernel lets the next kernel in the stream launch: once every block has started
// (kAtStart), issued its stores (kAfterStores) or exited (kAtExit). Which is fastest depends on
// the grid (docs/kernel-notes.md).
enum class Release : unsigned char { kAtStart, kAfterStores, kAtExit };

// How one launch meets its neighbours in the stream.
struct LaunchOrder {
  bool overlap_previous;  // may launch before the previous kernel has ended (and then waits)
  Release release;
};

__device__ __forceinline__ void allow_next_kernel_to_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// The first statement of every kernel: waits until the previous kernel in the stream has
// completed and its writes are visible (a no-op when this launch may not overlap it).
__device__ __forceinline__ void begin_kernel(Release release) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  if (release == Release::kAtStart) {
    allow_next_kernel_to_launch();
  }
}

// Called by every thread once its stores are issued.
__device__ __forceinline__ void end_kernel(Release release) {
  if (release == Release::kAfterStores) {
    allow_next_kernel_to_launch();
  }
}

// Whether kKernel, as loaded for the current device, holds the wait of begin_kernel: only code
// compiled for compute capability 9.0 or newer does (a build for older GPUs, run from its
// PTX on a newer one, does not). Looked up once per device.
template <auto kKernel>
bool kernel_waits_for_previous() {
  constexpr int kMaxDevices = 64;
  static std::atomic<signed char> known[kMaxDevices] = {};  // 0 unknown, 1 yes, -1 no
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) {
    return false;
  }
  signed char state = known[device].load(std::memory_order_relaxed);
  if (state == 0) {
    cudaFuncAttributes attributes{};
    const bool read = cudaFuncGetAttributes(&attributes, kKernel) == cudaSuccess;
    state = read && attributes.ptxVersion >= 90 ? 1 : -1;
    known[device].store(state, std::memory_order_relaxed);
  }
  return state > 0;
}

// Records a kernel as one of vecadd's, for previous_kernel; returns true.
bool remember_vecadd_kernel(const void* kernel);

// What the next launch on a stream will follow: known only while the stream is captured into
// a CUDA graph (the node the next one will depend on), unknown otherwise.
enum class Predecessor : unsigned char { kUnknown, kVecadd, kOther };
Predecessor previous_kernel(cudaStream_t stream);

// Sizes in the launch order of a 128-thread grid (bytes count every array of the call once;
// add_cuda.cu has the measurements): calls from kShortCallBytes release the next kernel only as
// they exit; after another library's kernel in a graph, calls from kOverlapAfterOtherBytes on
// overlap it.
inline constexpr std::int64_t kShortCallBytes = std::int64_t{4} << 20;
inline constexpr std::int64_t kOverlapAfterOtherBytes = std::int64_t{1} << 20;

// The order of a 128-thread grid of `bytes` after the given kernel.
inline LaunchOrder small_block_order(std::int64_t bytes, Predecessor previous) {
  return {previous != Predecessor::kOther || bytes >= kOverlapAfterOtherBytes,
          bytes < kShortCallBytes ? Release::kAtStart : Release::kAtExit};
}

// Enqueues kKernel<<<blocks, threads, 0, stream>>>(args..., order.release); the launch
// overlaps the previous kernel only when asked and where the kernel and the CUDA runtime
// support it.
template <auto kKernel, class... Args>
cudaError_t launch_kernel(unsigned blocks, unsigned threads, cudaStream_t stream, LaunchOrder order,
                          Args... args) {
  static const bool remembered = remember_vecadd_kernel(reinterpret_cast<const void*>(kKernel));
  static_cast<void>(remembered);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attributes[1] = {};
  // Stream capture records such launches as graph edges from CUDA 12.3 on.
#if CUDART_VERSION >= 12030
  if (order.overlap_previous && kernel_waits_for_previous<kKernel>()) {
    attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attributes;
    config.numAttrs = 1;
  }
#endif
  return cudaLaunchKernelEx(&config, kKernel, args..., order.release);
}

}  // namespace vecadd::detail
