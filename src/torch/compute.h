// Tensors become pointers here: the kernel library plans and runs x + alpha * y into out.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

namespace vecadd::torch_binding {

// Writes x + alpha * y into `out`, which already has the broadcast shape and was checked.
void compute_into(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                  const at::Tensor& out);

}  // namespace vecadd::torch_binding
