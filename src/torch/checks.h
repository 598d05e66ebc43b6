// The checks a call passes before any memory is touched; each failure names the argument,
// what it was given and what was expected.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace vecadd::torch_binding {

// x and y: defined, a supported dtype, the same dtype and device; alpha: real, and
// integral for integer tensors.
void check_inputs(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha);

// out: defined, with the dtype and device of x (its shape is checked by check_out_shape).
void check_out_tensor(const at::Tensor& out, const at::Tensor& x);

// out's memory: no element shared with another of out, and x and y either out itself or
// apart from it.
void check_out_aliasing(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y);

}  // namespace vecadd::torch_binding
