#include "checks.h"

#include <ATen/MemoryOverlap.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "element_types.h"
#include "messages.h"

namespace vecadd::torch_binding {
namespace {

void check_defined(const at::Tensor& t, const char* name) {
  TORCH_CHECK_TYPE(t.defined(), kOp, ": argument '", name,
                   "' is an undefined tensor; expected a tensor");
}

void check_supported(const at::Tensor& t, const char* name) {
  TORCH_CHECK_TYPE(is_supported_dtype(t.scalar_type()), kOp, ": argument '", name, "' has dtype ",
                   dtype_name(t.scalar_type()), ", which vecadd does not support; expected ",
                   supported_dtypes_text());
}

// Whether the byte ranges [first, last) spanned by two tensors' elements intersect.
bool memory_ranges_intersect(const at::Tensor& a, const at::Tensor& b) {
  if (!a.has_storage() || !b.has_storage() || !a.storage().is_alias_of(b.storage())) {
    return false;
  }
  auto span = [](const at::Tensor& t) {
    std::int64_t reach = 0;
    for (std::int64_t d = 0; d < t.dim(); ++d) {
      reach += (t.size(d) - 1) * t.stride(d);
    }
    const auto* first = static_cast<const char*>(t.data_ptr());
    return std::pair{first, first + (reach + 1) * t.element_size()};
  };
  const auto [a_first, a_last] = span(a);
  const auto [b_first, b_last] = span(b);
  return a_first < b_last && b_first < a_last;
}

void check_out_memory(const at::Tensor& out, const at::Tensor& input, const char* name) {
  if (out.numel() == 0 || input.numel() == 0) {
    return;
  }
  const at::MemOverlapStatus status = at::get_overlap_status(out, input);
  if (status == at::MemOverlapStatus::Full || status == at::MemOverlapStatus::No) {
    return;  // the very same view (in-place) is safe: each element is read before written
  }
  TORCH_CHECK(status != at::MemOverlapStatus::Partial && !memory_ranges_intersect(out, input), kOp,
              ": out partly overlaps the memory of '", name,
              "'; expected out to be either that very tensor (in-place) or separate memory "
              "(clone one of them first)");
}

// alpha must fit the type the kernels compute in: float for float16, bfloat16 and float32
// (infinities and NaN are values of it), the element type itself for integers.
void check_alpha_range(const c10::Scalar& alpha, at::ScalarType dtype) {
  if (alpha.isBoolean()) {
    return;
  }
  if (dtype == at::kHalf || dtype == at::kBFloat16 || dtype == at::kFloat) {
    const double value = alpha.toDouble();
    const double largest = std::numeric_limits<float>::max();
    TORCH_CHECK_VALUE(!std::isfinite(value) || std::abs(value) <= largest, kOp,
                      ": argument 'alpha' is ", scalar_text(alpha), ", which ", dtype_name(dtype),
                      " tensors cannot use: they compute in float32, so expected a magnitude of "
                      "at most ",
                      scalar_text(c10::Scalar(largest)), " (or inf or nan)");
    return;
  }
  if (dtype != at::kInt && dtype != at::kLong) {
    return;
  }
  const bool narrow = dtype == at::kInt;
  const std::int64_t lowest =
      narrow ? std::numeric_limits<std::int32_t>::min() : std::numeric_limits<std::int64_t>::min();
  const std::int64_t highest =
      narrow ? std::numeric_limits<std::int32_t>::max() : std::numeric_limits<std::int64_t>::max();
  bool fits = true;
  if (alpha.isFloatingPoint()) {
    // Doubles at or beyond +-2^63 (exactly representable bounds) do not fit any int64.
    const double value = alpha.toDouble();
    fits = value >= static_cast<double>(lowest) && value < -static_cast<double>(lowest) &&
           (!narrow || value <= static_cast<double>(highest));
  } else {
    const std::int64_t value = alpha.toLong();
    fits = value >= lowest && value <= highest;
  }
  TORCH_CHECK_VALUE(fits, kOp, ": argument 'alpha' is ", scalar_text(alpha),
                    " but x and y have dtype ", dtype_name(dtype), "; expected an integer from ",
                    std::to_string(lowest), " to ", std::to_string(highest));
}

}  // namespace

void check_inputs(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha) {
  check_defined(x, "x");
  check_defined(y, "y");
  check_supported(x, "x");
  check_supported(y, "y");
  TORCH_CHECK_TYPE(x.scalar_type() == y.scalar_type(), kOp, ": x has dtype ",
                   dtype_name(x.scalar_type()), " but y has dtype ", dtype_name(y.scalar_type()),
                   "; expected the same dtype (vecadd does not promote types: convert one, "
                   "e.g. y.to(x.dtype))");
  TORCH_CHECK(x.device() == y.device(), kOp, ": x is on ", x.device().str(), " but y is on ",
              y.device().str(),
              "; expected both on the same device (move one, e.g. y.to(x.device))");
  TORCH_CHECK_TYPE(!alpha.isComplex(), kOp,
                   ": argument 'alpha' is a complex number; expected a real number");
  if (at::isIntegralType(x.scalar_type(), /*includeBool=*/false) && alpha.isFloatingPoint()) {
    const double value = alpha.toDouble();
    TORCH_CHECK_TYPE(std::isfinite(value) && value == std::trunc(value), kOp,
                     ": argument 'alpha' is ", scalar_text(alpha), " but x and y have dtype ",
                     dtype_name(x.scalar_type()),
                     "; expected an integral alpha for integer tensors");
  }
  check_alpha_range(alpha, x.scalar_type());
}

void check_out_tensor(const at::Tensor& out, const at::Tensor& x) {
  check_defined(out, "out");
  TORCH_CHECK_TYPE(out.scalar_type() == x.scalar_type(), kOp, ": out has dtype ",
                   dtype_name(out.scalar_type()), "; expected ", dtype_name(x.scalar_type()),
                   ", the dtype of x and y");
  TORCH_CHECK(out.device() == x.device(), kOp, ": out is on ", out.device().str(), "; expected ",
              x.device().str(), ", the device of x and y");
}

void check_out_aliasing(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y) {
  TORCH_CHECK(at::has_internal_overlap(out) != at::MemOverlap::Yes, kOp,
              ": out has elements that share memory (e.g. an expanded tensor); expected every "
              "element of out to have its own memory");
  check_out_memory(out, x, "x");
  check_out_memory(out, y, "y");
}

}  // namespace vecadd::torch_binding
