// vecadd::add_cuda over plans on a GPU: the layouts of test_add_cpu, each through its
// kernel, checked element by element against the plain loop on the host; and vecadd::sum_cuda,
// every dtype mixed with every other, checked against the reference of test_sum_cpu
// (reference.h). Exits 77 (ctest's "skipped") without a GPU.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "arrays.h"
#include "check.h"
#include "reference.h"
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

// ---- vecadd::sum_cuda: operands of their own dtypes ----

using vecadd::DType;
using vecadd::Number;
using vecadd_test::CallInput;
using vecadd_test::MixedArray;

// A device copy of a mixed array's bytes, freed with it.
struct DeviceBytes {
  unsigned char* storage = nullptr;
  std::size_t length = 0;

  explicit DeviceBytes(const MixedArray& host) : length(host.storage.size()) {
    CHECK(cudaMalloc(&storage, length + 16) == cudaSuccess);
    CHECK(cudaMemcpy(storage, host.storage.data(), length, cudaMemcpyHostToDevice) == cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(storage); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  void* at(const MixedArray& array) const {
    return storage + array.offset * static_cast<std::int64_t>(array.element_size());
  }
};

// A weight for each compute type whose products are exact in every common dtype's precision for
// complex sums (the GPU fuses inside complex products as torch's CUDA kernels do; the reference
// does not), and -0.75 otherwise.
Number weight_on_gpu(DType common) {
  return vecadd_test::is_complex(common) ? Number{2, 2.0, -1.0}
                                         : Number{common == DType::kBool ? 1 : 3, -0.75, 0.0};
}

// Runs the call on the GPU (its arrays copied there, z copied back) and returns the elements
// that differ from the reference.
std::int64_t sum_on_device(const std::vector<CallInput>& inputs, MixedArray& z, DType common) {
  std::vector<std::unique_ptr<DeviceBytes>> copies;
  std::vector<const void*> data;
  for (const CallInput& input : inputs) {
    if (input.array != nullptr) {
      copies.push_back(std::make_unique<DeviceBytes>(*input.array));
      data.push_back(copies.back()->at(*input.array));
    } else {
      data.push_back(nullptr);
    }
  }
  const DeviceBytes dz(z);
  const std::vector<vecadd::SumInput> described = vecadd_test::sum_inputs(inputs, data);
  const vecadd::Sum sum{described.data(),
                        static_cast<int>(described.size()),
                        {dz.at(z), z.operand(), z.dtype},
                        common};
  CHECK(vecadd::sum_cuda(sum, vecadd::plan_sum(sum), nullptr) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaMemcpy(z.storage.data(), dz.storage, dz.length, cudaMemcpyDeviceToHost) == cudaSuccess);
  std::string first;
  const std::int64_t wrong = vecadd_test::sum_mismatches(inputs, z, common, true, &first);
  if (wrong != 0) {
    std::printf("  common %s, z %s: %s\n", vecadd::dtype_name(common), vecadd::dtype_name(z.dtype),
                first.c_str());
  }
  return wrong;
}

constexpr std::int64_t kLength = 1100;

MixedArray zeros(DType dtype, vecadd_test::Sizes sizes, vecadd_test::Sizes strides = {}) {
  return vecadd_test::make_mixed(dtype, std::move(sizes), {vecadd_test::Ref::of_int(0)},
                                 std::move(strides));
}

}  // namespace

TEST(sum_cuda_casts_every_dtype_to_every_common_dtype) {
  const auto values = vecadd_test::interesting_values();
  for (const DType from : vecadd_test::kAllDTypes) {
    const MixedArray x = vecadd_test::make_mixed(from, {kLength}, values);
    for (const DType common : vecadd_test::kAllDTypes) {
      MixedArray z = zeros(common, {kLength});
      CHECK_EQ(sum_on_device({vecadd_test::array_input(x)}, z, common), 0);
    }
  }
}

TEST(sum_cuda_sums_every_pair_of_dtypes_in_every_common_dtype) {
  const auto values = vecadd_test::interesting_values();
  for (const DType first : vecadd_test::kAllDTypes) {
    const MixedArray x = vecadd_test::make_mixed(first, {kLength}, values);
    for (const DType second : vecadd_test::kAllDTypes) {
      const MixedArray y = vecadd_test::make_mixed(second, {kLength}, values, {}, 0, 7);
      for (const DType common : vecadd_test::kAllDTypes) {
        MixedArray z = zeros(common, {kLength});
        CHECK_EQ(sum_on_device({vecadd_test::array_input(x),
                                vecadd_test::array_input(y, weight_on_gpu(common))},
                               z, common),
                 0);
      }
    }
  }
}

TEST(sum_cuda_casts_the_rounded_sum_into_every_out_dtype) {
  const auto values = vecadd_test::interesting_values();
  for (const DType common : vecadd_test::kAllDTypes) {
    const MixedArray x = vecadd_test::make_mixed(common, {kLength}, values);
    const MixedArray y = vecadd_test::make_mixed(common, {kLength}, values, {}, 0, 3);
    for (const DType out : vecadd_test::kAllDTypes) {
      MixedArray z = zeros(out, {kLength});
      CHECK_EQ(sum_on_device({vecadd_test::array_input(x), vecadd_test::array_input(y)}, z, common),
               0);
    }
  }
}

TEST(sum_cuda_takes_constants_by_value_first_or_last) {
  // Contiguous and aligned (the constant kernels of the six tuned dtypes), and off by one
  // element (the dynamic kernel), for every common dtype and constant dtype.
  const auto values = vecadd_test::interesting_values();
  const Number constants[] = {Number::of_integer(300), Number{5000000007, 0.1, 0.0},
                              Number{-1, 65519.0, 2.5}};
  for (const DType common : vecadd_test::kAllDTypes) {
    for (const std::int64_t offset : {0, 1}) {
      const MixedArray x = vecadd_test::make_mixed(common, {kLength}, values, {}, offset);
      for (const DType dtype : vecadd_test::kAllDTypes) {
        for (const Number& value : constants) {
          for (const bool scalar : {false, true}) {
            MixedArray z = zeros(common, {kLength});
            CHECK_EQ(sum_on_device(
                         {vecadd_test::array_input(x),
                          vecadd_test::constant_input(dtype, value, scalar, weight_on_gpu(common))},
                         z, common),
                     0);
            CHECK_EQ(sum_on_device(
                         {vecadd_test::constant_input(dtype, value, scalar, weight_on_gpu(common)),
                          vecadd_test::array_input(x, weight_on_gpu(common))},
                         z, common),
                     0);
          }
        }
      }
    }
  }
}

TEST(sum_cuda_a_scalar_skips_the_rounding_to_a_16_bit_common_dtype) {
  const MixedArray x =
      vecadd_test::make_mixed(DType::kFloat16, {4096}, {vecadd_test::Ref::of_int(1)});
  const Number value = Number::of_real(0.00048828125 + 2.384185791015625e-7);
  for (const bool scalar : {false, true}) {
    MixedArray z = zeros(DType::kFloat16, {4096});
    CHECK_EQ(sum_on_device({vecadd_test::array_input(x),
                            vecadd_test::constant_input(DType::kFloat64, value, scalar)},
                           z, DType::kFloat16),
             0);
    CHECK(vecadd_test::load(z.data(), DType::kFloat16).re == (scalar ? 1.0009765625 : 1.0));
  }
}

TEST(sum_cuda_mixed_layouts) {
  const auto values = vecadd_test::random_values(5, 97);
  const auto more = vecadd_test::random_values(6, 89);
  for (const DType common : {DType::kFloat32, DType::kBFloat16, DType::kInt64, DType::kComplex64}) {
    const DType other = common == DType::kFloat32 ? DType::kBFloat16 : DType::kFloat32;
    const DType wide = common == DType::kInt64 ? DType::kInt32 : DType::kFloat16;
    for (const std::int64_t n : {std::int64_t{1} << 20, std::int64_t{4097}}) {  // whole tiles
      const MixedArray x = vecadd_test::make_mixed(other, {n}, values);
      const MixedArray y = vecadd_test::make_mixed(wide, {n}, more);
      MixedArray z = zeros(common, {n});
      CHECK_EQ(sum_on_device({vecadd_test::array_input(x),
                              vecadd_test::array_input(y, weight_on_gpu(common))},
                             z, common),
               0);
      MixedArray w = zeros(common, {n});  // and the other way round
      CHECK_EQ(sum_on_device({vecadd_test::array_input(y),
                              vecadd_test::array_input(x, weight_on_gpu(common))},
                             w, common),
               0);
    }
    {  // a row broadcast, a column broadcast and a 0-dim array
      const MixedArray x = vecadd_test::make_mixed(common, {300, 256}, values);
      MixedArray z = zeros(common, {300, 256});
      for (const vecadd_test::Sizes& shape :
           {vecadd_test::Sizes{256}, vecadd_test::Sizes{300, 1}, vecadd_test::Sizes{}}) {
        const MixedArray y = vecadd_test::make_mixed(other, shape, more);
        CHECK_EQ(
            sum_on_device({vecadd_test::array_input(x), vecadd_test::array_input(y)}, z, common),
            0);
      }
    }
    {  // x transposed, y sliced with a step and off by one, z of another dtype
      const MixedArray x = vecadd_test::make_mixed(other, {200, 150}, values, {1, 200});
      const MixedArray y = vecadd_test::make_mixed(wide, {200, 150}, more, {450, 3}, 1);
      MixedArray z = zeros(DType::kComplex128, {200, 150});
      CHECK_EQ(sum_on_device({vecadd_test::array_input(x), vecadd_test::array_input(y)}, z, common),
               0);
    }
    {  // eleven dimensions that cannot merge: three loop on the host
      const vecadd_test::Sizes sizes(11, 2);
      const MixedArray x =
          vecadd_test::make_mixed(other, sizes, values, vecadd_test::unmergeable_strides(11));
      const MixedArray y =
          vecadd_test::make_mixed(wide, vecadd_test::Sizes(sizes.begin() + 3, sizes.end()), more);
      MixedArray z = zeros(common, sizes);
      CHECK_EQ(sum_on_device({vecadd_test::array_input(x), vecadd_test::array_input(y)}, z, common),
               0);
    }
  }
}

TEST(sum_cuda_sums_of_many_inputs_of_many_dtypes) {
  const DType dtypes[] = {DType::kFloat16,   DType::kInt8,  DType::kFloat32, DType::kBool,
                          DType::kBFloat16,  DType::kInt64, DType::kFloat64, DType::kUInt8,
                          DType::kComplex32, DType::kInt16, DType::kFloat32, DType::kInt32};
  for (const DType common : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kComplex128}) {
    for (const int n : {3, 8, 12}) {
      std::vector<MixedArray> owned;
      for (int i = 0; i < n; ++i) {
        const int kind = i % 4;
        const auto values = vecadd_test::random_values(static_cast<unsigned>(i + 1), 41);
        owned.push_back(kind == 1   ? vecadd_test::make_mixed(dtypes[i], {33, 1}, values)
                        : kind == 2 ? vecadd_test::make_mixed(dtypes[i], {40}, values)
                        : kind == 3 ? vecadd_test::make_mixed(dtypes[i], {33, 40}, values, {1, 33})
                                    : vecadd_test::make_mixed(dtypes[i], {33, 40}, values));
      }
      std::vector<CallInput> inputs;
      for (int i = 0; i < n; ++i) {
        inputs.push_back(vecadd_test::array_input(owned[static_cast<std::size_t>(i)],
                                                  Number{i % 3 - 1, (i % 3 - 1) * 0.5, 0.0}));
      }
      inputs.push_back(vecadd_test::constant_input(DType::kFloat64, Number::of_real(0.25), true));
      MixedArray z = zeros(common, {33, 40});
      CHECK_EQ(sum_on_device(inputs, z, common), 0);
    }
  }
}

TEST(sum_cuda_refuses_a_plan_of_another_call) {
  const std::int64_t four = 4;
  const vecadd::Operand vector{1, &four, nullptr};
  float* data = nullptr;
  CHECK(cudaMalloc(&data, 16 * sizeof(float)) == cudaSuccess);
  const vecadd::SumInput inputs[] = {{data, vector, DType::kFloat32},
                                     {data + 4, vector, DType::kBFloat16}};
  const vecadd::Sum two{inputs, 2, {data + 8, vector, DType::kFloat32}, DType::kFloat32};
  const vecadd::Sum one{inputs, 1, {data + 8, vector, DType::kFloat32}, DType::kFloat32};
  CHECK(vecadd::sum_cuda(one, vecadd::plan_sum(two), nullptr) == cudaErrorInvalidValue);
  cudaFree(data);
}

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
