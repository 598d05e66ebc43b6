#include "element_types.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <vector>

#include "messages.h"

namespace vecadd::torch_binding {

bool is_supported_dtype(at::ScalarType dtype) {
#define VECADD_SUPPORTED_CASE(T)   \
  if (dtype == kScalarTypeOf<T>) { \
    return true;                   \
  }
  VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_SUPPORTED_CASE)
#undef VECADD_SUPPORTED_CASE
  return false;
}

const std::string& supported_dtypes_text() {
  static const std::string text = [] {
    std::vector<std::string> names;
#define VECADD_NAME_CASE(T) names.push_back(dtype_name(kScalarTypeOf<T>));
    VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_NAME_CASE)
#undef VECADD_NAME_CASE
    std::string joined;
    for (std::size_t i = 0; i < names.size(); ++i) {
      joined += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    return joined;
  }();
  return text;
}

void fail_unsupported_dtype(at::ScalarType dtype) {
  TORCH_CHECK_TYPE(false, kOp, ": dtype ", dtype_name(dtype), " is not supported; expected ",
                   supported_dtypes_text());
  std::abort();  // not reached: TORCH_CHECK_TYPE(false, ...) throws
}

}  // namespace vecadd::torch_binding
