// The Autograd kernels of the vecadd operators.
#pragma once

#include <ATen/core/Tensor.h>

namespace vecadd::torch_binding {

// Records the backward of z = x + alpha * y when x or y requires grad, around the op below.
at::Tensor add_autograd(const at::Tensor& x, const at::Tensor& y, double alpha);

// out= is not differentiable: refused when anything requires grad under grad mode.
void add_out_autograd(const at::Tensor& x, const at::Tensor& y, double alpha, at::Tensor& out);

}  // namespace vecadd::torch_binding
