// Evidence for: docs/kernel-notes.md, "Versions, predictions, outcomes" (the candidates each kernel
// version was chosen over).
// Candidate contiguous kernels next to vecadd's own, built as a small shared library so that
// lab/kernel_variants.py can time each of them next to torch.add on the same buffers. The
// library is reached through its public headers and its CUDA library only; every other variant
// is written here (no torch in here):
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -DVECADD_WITH_CUDA=1 \
//        $(python3 -m vecadd --includes) lab/kernel_variants.cu -L<lib>/cudaN -L<lib> \
//        -lvecadd_cuda -lvecadd -Xlinker -rpath,<lib>/cudaN -Xlinker -rpath,<lib> -o
//        kernel_variants.so
// where <lib> is the installed package's lib folder (lab/gpu_session.sh variants does this).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vecadd/cuda.h>

#if !VECADD_WITH_CUDA
#error "kernel_variants needs a vecadd built with CUDA (VECADD_WITH_CUDA == 1)"
#endif
#if CUDART_VERSION < 12030
#error "kernel_variants needs CUDA 12.3 or newer, which records overlapping launches in graphs"
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "kernel_variants needs sm_90 or newer: overlapping launches are safe only with their wait"
#endif

namespace {

// ---- Element arithmetic: x + alpha * y in the compute type the library documents ----

// 16-bit floats compute in float, integers in the unsigned type of their width (wrapping).
template <class T>
struct Compute {
  using type = T;
};
template <>
struct Compute<vecadd::float16> {
  using type = float;
};
template <>
struct Compute<vecadd::bfloat16> {
  using type = float;
};
template <>
struct Compute<std::int32_t> {
  using type = std::uint32_t;
};
template <>
struct Compute<std::int64_t> {
  using type = std::uint64_t;
};
template <class T>
using compute_t = typename Compute<T>::type;

// The library's 16-bit types are storage only: convert by their bits.
template <class T>
__host__ __device__ __forceinline__ compute_t<T> widen(T value) {
  if constexpr (std::is_same_v<T, vecadd::float16>) {
    return __half2float(__ushort_as_half(value.bits));
  } else if constexpr (std::is_same_v<T, vecadd::bfloat16>) {
    return __bfloat162float(__ushort_as_bfloat16(value.bits));
  } else {
    return static_cast<compute_t<T>>(value);
  }
}

template <class T>
__host__ __device__ __forceinline__ T narrow(compute_t<T> value) {
  if constexpr (std::is_same_v<T, vecadd::float16>) {
    return T{__half_as_ushort(__float2half_rn(value))};
  } else if constexpr (std::is_same_v<T, vecadd::bfloat16>) {
    return T{__bfloat16_as_ushort(__float2bfloat16_rn(value))};
  } else {
    return static_cast<T>(value);
  }
}

template <class T>
__device__ __forceinline__ T add_scaled(T x, T y, compute_t<T> alpha) {
  return narrow<T>(widen(x) + alpha * widen(y));
}

// ---- What a variant may change: launch shape, cache hints, carve-out, launch order ----

enum class Load { kPlain, kNonCoherent, kNoL1Allocate, kL2Prefetch128 };
enum class Store { kPlain, kStreaming };

// Serial, or launched early, letting the next kernel launch at block start, after stores or exit;
// kNoWait is serial without the grid-dependency wait, as a kernel written without overlap is.
enum class Order : unsigned char { kSerial, kNextAtStart, kNextAfterStores, kNextAtExit, kNoWait };

// kCarveout -1 keeps the default; kCopy makes a second instantiation, to measure the noise floor;
// kIdleThreads more threads per block, which exit at once, cap the blocks an SM holds.
template <int kThreads_, bool kVector_, int kPacks_, Load kLoad_ = Load::kPlain,
          Store kStore_ = Store::kPlain, int kCarveout_ = -1, int kCopy_ = 0, int kIdleThreads_ = 0>
struct Shape {
  static constexpr int kThreads = kThreads_;
  static constexpr bool kVector = kVector_;
  static constexpr int kPacks = kPacks_;
  static constexpr Load kLoad = kLoad_;
  static constexpr Store kStore = kStore_;
  static constexpr int kCarveout = kCarveout_;
  static constexpr int kIdleThreads = kIdleThreads_;
};

template <class T, int kWidth>
struct alignas(sizeof(T) * kWidth) Pack {
  T values[kWidth];
};

template <class T, int kWidth>
__device__ __forceinline__ Pack<T, kWidth> add_packs(const Pack<T, kWidth>& x,
                                                     const Pack<T, kWidth>& y, compute_t<T> alpha) {
  Pack<T, kWidth> z;
#pragma unroll
  for (int k = 0; k < kWidth; ++k) {
    z.values[k] = add_scaled(x.values[k], y.values[k], alpha);
  }
  return z;
}

#define VECADD_LAB_LOAD_V4(kInstruction)                       \
  asm(kInstruction " {%0, %1, %2, %3}, [%4];"                  \
      : "=r"(bits.x), "=r"(bits.y), "=r"(bits.z), "=r"(bits.w) \
      : "l"(source))

template <Load kLoad, class PackT>
__device__ __forceinline__ PackT load_pack(const PackT* source) {
  if constexpr (kLoad == Load::kPlain) {
    return *source;
  } else {
    static_assert(sizeof(PackT) == sizeof(int4), "cache-hinted loads move 16-byte packs");
    int4 bits;
    if constexpr (kLoad == Load::kNonCoherent) {
      VECADD_LAB_LOAD_V4("ld.global.nc.v4.s32");
    } else if constexpr (kLoad == Load::kNoL1Allocate) {
      VECADD_LAB_LOAD_V4("ld.global.nc.L1::no_allocate.v4.s32");
    } else {
      VECADD_LAB_LOAD_V4("ld.global.L2::128B.v4.s32");
    }
    PackT value;
    __builtin_memcpy(&value, &bits, sizeof bits);
    return value;
  }
}
#undef VECADD_LAB_LOAD_V4

template <Store kStore, class PackT>
__device__ __forceinline__ void store_pack(PackT* target, const PackT& value) {
  if constexpr (kStore == Store::kStreaming) {
    static_assert(sizeof(PackT) == sizeof(int4), "streaming stores move 16-byte packs");
    int4 bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    __stcs(reinterpret_cast<int4*>(target), bits);  // st.global.cs: evicted first
  } else {
    *target = value;
  }
}

__device__ __forceinline__ void allow_next_kernel_to_launch() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

__device__ __forceinline__ void release_after_stores(Order order) {
  if (order == Order::kNextAfterStores) {
    allow_next_kernel_to_launch();
  }
}

// ---- The one kernel every variant instantiates ----

// One tile per block, all loads before any store; only the last, partial tile goes element-wise.
template <class T, class S>
__global__ void __launch_bounds__(S::kThreads + S::kIdleThreads)
    variant_kernel(const T* x, const T* y, T* z, int n, compute_t<T> alpha, Order order) {
  constexpr int kWidth = S::kVector ? 16 / sizeof(T) : 1;
  constexpr int kTile = S::kThreads * S::kPacks * kWidth;
  using PackT = Pack<T, kWidth>;
  if (S::kIdleThreads > 0 && threadIdx.x >= S::kThreads) {
    return;
  }
  if (order != Order::kNoWait) {
    asm volatile("griddepcontrol.wait;" ::: "memory");  // the previous kernel's writes first
  }
  if (order == Order::kNextAtStart) {
    allow_next_kernel_to_launch();
  }
  const int first = static_cast<int>(blockIdx.x) * kTile;
  const int remaining = n - first;
  if (remaining >= kTile) {
    const int first_pack = first / kWidth + static_cast<int>(threadIdx.x);
    const auto* x_packs = reinterpret_cast<const PackT*>(x) + first_pack;
    const auto* y_packs = reinterpret_cast<const PackT*>(y) + first_pack;
    auto* z_packs = reinterpret_cast<PackT*>(z) + first_pack;
    PackT x_in[S::kPacks];
    PackT y_in[S::kPacks];
#pragma unroll
    for (int u = 0; u < S::kPacks; ++u) {
      x_in[u] = load_pack<S::kLoad>(x_packs + u * S::kThreads);
      y_in[u] = load_pack<S::kLoad>(y_packs + u * S::kThreads);
    }
#pragma unroll
    for (int u = 0; u < S::kPacks; ++u) {
      store_pack<S::kStore>(z_packs + u * S::kThreads, add_packs(x_in[u], y_in[u], alpha));
    }
    release_after_stores(order);
    return;
  }
  for (int i = static_cast<int>(threadIdx.x); i < remaining; i += S::kThreads) {
    z[first + i] = add_scaled(x[first + i], y[first + i], alpha);
  }
  release_after_stores(order);
}

// Largest n the variants take: their int indices must not overflow a rounded-up tile.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 30;

template <class T>
using Launcher = cudaError_t (*)(const T*, const T*, T*, std::int64_t, T, cudaStream_t);

template <class T, class S, Order kOrder>
cudaError_t launch(const T* x, const T* y, T* z, std::int64_t n, T alpha, cudaStream_t stream) {
  constexpr auto kKernel = &variant_kernel<T, S>;
  if constexpr (S::kCarveout >= 0) {
    // Once per instantiation: the preference stays with the kernel.
    static const cudaError_t carveout =
        cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout, S::kCarveout);
    if (carveout != cudaSuccess) {
      return carveout;
    }
  }
  constexpr std::int64_t kTile =
      std::int64_t{S::kThreads} * S::kPacks * (S::kVector ? 16 / static_cast<int>(sizeof(T)) : 1);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(std::max<std::int64_t>(1, (n + kTile - 1) / kTile)));
  config.blockDim = dim3(S::kThreads + S::kIdleThreads);
  config.stream = stream;
  cudaLaunchAttribute overlap[1] = {};
  if (kOrder != Order::kSerial && kOrder != Order::kNoWait) {
    overlap[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = overlap;
    config.numAttrs = 1;
  }
  // The alpha the library would see: rounded to T, then widened to the compute type.
  return cudaLaunchKernelEx(&config, kKernel, x, y, z, static_cast<int>(n), widen(alpha), kOrder);
}

