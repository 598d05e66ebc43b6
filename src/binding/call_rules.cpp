#include "call_rules.h"

#include <cstdio>
#include <utility>

namespace vecadd::binding {

std::string number_text(double value) {
  char text[32];
  if (std::isfinite(value) && value == std::trunc(value) && std::abs(value) < 1e16) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.17g", value);
  }
  return text;
}

std::string integer_text(__int128 value) {
  const bool negative = value < 0;
  // Digits of the magnitude, from the last; -(2^127) has no positive twin, so digit by digit.
  std::string digits;
  do {
    const int digit = static_cast<int>(value % 10);
    digits.insert(digits.begin(), static_cast<char>('0' + (negative ? -digit : digit)));
    value /= 10;
  } while (value != 0);
  return negative ? "-" + digits : digits;
}

const std::string& supported_dtypes_text() {
  static const std::string text = [] {
    std::string joined;
    for (int i = 0; i < kDTypeCount; ++i) {
      joined += (i == 0 ? "" : (i + 1 == kDTypeCount ? " or " : ", ")) +
                dtype_text(static_cast<DType>(i));
    }
    return joined;
  }();
  return text;
}

std::pair<std::int64_t, std::int64_t> integer_range(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
      return {-255, 255};  // as torch takes a weight for uint8: a negative one wraps around
    case DType::kInt8:
      return {-128, 127};
    case DType::kInt16:
      return {-32768, 32767};
    case DType::kInt32:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
    default:
      return {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()};
  }
}

bool byte_ranges_intersect(const void* a, const Operand& a_shape, std::size_t a_element_size,
                           const void* b, const Operand& b_shape, std::size_t b_element_size) {
  const auto span = [](const void* data, const Operand& shape, std::size_t element_size) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    for (int d = 0; d < shape.ndim; ++d) {
      const std::int64_t step = (shape.sizes[d] - 1) * shape.strides[d];
      (step < 0 ? low : high) += step;
    }
    const auto* base = static_cast<const char*>(data);
    const auto bytes = static_cast<std::int64_t>(element_size);
    return std::pair{base + low * bytes, base + (high + 1) * bytes};
  };
  const auto [a_first, a_last] = span(a, a_shape, a_element_size);
  const auto [b_first, b_last] = span(b, b_shape, b_element_size);
  return a_first < b_last && b_first < a_last;
}

bool has_repeated_elements(const Operand& shape) {
  for (int d = 0; d < shape.ndim; ++d) {
    if (shape.sizes[d] > 1 && shape.strides[d] == 0) {
      return true;
    }
  }
  return false;
}

#if VECADD_WITH_CUDA
Problem launch_problem(const char* call, cudaError_t status, int device_index,
                       const std::string& device) {
  const bool no_image = status == cudaErrorNoKernelImageForDevice ||
                        status == cudaErrorInvalidDeviceFunction ||
                        status == cudaErrorUnsupportedPtxVersion;
  if (!no_image) {
    return {ErrorKind::kRuntime, std::string(call) + ": launching the CUDA kernel on " + device +
                                     " failed: " + vecadd::cuda_error_text(status)};
  }
  const vecadd::CudaDevice gpu = vecadd::describe_cuda_device(device_index);
  const std::string capability =
      gpu.known ? std::to_string(gpu.major) + "." + std::to_string(gpu.minor) : "?";
  const std::string arch = gpu.known ? std::to_string(gpu.major * 10 + gpu.minor) : "<arch>";
  return {ErrorKind::kRuntime,
          std::string(call) + ": this build of vecadd holds no CUDA code that can run on " +
              device + " (" + (gpu.known ? gpu.name : "unknown GPU") + ", compute capability " +
              capability + "): it was compiled for CUDA architectures '" +
              vecadd::cuda_architectures() +
              "' (vecadd.build_info()['cuda_archs'] lists them) and the driver reports: " +
              vecadd::cuda_error_text(status) +
              ". Rebuild vecadd for this GPU from its source, e.g.\n  pip install "
              "--no-build-isolation --force-reinstall -C cmake.define.CMAKE_CUDA_ARCHITECTURES=" +
              arch + " ."};
}
#endif

}  // namespace vecadd::binding
