// Launch shapes and cache hints of vecadd's contiguous kernel, built as a small shared
// library so that tools/kernel_variants.py can time each of them next to torch.add on the
// same buffers (no torch in here):
//   nvcc -O3 -std=c++17 -arch=sm_90 -shared -Xcompiler -fPIC -I src/include -I src/kernels \
//        -I <build>/generated/include tools/kernel_variants.cu -o kernel_variants.so
#include <cstdint>

#include "contiguous_kernel.cuh"

namespace {

using vecadd::detail::CacheHint;
using vecadd::detail::launch_contiguous;

// Variant names, in the order of the switch below: threads x packs per thread, pack bytes,
// index width, cache hint. Variant 0 is what the library ships.
constexpr const char* kVariantNames[] = {
    "128x1 16B i32",  "128x1 16B i64", "128x1 16B st.cs", "128x1 16B cs", "64x1 16B i32",
    "64x1 16B st.cs", "256x1 16B i32", "128x2 16B i32",   "128x1 8B i32", "128x2 8B i32",
};
constexpr int kVariantCount = sizeof(kVariantNames) / sizeof(kVariantNames[0]);

template <class T>
int launch_variant(int variant, const void* x_bytes, const void* y_bytes, void* z_bytes,
                   std::int64_t n, double alpha_value, cudaStream_t stream) {
  constexpr int W16 = 16 / sizeof(T);
  constexpr int W8 = 8 / sizeof(T) > 0 ? 8 / sizeof(T) : 1;
  const auto* x = static_cast<const T*>(x_bytes);
  const auto* y = static_cast<const T*>(y_bytes);
  auto* z = static_cast<T*>(z_bytes);
  using Compute = typename vecadd::detail::ElementMath<T>::compute_type;
  const auto alpha = static_cast<Compute>(alpha_value);
  switch (variant) {
    case 0:
      launch_contiguous<T, W16, 128, 1, std::int32_t, false>(x, y, z, n, alpha, stream);
      break;
    case 1:
      launch_contiguous<T, W16, 128, 1, std::int64_t, false>(x, y, z, n, alpha, stream);
      break;
    case 2:
      launch_contiguous<T, W16, 128, 1, std::int32_t, false, CacheHint::kStreamingStore>(
          x, y, z, n, alpha, stream);
      break;
    case 3:
      launch_contiguous<T, W16, 128, 1, std::int32_t, false, CacheHint::kStreaming>(x, y, z, n,
                                                                                    alpha, stream);
      break;
    case 4:
      launch_contiguous<T, W16, 64, 1, std::int32_t, false>(x, y, z, n, alpha, stream);
      break;
    case 5:
      launch_contiguous<T, W16, 64, 1, std::int32_t, false, CacheHint::kStreamingStore>(
          x, y, z, n, alpha, stream);
      break;
    case 6:
      launch_contiguous<T, W16, 256, 1, std::int32_t, false>(x, y, z, n, alpha, stream);
      break;
    case 7:
      launch_contiguous<T, W16, 128, 2, std::int32_t, false>(x, y, z, n, alpha, stream);
      break;
    case 8:
      launch_contiguous<T, W8, 128, 1, std::int32_t, false>(x, y, z, n, alpha, stream);
      break;
    case 9:
      launch_contiguous<T, W8, 128, 2, std::int32_t, false>(x, y, z, n, alpha, stream);
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
