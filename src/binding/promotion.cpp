#include "promotion.h"

#include <optional>

namespace vecadd::binding {
namespace {

// The width of an integer dtype in bits; unsigned ones are only uint8.
int integer_bits(DType dtype) {
  switch (dtype) {
    case DType::kUInt8:
    case DType::kInt8:
      return 8;
    case DType::kInt16:
      return 16;
    case DType::kInt32:
      return 32;
    default:
      return 64;
  }
}

// The real dtype of a complex one's parts.
DType part_of(DType complex) {
  switch (complex) {
    case DType::kComplex32:
      return DType::kFloat16;
    case DType::kComplex64:
      return DType::kFloat32;
    default:
      return DType::kFloat64;
  }
}

// The complex dtype with parts of a floating one; bfloat16 has none (torch names one but does
// not compute in it), nor does anything else.
std::optional<DType> complex_of(DType floating) {
  switch (floating) {
    case DType::kFloat16:
      return DType::kComplex32;
    case DType::kFloat32:
      return DType::kComplex64;
    case DType::kFloat64:
      return DType::kComplex128;
    default:
      return std::nullopt;
  }
}

int float_bytes(DType floating) {
  return static_cast<int>(dtype_size(floating));
}

DType promote_integers(DType a, DType b) {
  if (a == DType::kUInt8 && b == DType::kInt8) {
    return DType::kInt16;  // no 8-bit type holds both
  }
  if (b == DType::kUInt8 && a == DType::kInt8) {
    return DType::kInt16;
  }
  return integer_bits(a) >= integer_bits(b) ? a : b;
}

DType promote_floats(DType a, DType b) {
  if ((a == DType::kFloat16 && b == DType::kBFloat16) ||
      (a == DType::kBFloat16 && b == DType::kFloat16)) {
    return DType::kFloat32;  // neither holds the other's range and precision
  }
  return float_bytes(a) >= float_bytes(b) ? a : b;
}

std::optional<DType> promote_defined(std::optional<DType> a, std::optional<DType> b) {
  if (!a) {
    return b;
  }
  if (!b) {
    return a;
  }
  return promote_types(*a, *b);
}

// Where operands of one priority (with dimensions, before 0-dim ones) meet those of the next,
// the higher keeps its dtype unless the lower is of a higher category; nothing where that asks
// for a complex bfloat16.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (higher && is_complex(*higher)) {
    return higher;
  }
  if (lower && is_complex(*lower)) {
    return higher && is_floating(*higher) ? complex_of(*higher) : lower;
  }
  if (higher && is_floating(*higher)) {
    return higher;
  }
  if ((higher && *higher == DType::kBool) || (lower && is_floating(*lower))) {
    return promote_defined(higher, lower);
  }
  return higher ? higher : lower;
}

}  // namespace

bool is_complex(DType dtype) {
  return dtype == DType::kComplex32 || dtype == DType::kComplex64 || dtype == DType::kComplex128;
}

bool is_floating(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

bool is_integral(DType dtype) {
  return !is_complex(dtype) && !is_floating(dtype);
}

DType promote_types(DType a, DType b) {
  if (a == b || b == DType::kBool) {
    return a;
  }
  if (a == DType::kBool) {
    return b;
  }
  if (is_complex(a) || is_complex(b)) {
    const DType part_a = is_complex(a) ? part_of(a) : a;
    const DType part_b = is_complex(b) ? part_of(b) : b;
    if (is_integral(part_a)) {
      return b;  // a is an integer and b complex
    }
    if (is_integral(part_b)) {
      return a;
    }
    // Two floating dtypes promote to float16, float32 or float64: bfloat16 meets complex32 as
    // float32.
    return *complex_of(promote_floats(part_a, part_b));
  }
  if (is_floating(a) && is_floating(b)) {
    return promote_floats(a, b);
  }
  if (is_floating(a) || is_floating(b)) {
    return is_floating(a) ? a : b;
  }
  return promote_integers(a, b);
}

std::optional<Promoted> result_of(const Promoted& a, const Promoted& b) {
  std::optional<DType> with_dims;
  std::optional<DType> zero_dim;
  for (const Promoted* operand : {&a, &b}) {
    std::optional<DType>& slot = operand->has_dims ? with_dims : zero_dim;
    slot = promote_defined(slot, operand->dtype);
  }
  const std::optional<DType> dtype = combine_categories(with_dims, zero_dim);
  if (!dtype) {
    return std::nullopt;
  }
  return Promoted{*dtype, a.has_dims || b.has_dims};
}

bool can_cast(DType from, DType to) {
  if (is_complex(from) && !is_complex(to)) {
    return false;
  }
  if (is_floating(from) && is_integral(to) && to != DType::kBool) {
    return false;
  }
  return from == DType::kBool || to != DType::kBool;
}

DType compute_dtype(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return DType::kFloat32;
    case DType::kComplex32:
      return DType::kComplex64;
    default:
      return dtype;
  }
}

}  // namespace vecadd::binding
