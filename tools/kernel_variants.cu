// Launch shapes, cache hints and candidate rewrites of vecadd's contiguous kernel, built as a small
// shared library so that tools/kernel_variants.py can time each of them next to torch.add on the
// same buffers (no torch in here):
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -I src/include -I src/kernels \
//        -I <build>/generated/include tools/kernel_variants.cu -o kernel_variants.so
#include <cstdint>

#include "contiguous_kernel.cuh"

namespace {

using vecadd::detail::add_packs;
using vecadd::detail::add_scaled;
using vecadd::detail::CacheHint;
using vecadd::detail::launch_contiguous;
using vecadd::detail::load_pack;
using vecadd::detail::Pack;
using vecadd::detail::store_pack;

// Candidate: a block whose tile is whole takes a branch-free vector path, the one partial
// block loops over single elements. kTag only makes otherwise identical copies distinct, to
// measure how much two builds of the very same code differ (they agreed within 0.3 %).
template <class T, int kWidth, int kThreads, CacheHint kHint, int kTag>
__global__ void __launch_bounds__(kThreads)
    add_whole_tiles_kernel(const T* x, const T* y, T* z, int n,
                           typename vecadd::detail::ElementMath<T>::compute_type alpha) {
  using PackT = Pack<T, kWidth>;
  constexpr int kTile = kThreads * kWidth;
  const int first = static_cast<int>(blockIdx.x) * kTile;
  const int remaining = n - first;
  if (remaining >= kTile) {
    const int p = static_cast<int>(blockIdx.x) * kThreads + static_cast<int>(threadIdx.x);
    const PackT x_pack = load_pack<kHint>(reinterpret_cast<const PackT*>(x) + p);
    const PackT y_pack = load_pack<kHint>(reinterpret_cast<const PackT*>(y) + p);
    store_pack<kHint>(reinterpret_cast<PackT*>(z) + p, add_packs(x_pack, y_pack, alpha));
    return;
  }
  for (int i = static_cast<int>(threadIdx.x); i < remaining; i += kThreads) {
    z[first + i] = add_scaled(x[first + i], y[first + i], alpha);
  }
}

// Dynamic shared memory (unused by the kernel) that leaves room for at most `blocks` blocks
// per SM: a way to cap occupancy without touching the kernel's code.
int shared_bytes_for_at_most(int blocks) {
  int device = 0;
  int per_sm = 0;
  int reserved = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device);
  return (per_sm / blocks - reserved) / 128 * 128;
}

template <class T, int kThreads, CacheHint kHint, int kTag>
int launch_whole_tiles(const T* x, const T* y, T* z, std::int64_t n,
                       typename vecadd::detail::ElementMath<T>::compute_type alpha,
                       cudaStream_t stream, int max_blocks_per_sm = 0) {
  constexpr int kWidth = 16 / sizeof(T);
  constexpr std::int64_t kTile = std::int64_t{kThreads} * kWidth;
  const auto blocks = static_cast<unsigned>((n + kTile - 1) / kTile);
  const auto kernel = add_whole_tiles_kernel<T, kWidth, kThreads, kHint, kTag>;
  int shared = 0;
  if (max_blocks_per_sm > 0) {
    shared = shared_bytes_for_at_most(max_blocks_per_sm);
    int resident = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kThreads, shared);
    if (resident != max_blocks_per_sm) {
      return -2;  // the cap did not come out as asked
    }
  }
  kernel<<<blocks, kThreads, shared, stream>>>(x, y, z, static_cast<int>(n), alpha);
  return 0;
}

// Variant names, in the order of the switch below. Variant 0 is what the library ships.
constexpr const char* kVariantNames[] = {
    "library",   "whole tiles", "whole st.cs",     "whole 256",
    "whole 512", "whole 1024",  "whole1024 st.cs",
};
constexpr int kVariantCount = sizeof(kVariantNames) / sizeof(kVariantNames[0]);

template <class T>
int launch_variant(int variant, const void* x_bytes, const void* y_bytes, void* z_bytes,
                   std::int64_t n, double alpha_value, cudaStream_t stream) {
  constexpr int W = 16 / sizeof(T);
  constexpr auto kStore = CacheHint::kStreamingStore;
  constexpr auto kPlain = CacheHint::kDefault;
  const auto* x = static_cast<const T*>(x_bytes);
  const auto* y = static_cast<const T*>(y_bytes);
  auto* z = static_cast<T*>(z_bytes);
  using Compute = typename vecadd::detail::ElementMath<T>::compute_type;
  const auto alpha = static_cast<Compute>(alpha_value);
  if (n > (std::int64_t{1} << 30)) {
    return -1;  // the candidates index with int
  }
  int status = 0;
  switch (variant) {
    case 0:
      launch_contiguous<T, W, 128, 1, std::int32_t, false>(x, y, z, n, alpha, stream);
      break;
    case 1:
      status = launch_whole_tiles<T, 128, kPlain, 0>(x, y, z, n, alpha, stream);
      break;
    case 2:
      status = launch_whole_tiles<T, 128, kStore, 0>(x, y, z, n, alpha, stream);
      break;
    case 3:
      status = launch_whole_tiles<T, 256, kPlain, 0>(x, y, z, n, alpha, stream);
      break;
    case 4:
      status = launch_whole_tiles<T, 512, kPlain, 0>(x, y, z, n, alpha, stream);
      break;
    case 5:
      status = launch_whole_tiles<T, 1024, kPlain, 0>(x, y, z, n, alpha, stream);
      break;
    case 6:
      status = launch_whole_tiles<T, 1024, kStore, 0>(x, y, z, n, alpha, stream);
      break;
    default:
      return -1;
  }
  if (status != 0) {
    return status;
  }
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

extern "C" {

int vecadd_variant_count() {
  return kVariantCount;
}

const char* vecadd_variant_name(int variant) {
  return variant >= 0 && variant < kVariantCount ? kVariantNames[variant] : nullptr;
}

// dtype: 0 float16, 1 bfloat16, 2 float32, 3 float64, 4 int32, 5 int64. Returns the CUDA
// launch status, or -1 for an unknown variant or dtype.
int vecadd_variant_launch(int variant, int dtype, const void* x, const void* y, void* z,
                          std::int64_t n, double alpha, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case 0:
      return launch_variant<vecadd::float16>(variant, x, y, z, n, alpha, cuda_stream);
    case 1:
      return launch_variant<vecadd::bfloat16>(variant, x, y, z, n, alpha, cuda_stream);
    case 2:
      return launch_variant<float>(variant, x, y, z, n, alpha, cuda_stream);
    case 3:
      return launch_variant<double>(variant, x, y, z, n, alpha, cuda_stream);
    case 4:
      return launch_variant<std::int32_t>(variant, x, y, z, n, alpha, cuda_stream);
    case 5:
      return launch_variant<std::int64_t>(variant, x, y, z, n, alpha, cuda_stream);
    default:
      return -1;
  }
}

}  // extern "C"