template <class T>
cudaError_t launch_library(const T* x, const T* y, T* z, std::int64_t n, T alpha,
                           cudaStream_t stream) {
  if constexpr (std::is_integral_v<T>) {
    return vecadd::add_cuda<T>(x, y, z, n, alpha, stream);
  } else {
    return vecadd::add_cuda<T>(x, y, z, n, widen(alpha), stream);
  }
}

// The launch-order sweep's shapes; Unaligned (four single elements) is the library's fallback.
using Small = Shape<128, true, 1>;
using Large = Shape<1024, true, 1, Load::kPlain, Store::kStreaming>;
using LargePlainStores = Shape<1024, true, 1>;
using SmallTwoPacks = Shape<128, true, 2>;
using SmallFourPacks = Shape<128, true, 4>;
// Blocks of five warps, one idle: 12 per SM (64 warps), as torch.add's 16-bit kernel holds with its
// 34 registers, where the plain shape fits 16.
using SmallTwelvePerSm = Shape<128, true, 1, Load::kPlain, Store::kPlain, -1, 0, 32>;
using Medium = Shape<256, true, 1>;
using Unaligned = Shape<128, false, 4>;
template <Load kLoad, int kCarveout = -1, int kCopy = 0>
using LargeWith = Shape<1024, true, 1, kLoad, Store::kStreaming, kCarveout, kCopy>;

