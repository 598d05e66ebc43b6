#include <complex>
#include <cstdint>
#include <cstring>

#include "element_math.h"
#include "vecadd/vecadd.h"

namespace vecadd {
namespace {

template <class T>
T element_of(const void* element) {
  T value;
  std::memcpy(&value, element, sizeof value);
  return value;
}

}  // namespace

Number number_at(const void* element, DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return Number::of_integer(element_of<std::uint8_t>(element) != 0);
    case DType::kUInt8:
      return Number::of_integer(element_of<std::uint8_t>(element));
    case DType::kInt8:
      return Number::of_integer(element_of<std::int8_t>(element));
    case DType::kInt16:
      return Number::of_integer(element_of<std::int16_t>(element));
    case DType::kInt32:
      return Number::of_integer(element_of<std::int32_t>(element));
    case DType::kInt64:
      return Number::of_integer(element_of<std::int64_t>(element));
    case DType::kFloat16:
      return Number::of_real(detail::half_bits_to_float(element_of<std::uint16_t>(element)));
    case DType::kBFloat16:
      return Number::of_real(detail::bfloat16_bits_to_float(element_of<std::uint16_t>(element)));
    case DType::kFloat32:
      return Number::of_real(element_of<float>(element));
    case DType::kFloat64:
      return Number::of_real(element_of<double>(element));
    case DType::kComplex32: {  // two float16 parts, the real one first
      const auto real_bits = element_of<std::uint16_t>(element);
      const auto imag_bits = element_of<std::uint16_t>(static_cast<const char*>(element) + 2);
      return Number::of_real(detail::half_bits_to_float(real_bits),
                             detail::half_bits_to_float(imag_bits));
    }
    case DType::kComplex64: {
      const auto value = element_of<std::complex<float>>(element);
      return Number::of_real(value.real(), value.imag());
    }
    case DType::kComplex128: {
      const auto value = element_of<std::complex<double>>(element);
      return Number::of_real(value.real(), value.imag());
    }
  }
  return {};
}

}  // namespace vecadd
