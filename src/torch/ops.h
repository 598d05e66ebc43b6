// The vecadd operators as the PyTorch dispatcher knows them (namespace "vecadd").
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

namespace vecadd::torch_binding {

using AddSignature = at::Tensor(const at::Tensor&, const at::Tensor&, double);
using AddOutSignature = void(const at::Tensor&, const at::Tensor&, double, at::Tensor&);

const c10::TypedOperatorHandle<AddSignature>& add_operator();
const c10::TypedOperatorHandle<AddOutSignature>& add_out_operator();

}  // namespace vecadd::torch_binding
