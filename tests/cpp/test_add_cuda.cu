// vecadd::add_cuda over plans on a GPU: the layouts of test_add_cpu, each through its
// kernel, checked element by element against the plain loop on the host. Exits 77 (ctest's
// "skipped") without a GPU.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "arrays.h"
#include "check.h"
#include "vecadd/vecadd.h"

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

}  // namespace

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
