// vecadd::add_cuda over plans on a GPU: the layouts of test_add_cpu, each through its
// kernel, checked element by element against the plain loop on the host. Exits 77 (ctest's
// "skipped") without a GPU.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "arrays.h"
#include "check.h"
#include "vecadd/cuda.h"

namespace {

using vecadd_test::Array;
using vecadd_test::make_array;
using vecadd_test::mismatches;
using Sizes = std::vector<std::int64_t>;

constexpr int kSkipped = 77;

// A copy of an array's storage on the GPU, freed with it.
template <class T>
struct DeviceCopy {
  T* storage = nullptr;
  std::size_t length = 0;

  explicit DeviceCopy(const Array<T>& host) : length(host.storage.size()) {
    CHECK(cudaMalloc(&storage, length * sizeof(T) + 16) == cudaSuccess);
    CHECK(cudaMemcpy(storage, host.storage.data(), length * sizeof(T), cudaMemcpyHostToDevice) ==
          cudaSuccess);
  }
  ~DeviceCopy() { cudaFree(storage); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;

  void copy_back(Array<T>& host) const {
    CHECK(cudaMemcpy(host.storage.data(), storage, length * sizeof(T), cudaMemcpyDeviceToHost) ==
          cudaSuccess);
  }
};

// Plans the call for the device copies, runs it on a stream of its own, and returns the
// number of elements of z that differ from the plain loop, and the kernel the plan chose.
template <class T>
std::int64_t run_on_device(const Array<T>& x, const Array<T>& y, Array<T>& z, T alpha,
                           vecadd::Kernel& kernel) {
  const DeviceCopy<T> dx(x);
  const DeviceCopy<T> dy(y);
  const DeviceCopy<T> dz(z);
  const T* x_data = dx.storage + x.offset;
  const T* y_data = dy.storage + y.offset;
  T* z_data = dz.storage + z.offset;
  const vecadd::Plan plan =
      vecadd::plan_add(x_data, x.operand(), y_data, y.operand(), z_data, z.operand());
  kernel = plan.kernel;
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream) == cudaSuccess);
  CHECK(vecadd::add_cuda(x_data, y_data, z_data, plan, alpha, stream) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
  cudaStreamDestroy(stream);
  dz.copy_back(z);
  return mismatches(x, y, z, alpha);
}

template <class T>
void check_layouts() {
  vecadd::Kernel kernel{};
  {
    const auto x = make_array<T>({1 << 20}, {}, 0, 1);
    const auto y = make_array<T>({1 << 20}, {}, 0, 2);
    auto z = make_array<T>({1 << 20});
    CHECK_EQ(run_on_device<T>(x, y, z, T(3), kernel), 0);
    CHECK(kernel == vecadd::Kernel::kContiguous);
  }
  {  // an unaligned view: contiguous, one element at a time
    const auto x = make_array<T>({4097}, {}, 1, 1);
    const auto y = make_array<T>({4097}, {}, 0, 2);
    auto z = make_array<T>({4097});
    CHECK_EQ(run_on_device<T>(x, y, z, T(1), kernel), 0);
    CHECK(kernel == vecadd::Kernel::kContiguous);
  }
  {
    const auto x = make_array<T>({300, 256}, {}, 0, 3);
    auto z = make_array<T>({300, 256});
    CHECK_EQ(run_on_device<T>(x, make_array<T>({256}, {}, 0, 4), z, T(2), kernel), 0);
    CHECK(kernel == vecadd::Kernel::kRows);
    CHECK_EQ(run_on_device<T>(x, make_array<T>({300, 1}, {}, 0, 5), z, T(1), kernel), 0);
    CHECK(kernel == vecadd::Kernel::kRows);
  }
  {
    const auto x = make_array<T>({200, 150}, {1, 200}, 0, 7);
    const auto y = make_array<T>({200, 150}, {450, 3}, 1, 8);
    auto z = make_array<T>({200, 150});
    CHECK_EQ(run_on_device<T>(x, y, z, T(5), kernel), 0);
    CHECK(kernel == vecadd::Kernel::kStrided);
  }
  {  // eleven dimensions that cannot merge: eight launches
    const Sizes sizes(11, 2);
    const auto x = make_array<T>(sizes, vecadd_test::unmergeable_strides(11), 0, 11);
    const auto y = make_array<T>(Sizes(sizes.begin() + 3, sizes.end()), {}, 0, 12);
    auto z = make_array<T>(sizes);
    CHECK_EQ(run_on_device<T>(x, y, z, T(2), kernel), 0);
    CHECK(kernel == vecadd::Kernel::kStrided);
  }
}

// ---- Launch order in CUDA graphs: which launches overlap the kernel before them ----

__global__ void scale_in_place(float* values, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    values[i] *= 2.0f;
  }
}

