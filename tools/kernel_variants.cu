// Times launch shapes of vecadd's contiguous kernel side by side (no torch needed):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I src/include -I src/kernels -I <build>/generated/include \
//        tools/kernel_variants.cu -o kernel_variants && ./kernel_variants
// Prints GB/s (3 n itemsize bytes per call) for each variant and size, and the device-to-
// device copy bandwidth as a ceiling. Each number is the median of 7 CUDA-graph replays.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "contiguous_kernel.cuh"

using vecadd::detail::launch_contiguous;

#define CHECK(call)                                                                \
  do {                                                                             \
    cudaError_t status_ = (call);                                                  \
    if (status_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(status_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

// Median seconds per launch of `launch`, replayed from a graph of `calls` launches.
double time_launch(const std::function<void(cudaStream_t)>& launch, int calls) {
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  launch(stream);
  CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) launch(stream);
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  CHECK(cudaGraphLaunch(exec, stream));
  for (int round = 0; round < 7; ++round) {
    CHECK(cudaEventRecord(start, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float elapsed = 0;
    CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    ms.push_back(elapsed);
  }
  std::sort(ms.begin(), ms.end());
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  return ms[3] / 1e3 / calls;
}

template <class T>
void run(const char* type_name, int max_log2) {
  constexpr int W = 16 / sizeof(T);
  const std::int64_t max_n = std::int64_t{1} << max_log2;
  T *x, *y, *z;
  CHECK(cudaMalloc(&x, max_n * sizeof(T)));
  CHECK(cudaMalloc(&y, max_n * sizeof(T)));
  CHECK(cudaMalloc(&z, max_n * sizeof(T)));
  CHECK(cudaMemset(x, 0x3c, max_n * sizeof(T)));
  CHECK(cudaMemset(y, 0x3a, max_n * sizeof(T)));
  using A = typename vecadd::detail::ElementMath<T>::compute_type;
  const A alpha = A(1);
  struct Variant {
    std::string name;
    std::function<void(std::int64_t, cudaStream_t)> launch;
  };
  std::vector<Variant> variants = {
      {"gs256x4/64",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 256, 4, std::int64_t, true>(x, y, z, n, alpha, s);
       }},
      {"os256x4/32",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 256, 4, int, false>(x, y, z, n, alpha, s);
       }},
      {"os256x2/32",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 256, 2, int, false>(x, y, z, n, alpha, s);
       }},
      {"os256x1/32",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 256, 1, int, false>(x, y, z, n, alpha, s);
       }},
      {"os128x4/32",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 128, 4, int, false>(x, y, z, n, alpha, s);
       }},
      {"os128x2/32",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 128, 2, int, false>(x, y, z, n, alpha, s);
       }},
      {"os128x1/32",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 128, 1, int, false>(x, y, z, n, alpha, s);
       }},
      {"os512x2/32",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 512, 2, int, false>(x, y, z, n, alpha, s);
       }},
      {"gs256x2/32w2",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 256, 2, int, true>(x, y, z, n, alpha, s, 2);
       }},
      {"gs256x4/32w4",
       [&](std::int64_t n, cudaStream_t s) {
         launch_contiguous<T, W, 256, 4, int, true>(x, y, z, n, alpha, s, 4);
       }},
  };
  std::printf("\n%s: GB/s\n%10s", type_name, "n");
  for (const auto& v : variants) std::printf(" %13s", v.name.c_str());
  std::printf("\n");
  for (int e = 10; e <= max_log2; e += 2) {
    const std::int64_t n = std::int64_t{1} << e;
    const int calls =
        static_cast<int>(std::clamp<std::int64_t>(2000000000 / (3 * n * sizeof(T)), 10, 200));
    std::printf("%10lld", static_cast<long long>(n));
    for (const auto& v : variants) {
      const double seconds = time_launch([&](cudaStream_t s) { v.launch(n, s); }, calls);
      std::printf(" %13.1f", 3.0 * n * sizeof(T) / seconds / 1e9);
    }
    std::printf("\n");
  }
  const double copy = time_launch(
      [&](cudaStream_t s) {
        CHECK(cudaMemcpyAsync(z, x, max_n * sizeof(T), cudaMemcpyDeviceToDevice, s));
      },
      10);
  std::printf("copy ceiling at n=2^%d: %.1f GB/s (read + write)\n", max_log2,
              2.0 * max_n * sizeof(T) / copy / 1e9);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(z));
}

int main() {
  run<float>("float32", 28);
  run<__half>("float16", 28);
  return 0;
}
