// The vecadd operators as the PyTorch dispatcher knows them (namespace "vecadd").
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace vecadd::torch_binding {

using AddSignature = at::Tensor(const at::Tensor&, const at::Tensor&, double);
using AddOutSignature = void(const at::Tensor&, const at::Tensor&, double, at::Tensor&);
using AddNSignature = at::Tensor(at::TensorList, std::optional<at::ArrayRef<double>>);
using AddNOutSignature = void(at::TensorList, std::optional<at::ArrayRef<double>>, at::Tensor&);

// The public operators and their out overloads, looked up once.
const c10::TypedOperatorHandle<AddSignature>& add_operator();
const c10::TypedOperatorHandle<AddOutSignature>& add_out_operator();
const c10::TypedOperatorHandle<AddNSignature>& add_n_operator();
const c10::TypedOperatorHandle<AddNOutSignature>& add_n_out_operator();

}  // namespace vecadd::torch_binding
