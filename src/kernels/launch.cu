// Which kernels are vecadd's, and whether a captured stream's next launch follows one of them.
#include <atomic>
#include <cstddef>

#include "launch.cuh"

namespace vecadd::detail {
namespace {

// Room for every instantiation the library launches (about 60), with margin.
constexpr int kMaxKernels = 256;
std::atomic<const void*> known_kernels[kMaxKernels] = {};
std::atomic<int> known_count{0};

bool is_vecadd_kernel(const void* kernel) {
  const int count = known_count.load(std::memory_order_acquire);
  for (int i = 0; i < count && i < kMaxKernels; ++i) {
    if (known_kernels[i].load(std::memory_order_acquire) == kernel) {
      return true;
    }
  }
  return false;
}

// The one node the stream's next captured node will depend on, or nullptr when the stream is
// not being captured or the next node will depend on several nodes (or none).
cudaGraphNode_t sole_capture_dependency(cudaStream_t stream) {
#if CUDART_VERSION >= 12030
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaGraphNode_t* dependencies = nullptr;
  const cudaGraphEdgeData* edges = nullptr;  // asked for, or the query fails after an overlap
  std::size_t count = 0;
#if CUDART_VERSION >= 13000
  const cudaError_t queried =
      cudaStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &dependencies, &edges, &count);
#else
  const cudaError_t queried =
      cudaStreamGetCaptureInfo_v3(stream, &status, nullptr, nullptr, &dependencies, &edges, &count);
#endif
  if (queried != cudaSuccess) {
    cudaGetLastError();  // a failed query must not surface as the launch's error
    return nullptr;
  }
  if (status != cudaStreamCaptureStatusActive || count != 1) {
    return nullptr;
  }
  return dependencies[0];
#else
  static_cast<void>(stream);
  return nullptr;
#endif
}

}  // namespace

// Called once per kernel (from a function-local static). A reader may see a claimed slot before
// its kernel is stored; it then misses that kernel once, which costs speed, never correctness.
bool remember_vecadd_kernel(const void* kernel) {
  const int claimed = known_count.fetch_add(1, std::memory_order_acq_rel);
  if (claimed < kMaxKernels) {
    known_kernels[claimed].store(kernel, std::memory_order_release);
  }
  return true;
}

bool follows_vecadd_kernel(cudaStream_t stream) {
  const cudaGraphNode_t node = sole_capture_dependency(stream);
  if (node == nullptr) {
    return false;
  }
  cudaGraphNodeType type{};
  if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeKernel) {
    cudaGetLastError();
    return false;
  }
  cudaKernelNodeParams params{};
  if (cudaGraphKernelNodeGetParams(node, &params) != cudaSuccess) {
    cudaGetLastError();  // e.g. a kernel launched through the driver API
    return false;
  }
  return is_vecadd_kernel(params.func);
}

}  // namespace vecadd::detail