template <class T>
struct Variant {
  const char* name;
  Launcher<T> launch;
};

// Names the recorded data use: "plain" no overlap, "start"/"end"/"exit" when the next may launch,
// "nowait" no overlap and no wait; "1024d" the 1024-thread shape with default (not streaming)
// stores.
template <class T>
constexpr Variant<T> kVariants[] = {
    {"library", launch_library<T>},
    // the same launch as "1024 plain", kept under the name the earlier data use
    {"1024 st.cs", launch<T, Large, Order::kSerial>},
    {"1024 copy", launch<T, LargeWith<Load::kPlain, -1, 1>, Order::kSerial>},
    {"1024 maxL1", launch<T, LargeWith<Load::kPlain, 0>, Order::kSerial>},
    {"1024 maxSmem", launch<T, LargeWith<Load::kPlain, 100>, Order::kSerial>},
    {"1024 ld.nc", launch<T, LargeWith<Load::kNonCoherent>, Order::kSerial>},
    {"1024 ld.nc.noL1", launch<T, LargeWith<Load::kNoL1Allocate>, Order::kSerial>},
    {"1024 L2::128B", launch<T, LargeWith<Load::kL2Prefetch128>, Order::kSerial>},
    {"128 plain", launch<T, Small, Order::kSerial>},
    {"128 nowait", launch<T, Small, Order::kNoWait>},
    {"128 start", launch<T, Small, Order::kNextAtStart>},
    {"128 end", launch<T, Small, Order::kNextAfterStores>},
    {"128 exit", launch<T, Small, Order::kNextAtExit>},
    {"1024 plain", launch<T, Large, Order::kSerial>},
    {"1024 start", launch<T, Large, Order::kNextAtStart>},
    {"1024 end", launch<T, Large, Order::kNextAfterStores>},
    {"1024 exit", launch<T, Large, Order::kNextAtExit>},
    {"1024d plain", launch<T, LargePlainStores, Order::kSerial>},
    {"1024d end", launch<T, LargePlainStores, Order::kNextAfterStores>},
    {"128x2 plain", launch<T, SmallTwoPacks, Order::kSerial>},
    {"128x2 start", launch<T, SmallTwoPacks, Order::kNextAtStart>},
    {"128x2 exit", launch<T, SmallTwoPacks, Order::kNextAtExit>},
    {"128x4 plain", launch<T, SmallFourPacks, Order::kSerial>},
    {"128x4 start", launch<T, SmallFourPacks, Order::kNextAtStart>},
    {"128x4 exit", launch<T, SmallFourPacks, Order::kNextAtExit>},
    {"128 occ12 exit", launch<T, SmallTwelvePerSm, Order::kNextAtExit>},
    {"256 exit", launch<T, Medium, Order::kNextAtExit>},
    {"u4 plain", launch<T, Unaligned, Order::kSerial>},
    {"u4 start", launch<T, Unaligned, Order::kNextAtStart>},
    {"u4 end", launch<T, Unaligned, Order::kNextAfterStores>},
    {"u4 exit", launch<T, Unaligned, Order::kNextAtExit>},
};
constexpr int kVariantCount = static_cast<int>(std::size(kVariants<float>));

