// Launch shapes of vecadd's contiguous kernel next to the library's own choice, built as a
// small shared library so that tools/kernel_variants.py can time each of them next to
// torch.add on the same buffers (no torch in here):
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -I src/include -I src/kernels \
//        -I <build>/generated/include tools/kernel_variants.cu src/kernels/add_cuda.cu \
//        -o kernel_variants.so
#include <algorithm>
#include <cstdint>

#include "contiguous_kernel.cuh"
#include "vecadd/vecadd.h"

namespace {

using vecadd::detail::launch_contiguous;
using vecadd::detail::LoadCaching;
using vecadd::detail::StoreCaching;

// Tensor-memory-accelerator variant (sm_90): one thread moves the block's x and y tiles into
// shared memory with two bulk copies, all threads add there, and one bulk copy writes z.
template <class T, int kThreads, int kPacks, bool kEvictFirstStore>
__global__ void __launch_bounds__(kThreads)
    add_bulk_kernel(const T* x, const T* y, T* z, int n,
                    typename vecadd::detail::ElementMath<T>::compute_type alpha) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int kWidth = 16 / sizeof(T);
  using PackT = vecadd::detail::Pack<T, kWidth>;
  constexpr int kTile = kThreads * kPacks * kWidth;
  constexpr unsigned kTileBytes = kTile * sizeof(T);
  __shared__ PackT x_tile[kThreads * kPacks];
  __shared__ PackT y_tile[kThreads * kPacks];
  __shared__ alignas(8) std::uint64_t barrier;
  const int first = blockIdx.x * kTile;
  const int remaining = n - first;
  if (remaining < kTile) {
    for (int i = threadIdx.x; i < remaining; i += kThreads) {
      z[first + i] = vecadd::detail::add_scaled(x[first + i], y[first + i], alpha);
    }
    return;
  }
  const auto bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  const auto x_shared = static_cast<unsigned>(__cvta_generic_to_shared(x_tile));
  const auto y_shared = static_cast<unsigned>(__cvta_generic_to_shared(y_tile));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
                 "r"(2 * kTileBytes)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(x_shared),
        "l"(x + first), "r"(kTileBytes), "r"(bar)
        : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
            "r"(y_shared),
        "l"(y + first), "r"(kTileBytes), "r"(bar)
        : "memory");
  }
  __syncthreads();
  unsigned ready = 0;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
        : "=r"(ready)
        : "r"(bar)
        : "memory");
  } while (!ready);
#pragma unroll
  for (int u = 0; u < kPacks; ++u) {
    const int k = u * kThreads + threadIdx.x;
    const int4 x_bits = reinterpret_cast<const int4*>(x_tile)[k];
    const int4 y_bits = reinterpret_cast<const int4*>(y_tile)[k];
    PackT x_pack;
    PackT y_pack;
    __builtin_memcpy(&x_pack, &x_bits, sizeof x_bits);
    __builtin_memcpy(&y_pack, &y_bits, sizeof y_bits);
    const PackT z_pack = vecadd::detail::add_packs(x_pack, y_pack, alpha);
    int4 z_bits;
    __builtin_memcpy(&z_bits, &z_pack, sizeof z_bits);
    reinterpret_cast<int4*>(x_tile)[k] = z_bits;
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    if constexpr (kEvictFirstStore) {
      std::uint64_t policy;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
      asm volatile(
          "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%0], [%1], %2, %3;" ::"l"(
              z + first),
          "r"(x_shared), "r"(kTileBytes), "l"(policy)
          : "memory");
    } else {
      asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(z + first),
                   "r"(x_shared), "r"(kTileBytes)
                   : "memory");
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
#endif
}

template <class T, int kThreads, int kPacks, bool kEvictFirstStore>
void launch_bulk(const T* x, const T* y, T* z, std::int64_t n,
                 typename vecadd::detail::ElementMath<T>::compute_type alpha, cudaStream_t stream) {
  constexpr std::int64_t kTile = std::int64_t{kThreads} * kPacks * (16 / sizeof(T));
  const std::int64_t blocks = std::max<std::int64_t>(1, (n + kTile - 1) / kTile);
  add_bulk_kernel<T, kThreads, kPacks, kEvictFirstStore>
      <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(x, y, z, static_cast<int>(n), alpha);
}

// Variant names, in the order of the switch below: threads per block x packs per thread,
// "st.cs" for streaming stores, "ld.na256" for L1-bypassing loads with 256-byte L2 fetches,
// "ld.cs" for evict-first loads, "bulk" for the tensor-memory-accelerator kernel ("ef": its
// store evicts first). Variant 0 is vecadd::add_cuda itself.
constexpr const char* kVariantNames[] = {
    "library",          "1024 st.cs",       "1024 st.cs na256", "1024 st.cs ld.cs",
    "128 st.cs na256",  "1024x2 st.cs",     "512x2 st.cs",      "256x4 st.cs",
    "1024x2 na256",     "bulk 256x2",       "bulk 256x4",       "bulk 256x4 ef",
    "bulk 128x8 ef",
};
constexpr int kVariantCount = sizeof(kVariantNames) / sizeof(kVariantNames[0]);

template <class T>
int launch_variant(int variant, const void* x_bytes, const void* y_bytes, void* z_bytes,
                   std::int64_t n, double alpha_value, cudaStream_t stream) {
  constexpr int W = 16 / sizeof(T);
  const auto* x = static_cast<const T*>(x_bytes);
  const auto* y = static_cast<const T*>(y_bytes);
  auto* z = static_cast<T*>(z_bytes);
  using Compute = typename vecadd::detail::ElementMath<T>::compute_type;
  const auto alpha = static_cast<Compute>(alpha_value);
  if (n > (std::int64_t{1} << 30)) {
    return -1;  // the shapes below index with int
  }
  switch (variant) {
    case 0:
      return static_cast<int>(
          vecadd::add_cuda<T>(x, y, z, n, vecadd::detail::ElementMath<T>::store(alpha), stream));
    case 1:
      launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming>(x, y, z, n, alpha, stream);
      break;
    case 2:
      launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming, LoadCaching::kNoAllocate256>(
          x, y, z, n, alpha, stream);
      break;
    case 3:
      launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming, LoadCaching::kEvictFirst>(
          x, y, z, n, alpha, stream);
      break;
    case 4:
      launch_contiguous<T, W, 128, 1, int, StoreCaching::kStreaming, LoadCaching::kNoAllocate256>(
          x, y, z, n, alpha, stream);
      break;
    case 5:
      launch_contiguous<T, W, 1024, 2, int, StoreCaching::kStreaming>(x, y, z, n, alpha, stream);
      break;
    case 6:
      launch_contiguous<T, W, 512, 2, int, StoreCaching::kStreaming>(x, y, z, n, alpha, stream);
      break;
    case 7:
      launch_contiguous<T, W, 256, 4, int, StoreCaching::kStreaming>(x, y, z, n, alpha, stream);
      break;
    case 8:
      launch_contiguous<T, W, 1024, 2, int, StoreCaching::kStreaming, LoadCaching::kNoAllocate256>(
          x, y, z, n, alpha, stream);
      break;
    case 9:
      launch_bulk<T, 256, 2, false>(x, y, z, n, alpha, stream);
      break;
    case 10:
      launch_bulk<T, 256, 4, false>(x, y, z, n, alpha, stream);
      break;
    case 11:
      launch_bulk<T, 256, 4, true>(x, y, z, n, alpha, stream);
      break;
    case 12:
      launch_bulk<T, 128, 8, true>(x, y, z, n, alpha, stream);
      break;
    default:
      return -1;
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
