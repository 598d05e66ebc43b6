// Kernel launches that may overlap the end of the previous kernel in the stream
// (programmatic dependent launch, compute capability 9.0 on). Each vecadd kernel first
// waits until the kernel before it has finished and its writes are visible, so only its
// launch and scheduling overlap, never its memory accesses.
#pragma once

#include <atomic>

#include <cuda_runtime.h>

namespace vecadd::detail {

// The first statement of every kernel: blocks until the previous kernel in the stream has
// completed and its writes are visible (a no-op when launched without overlap).
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next kernel in the stream be scheduled once every block of this one has called
// it; that kernel still waits for this one to complete before it touches memory.
__device__ __forceinline__ void allow_next_kernel_to_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

enum class Overlap { kAllowed, kNever };

// Whether kKernel, as loaded for the current device, holds the wait above: only code
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

// Enqueues kKernel<<<blocks, threads, 0, stream>>>(args...), allowed to overlap the end of
// the previous kernel where the kernel and the CUDA runtime support it.
template <auto kKernel, class... Args>
cudaError_t launch_kernel(unsigned blocks, unsigned threads, cudaStream_t stream, Overlap overlap,
                          Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attributes[1] = {};
  // Stream capture records such launches as graph edges from CUDA 12.3 on.
#if CUDART_VERSION >= 12030
  if (overlap == Overlap::kAllowed && kernel_waits_for_previous<kKernel>()) {
    attributes[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attributes;
    config.numAttrs = 1;
  }
#else
  static_cast<void>(overlap);
#endif
  return cudaLaunchKernelEx(&config, kKernel, args...);
}

}  // namespace vecadd::detail
