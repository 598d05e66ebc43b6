#include "messages.h"

#include <cstdio>

namespace vecadd::torch_binding {

std::string dtype_name(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf:
      return "torch.float16";
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kFloat:
      return "torch.float32";
    case at::kDouble:
      return "torch.float64";
    case at::kInt:
      return "torch.int32";
    case at::kLong:
      return "torch.int64";
    case at::kBool:
      return "torch.bool";
    case at::kByte:
      return "torch.uint8";
    case at::kChar:
      return "torch.int8";
    case at::kShort:
      return "torch.int16";
    case at::kComplexFloat:
      return "torch.complex64";
    case at::kComplexDouble:
      return "torch.complex128";
    default:
      return std::string("torch.") + c10::toString(dtype);
  }
}

// Numbers are formatted without iostreams: some toolchains (seen with a GCC 13 build under
// torch 2.11) crash inserting integers into a stream from an extension.
std::string scalar_text(const c10::Scalar& value) {
  if (value.isFloatingPoint()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value.toDouble());
    return text;
  }
  if (value.isBoolean()) {
    return value.toBool() ? "True" : "False";
  }
  if (value.isIntegral(/*includeBool=*/false)) {
    return std::to_string(value.toLong());
  }
  return "a complex number";
}

}  // namespace vecadd::torch_binding
