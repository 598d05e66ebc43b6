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

using vecadd::detail::add_contiguous_kernel;
using vecadd::detail::launch_contiguous;
using vecadd::detail::Overlap;
using vecadd::detail::StoreCaching;

// A 16-byte load through inline PTX; kInstruction names the cache hints.
#define VECADD_HINTED_LOAD(Name, kInstruction)                                         \
  struct Name {                                                                        \
    template <class PackT>                                                             \
    __device__ __forceinline__ static PackT load(const PackT* source) {                \
      static_assert(sizeof(PackT) == sizeof(int4), "hinted loads move 16-byte packs"); \
      int4 bits;                                                                       \
      asm(kInstruction " {%0, %1, %2, %3}, [%4];"                                      \
          : "=r"(bits.x), "=r"(bits.y), "=r"(bits.z), "=r"(bits.w)                     \
          : "l"(source));                                                              \
      PackT value;                                                                     \
      __builtin_memcpy(&value, &bits, sizeof bits);                                    \
      return value;                                                                    \
    }                                                                                  \
  };
VECADD_HINTED_LOAD(NonCoherentLoad, "ld.global.nc.v4.s32")
VECADD_HINTED_LOAD(NoL1AllocateLoad, "ld.global.nc.L1::no_allocate.v4.s32")
VECADD_HINTED_LOAD(L2Fetch128Load, "ld.global.L2::128B.v4.s32")
#undef VECADD_HINTED_LOAD

// Plain loads again, as distinct kernel instantiations whose shared-memory carve-out is set
// on their own: the first is the control, the second prefers the largest L1 (carve-out 0),
// the third the largest shared memory (100).
template <int kCarveout>
struct PlainLoadCopy : vecadd::detail::PlainLoad {};

template <class T, int kCarveout>
cudaError_t launch_with_carveout(const T* x, const T* y, T* z, std::int64_t n,
                                 typename vecadd::detail::ElementMath<T>::compute_type alpha,
                                 cudaStream_t stream) {
  constexpr int W = 16 / sizeof(T);
  using Load = PlainLoadCopy<kCarveout>;
  if constexpr (kCarveout >= 0) {
    static const cudaError_t set = cudaFuncSetAttribute(
        reinterpret_cast<const void*>(
            &add_contiguous_kernel<T, W, 1024, 1, int, StoreCaching::kStreaming, Load>),
        cudaFuncAttributePreferredSharedMemoryCarveout, kCarveout);
    (void)set;
  }
  return launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming, Load>(
      x, y, z, n, alpha, stream, Overlap::kSerial);
}

// Three launch shapes (128 threads x one 16-byte pack, 1024 threads x one pack with
// streaming stores, 128 threads x four single elements) under four launch orders: no
// overlap with the previous kernel ("plain"), or overlap, with the next kernel allowed to
// launch at the start of each block, after its stores, or only when it exits.
constexpr int kShapeCount = 3;
constexpr int kOrderCount = 4;

template <class T>
cudaError_t launch_shape(int shape, const T* x, const T* y, T* z, std::int64_t n,
                         typename vecadd::detail::ElementMath<T>::compute_type alpha,
                         cudaStream_t stream, Overlap overlap) {
  constexpr int W = 16 / sizeof(T);
  switch (shape) {
    case 0:
      return launch_contiguous<T, W, 128, 1, int>(x, y, z, n, alpha, stream, overlap);
    case 1:
      return launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming>(x, y, z, n, alpha,
                                                                             stream, overlap);
    default:
      return launch_contiguous<T, 1, 128, 4, int>(x, y, z, n, alpha, stream, overlap);
  }
}

template <class T>
cudaError_t launch_ordered(int shape_and_order, const T* x, const T* y, T* z, std::int64_t n,
                           typename vecadd::detail::ElementMath<T>::compute_type alpha,
                           cudaStream_t stream) {
  constexpr Overlap kOrders[kOrderCount] = {Overlap::kSerial, Overlap::kNextAtStart,
                                            Overlap::kNextAfterStores, Overlap::kNextAtExit};
  return launch_shape(shape_and_order / kOrderCount, x, y, z, n, alpha, stream,
                      kOrders[shape_and_order % kOrderCount]);
}

// Variant names, in the order of the switch below: threads per block, "st.cs" for streaming
// stores, then the load or carve-out used, all launched without overlap; then the shapes
// and orders of launch_ordered. Variant 0 is vecadd::add_cuda itself.
// clang-format off
constexpr const char* kVariantNames[] = {
    "library", "1024 st.cs", "1024 copy", "1024 maxL1", "1024 maxSmem", "1024 ld.nc",
    "1024 ld.nc.noL1", "1024 L2::128B",
    "128 plain", "128 start", "128 end", "128 exit",
    "1024 plain", "1024 start", "1024 end", "1024 exit",
    "u4 plain", "u4 start", "u4 end", "u4 exit",
};
// clang-format on
constexpr int kFirstOrdered = 8;
constexpr int kVariantCount = sizeof(kVariantNames) / sizeof(kVariantNames[0]);
static_assert(kVariantCount == kFirstOrdered + kShapeCount * kOrderCount);

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
    case 1:  // the same launch as "1024 plain", kept under the name the earlier data use
      return static_cast<int>(launch_shape(1, x, y, z, n, alpha, stream, Overlap::kSerial));
    case 2:
      return static_cast<int>(launch_with_carveout<T, -1>(x, y, z, n, alpha, stream));
    case 3:
      return static_cast<int>(launch_with_carveout<T, 0>(x, y, z, n, alpha, stream));
    case 4:
      return static_cast<int>(launch_with_carveout<T, 100>(x, y, z, n, alpha, stream));
    case 5:
      return static_cast<int>(
          launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming, NonCoherentLoad>(
              x, y, z, n, alpha, stream, Overlap::kSerial));
    case 6:
      return static_cast<int>(
          launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming, NoL1AllocateLoad>(
              x, y, z, n, alpha, stream, Overlap::kSerial));
    case 7:
      return static_cast<int>(
          launch_contiguous<T, W, 1024, 1, int, StoreCaching::kStreaming, L2Fetch128Load>(
              x, y, z, n, alpha, stream, Overlap::kSerial));
    default:
      if (variant < kFirstOrdered || variant >= kVariantCount) {
        return -1;
      }
      return static_cast<int>(launch_ordered(variant - kFirstOrdered, x, y, z, n, alpha, stream));
  }
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
