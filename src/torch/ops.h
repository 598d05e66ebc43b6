// The vecadd operators as the PyTorch dispatcher knows them (namespace "vecadd").
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/Scalar.h>

namespace vecadd::torch_binding {

using AddSignature = at::Tensor(const at::Tensor&, const at::Tensor&, const c10::Scalar&);
using AddOutSignature = void(const at::Tensor&, const at::Tensor&, const c10::Scalar&, at::Tensor&);

// vecadd::add(Tensor x, Tensor y, *, Scalar alpha=1) -> Tensor
const c10::TypedOperatorHandle<AddSignature>& add_operator();

// vecadd::add.out(Tensor x, Tensor y, *, Scalar alpha=1, Tensor(a!) out) -> ()
const c10::TypedOperatorHandle<AddOutSignature>& add_out_operator();

}  // namespace vecadd::torch_binding
