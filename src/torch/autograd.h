// The Autograd kernels of the vecadd operators.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace vecadd::torch_binding {

// Records the backward of z = x + alpha * y when x or y requires grad, around the op below.
at::Tensor add_autograd(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha);

// out= is not differentiable: refused when anything requires grad under grad mode.
void add_out_autograd(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                      at::Tensor& out);

}  // namespace vecadd::torch_binding
