// Which kernels are vecadd's, and what kernel a captured stream's next launch will follow.
#include <atomic>
#include <cstddef>

#include "launch.cuh"

namespace vecadd::detail {
namespace {

// Room for every instantiation the library launches (152 kernels with version 20's shapes).
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

// Whether the stream is being captured, and if so the one node its next captured node will
// depend on (nullptr when it will depend on several, or none).
bool captured_dependency(cudaStream_t stream, cudaGraphNode_t& node) {
  node = nullptr;
#if CUDART_VERSION >= 12030
  // The legacy default stream (torch's default) cannot be captured: no query, which costs
  // about 100 ns per call on an H200 host.
  if (stream == nullptr || stream == cudaStreamLegacy) {
    return false;
  }
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
    return false;
  }
  if (status != cudaStreamCaptureStatusActive) {
    return false;
  }
  node = count == 1 ? dependencies[0] : nullptr;
  return true;
#else
  static_cast<void>(stream);
  return false;
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

Predecessor previous_kernel(cudaStream_t stream) {
  cudaGraphNode_t node = nullptr;
  if (!captured_dependency(stream, node)) {
    return Predecessor::kUnknown;
  }
  if (node == nullptr) {
    return Predecessor::kOther;
  }
  cudaGraphNodeType type{};
  if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeKernel) {
    cudaGetLastError();
    return Predecessor::kOther;
  }
  cudaKernelNodeParams params{};
  if (cudaGraphKernelNodeGetParams(node, &params) != cudaSuccess) {
    cudaGetLastError();  // e.g. a kernel launched through the driver API
    return Predecessor::kOther;
  }
  return is_vecadd_kernel(params.func) ? Predecessor::kVecadd : Predecessor::kOther;
}

}  // namespace vecadd::detail
