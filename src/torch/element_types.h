// The one dispatch from a torch dtype to the kernel library's element type, derived from the
// library's own list (VECADD_FOR_EACH_ELEMENT_TYPE): a dtype is supported iff it is there.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <string>

#include "vecadd/vecadd.h"

namespace vecadd::torch_binding {

// torch's C++ type with the same bits as a library element type.
template <class T>
struct TorchTypeOf {
  using type = T;
};
template <>
struct TorchTypeOf<vecadd::float16> {
  using type = at::Half;
};
template <>
struct TorchTypeOf<vecadd::bfloat16> {
  using type = at::BFloat16;
};

template <class T>
inline constexpr at::ScalarType kScalarTypeOf =
    c10::CppTypeToScalarType<typename TorchTypeOf<T>::type>::value;

template <class T>
struct ElementTag {
  using type = T;
};

bool is_supported_dtype(at::ScalarType dtype);

// "torch.float16, ..., torch.int32 or torch.int64", in the library's order.
const std::string& supported_dtypes_text();

[[noreturn]] void fail_unsupported_dtype(at::ScalarType dtype);

// Calls fn(ElementTag<T>{}) with T the kernel library's type for `dtype`.
template <class Fn>
decltype(auto) dispatch_element_type(at::ScalarType dtype, Fn&& fn) {
#define VECADD_DISPATCH_CASE(T)    \
  if (dtype == kScalarTypeOf<T>) { \
    return fn(ElementTag<T>{});    \
  }
  VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_DISPATCH_CASE)
#undef VECADD_DISPATCH_CASE
  fail_unsupported_dtype(dtype);
}

}  // namespace vecadd::torch_binding