// The torch spelling of each element type ("float16", "int32"), derived from the type.
template <class T>
constexpr const char* element_name() {
  if constexpr (std::is_same_v<T, vecadd::float16>) {
    return "float16";
  } else if constexpr (std::is_same_v<T, vecadd::bfloat16>) {
    return "bfloat16";
  } else if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == 4 ? "float32" : "float64";
  } else {
    static_assert(std::is_signed_v<T> && (sizeof(T) == 4 || sizeof(T) == 8),
                  "vecadd's integer element types are int32 and int64");
    return sizeof(T) == 4 ? "int32" : "int64";
  }
}

// A double alpha in T, as a caller of vecadd::add_cuda<T> would pass it.
template <class T>
T element_from(double value) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(value);
  } else {
    return narrow<T>(static_cast<compute_t<T>>(value));
  }
}

}  // namespace

extern "C" {

int vecadd_variant_count() {
  return kVariantCount;
}

const char* vecadd_variant_name(int variant) {
  return variant >= 0 && variant < kVariantCount ? kVariants<float>[variant].name : nullptr;
}

// Element types are numbered in the order of VECADD_FOR_EACH_ELEMENT_TYPE.
const char* vecadd_variant_dtype_name(int dtype) {
  int code = 0;
#define VECADD_LAB_NAME(T)    \
  if (dtype == code++) {      \
    return element_name<T>(); \
  }
  VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_LAB_NAME)
#undef VECADD_LAB_NAME
  return nullptr;
}

// Returns the CUDA launch status, or -1 for an unknown variant or dtype or n above 2^30.
int vecadd_variant_launch(int variant, int dtype, const void* x, const void* y, void* z,
                          std::int64_t n, double alpha, void* stream) {
  if (variant < 0 || variant >= kVariantCount || n < 0 || n > kMaxElements) {
    return -1;
  }
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  int code = 0;
#define VECADD_LAB_LAUNCH(T)                                                                       \
  if (dtype == code++) {                                                                           \
    return static_cast<int>(                                                                       \
        kVariants<T>[variant].launch(static_cast<const T*>(x), static_cast<const T*>(y),           \
                                     static_cast<T*>(z), n, element_from<T>(alpha), cuda_stream)); \
  }
  VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_LAB_LAUNCH)
#undef VECADD_LAB_LAUNCH
  return -1;
}

}  // extern "C"