#if CUDART_VERSION >= 12030
// The node the stream's next captured node would depend on: the one just captured.
// The queries that report edge data: CUDA 13 gave them the plain names.
#if CUDART_VERSION >= 13000
const auto capture_info = cudaStreamGetCaptureInfo;
const auto graph_edges = cudaGraphGetEdges;
#else
const auto capture_info = cudaStreamGetCaptureInfo_v3;
const auto graph_edges = cudaGraphGetEdges_v2;
#endif

cudaGraphNode_t last_captured(cudaStream_t stream) {
  cudaStreamCaptureStatus status{};
  const cudaGraphNode_t* nodes = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  std::size_t count = 0;
  CHECK(capture_info(stream, &status, nullptr, nullptr, &nodes, &edges, &count) == cudaSuccess);
  CHECK_EQ(count, std::size_t{1});
  return count == 1 ? nodes[0] : nullptr;
}

// Whether the graph's edge from `from` to `to` is programmatic (the launch of `to` overlaps
// the end of `from`); -1 when there is no such edge.
int is_programmatic_edge(cudaGraph_t graph, cudaGraphNode_t from, cudaGraphNode_t to) {
  std::size_t count = 0;
  CHECK(graph_edges(graph, nullptr, nullptr, nullptr, &count) == cudaSuccess);
  std::vector<cudaGraphNode_t> sources(count), targets(count);
  std::vector<cudaGraphEdgeData> data(count);
  CHECK(graph_edges(graph, sources.data(), targets.data(), data.data(), &count) == cudaSuccess);
  for (std::size_t i = 0; i < count; ++i) {
    if (sources[i] == from && targets[i] == to) {
      return data[i].type == cudaGraphDependencyTypeProgrammatic ? 1 : 0;
    }
  }
  return -1;
}

unsigned block_size(cudaGraphNode_t node) {
  cudaKernelNodeParams params{};
  CHECK(cudaGraphKernelNodeGetParams(node, &params) == cudaSuccess);
  return params.blockDim.x;
}
#endif

}  // namespace

// A launch overlaps the kernel before it when that kernel is vecadd's, or, after any other
// kernel, only for calls of 1 MiB or more; 1024-thread blocks only behind a vecadd kernel.
// The captured graph then computes what the same calls compute eagerly.
TEST(graph_launch_order) {
#if CUDART_VERSION >= 12030
  int device = 0;
  int major = 0;
  CHECK(cudaGetDevice(&device) == cudaSuccess);
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess);
  if (major < 9) {
    std::printf("  compute capability %d: launches never overlap, nothing to check\n", major);
    return;
  }
  constexpr int kSmall = 1 << 12;  // 48 KiB of x, y and z
  constexpr int kLarge = 1 << 20;  // 12 MiB
  std::vector<float> host_x(kLarge), host_y(kLarge);
  for (int i = 0; i < kLarge; ++i) {
    host_x[i] = static_cast<float>(i % 97);
    host_y[i] = static_cast<float>(i % 13);
  }
  float* x = nullptr;
  float* y = nullptr;
  float* z = nullptr;
  CHECK(cudaMalloc(&x, kLarge * sizeof(float)) == cudaSuccess);
  CHECK(cudaMalloc(&y, kLarge * sizeof(float)) == cudaSuccess);
  CHECK(cudaMalloc(&z, kLarge * sizeof(float)) == cudaSuccess);
  CHECK(cudaMemcpy(x, host_x.data(), kLarge * sizeof(float), cudaMemcpyHostToDevice) ==
        cudaSuccess);
  CHECK(cudaMemcpy(y, host_y.data(), kLarge * sizeof(float), cudaMemcpyHostToDevice) ==
        cudaSuccess);
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream) == cudaSuccess);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  CHECK(cudaMemsetAsync(z, 0, kLarge * sizeof(float), stream) == cudaSuccess);
  const cudaGraphNode_t memset = last_captured(stream);
  CHECK(vecadd::add_cuda(x, y, z, kSmall, 1.0f, stream) == cudaSuccess);  // z = x + y
  const cudaGraphNode_t first = last_captured(stream);
  CHECK(vecadd::add_cuda(x, z, z, kSmall, 1.0f, stream) == cudaSuccess);  // z = 2x + y
  const cudaGraphNode_t second = last_captured(stream);
  scale_in_place<<<kLarge / 256, 256, 0, stream>>>(z, kLarge);  // z = 4x + 2y (0 past kSmall)
  const cudaGraphNode_t foreign = last_captured(stream);
  CHECK(vecadd::add_cuda(z, y, z, kSmall, 1.0f, stream) == cudaSuccess);  // z = 4x + 3y
  const cudaGraphNode_t small_after_foreign = last_captured(stream);
  scale_in_place<<<kLarge / 256, 256, 0, stream>>>(z, kLarge);  // z = 8x + 6y
  const cudaGraphNode_t foreign_again = last_captured(stream);
  CHECK(vecadd::add_cuda(x, z, z, kLarge, 1.0f, stream) == cudaSuccess);  // z = 9x + 6y
  const cudaGraphNode_t large_after_foreign = last_captured(stream);
  CHECK(vecadd::add_cuda(x, z, z, kLarge, 1.0f, stream) == cudaSuccess);  // z = 10x + 6y
  const cudaGraphNode_t large_after_vecadd = last_captured(stream);
  CHECK(cudaStreamEndCapture(stream, &graph) == cudaSuccess);

  CHECK_EQ(is_programmatic_edge(graph, memset, first), 0);
  CHECK_EQ(is_programmatic_edge(graph, first, second), 1);
  CHECK_EQ(is_programmatic_edge(graph, second, foreign), 0);
  CHECK_EQ(is_programmatic_edge(graph, foreign, small_after_foreign), 0);
  CHECK_EQ(is_programmatic_edge(graph, foreign_again, large_after_foreign), 1);
  CHECK_EQ(is_programmatic_edge(graph, large_after_foreign, large_after_vecadd), 1);
  CHECK_EQ(block_size(large_after_foreign), 128u);
  CHECK_EQ(block_size(large_after_vecadd), 1024u);

  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, stream) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
  std::vector<float> result(kLarge);
  CHECK(cudaMemcpy(result.data(), z, kLarge * sizeof(float), cudaMemcpyDeviceToHost) ==
        cudaSuccess);
  int wrong = 0;
  for (int i = 0; i < kLarge; ++i) {
    const float expected = i < kSmall ? 10 * host_x[i] + 6 * host_y[i] : 2 * host_x[i];
    wrong += result[i] == expected ? 0 : 1;
  }
  CHECK_EQ(wrong, 0);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  cudaFree(x);
  cudaFree(y);
  cudaFree(z);
