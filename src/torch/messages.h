// How the torch binding names things in its error messages.
#pragma once

#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace vecadd::torch_binding {

// Every message starts with the call it is about.
inline constexpr const char* kOp = "vecadd.add()";

// "torch.float16": a dtype as Python spells it.
std::string dtype_name(at::ScalarType dtype);

// alpha as the user wrote it: 2, 0.5, True.
std::string scalar_text(const c10::Scalar& value);

}  // namespace vecadd::torch_binding