#else
  std::printf("  CUDA before 12.3 records no overlapping launches in graphs: nothing to check\n");
#endif
}

// A sum of n inputs (a per-row value, a bias, a transposed matrix and plain matrices in turn)
// on the device, against the plain loop; the kernel the plan chose.
std::int64_t sum_on_device(int n, const Sizes& matrix, vecadd::Kernel& kernel) {
  using T = std::int64_t;
  std::vector<Array<T>> owned;
  for (int i = 0; i < n; ++i) {
    const int kind = i % 4;
    owned.push_back(kind == 1   ? make_array<T>({matrix[0], 1}, {}, 0, i + 1)
                    : kind == 2 ? make_array<T>({matrix[1]}, {}, 0, i + 1)
                    : kind == 3 ? make_array<T>(matrix, {1, matrix[0]}, 0, i + 1)
                                : make_array<T>(matrix, {}, 0, i + 1));
  }
  auto z = make_array<T>(matrix);
  std::vector<std::unique_ptr<DeviceCopy<T>>> copies;
  std::vector<const T*> data;
  std::vector<vecadd::Operand> shapes;
  std::vector<const Array<T>*> inputs;
  std::vector<T> weights;
  for (int i = 0; i < n; ++i) {
    copies.push_back(std::make_unique<DeviceCopy<T>>(owned[static_cast<std::size_t>(i)]));
    data.push_back(copies.back()->storage);
    shapes.push_back(owned[static_cast<std::size_t>(i)].operand());
    inputs.push_back(&owned[static_cast<std::size_t>(i)]);
    weights.push_back(i % 3 - 1);
  }
  const DeviceCopy<T> dz(z);
  const vecadd::Plan plan =
      vecadd::plan_add_n(data.data(), shapes.data(), n, dz.storage, z.operand());
  kernel = plan.kernel;
  CHECK(vecadd::add_n_cuda(data.data(), weights.data(), dz.storage, plan, nullptr) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  dz.copy_back(z);
  return vecadd_test::sum_mismatches(inputs, weights, z);
}

TEST(sums_of_n_inputs_through_each_launch_size) {
  vecadd::Kernel kernel{};
  for (const int n : {1, 3, 8, 9, 32, 33, 70}) {
    CHECK_EQ(sum_on_device(n, {300, 256}, kernel), 0);
    const vecadd::Kernel expected = n == 1  ? vecadd::Kernel::kContiguous
                                    : n < 4 ? vecadd::Kernel::kRows
                                            : vecadd::Kernel::kStrided;
    CHECK(kernel == expected);
  }
}

TEST(float32_layouts) {
  check_layouts<float>();
}

TEST(float64_int32_int64_layouts) {
  check_layouts<double>();
  check_layouts<std::int32_t>();
  check_layouts<std::int64_t>();
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return kSkipped;
  }
  return vecadd_test::run_all();
}
