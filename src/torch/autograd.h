// The Autograd kernels of the vecadd operators, for any weighted sum (the native build).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/Scalar.h>
#include <c10/core/SymInt.h>
#include <c10/util/SmallVector.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <optional>
#include <string>
#include <vector>

#include "call_rules.h"

namespace vecadd::torch_binding {

using SumCall = binding::SumCall<at::Tensor>;

// Backward of z = sum of w_i * x_i: each input's gradient is conj(w_i) times z's, summed back
// over its broadcast dimensions, in the input's dtype. Built from torch ops, so the backward is
// itself differentiable.
struct WeightedSumBackward final : public torch::autograd::Node {
  const char* node_name = "";
  // Two inline: add's x and y, without an allocation per call.
  c10::SmallVector<c10::Scalar, 2> weights;
  c10::SmallVector<at::ScalarType, 2> dtypes;  // each input's, which its gradient takes
  // Each input's sizes where it was broadcast (its gradient is summed back to them); none where
  // it has the result's, the common case, which then costs no allocation.
  c10::SmallVector<std::optional<std::vector<c10::SymInt>>, 2> broadcast_sizes;

  std::string name() const override { return node_name; }
  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override;
};

// Whether any input requires grad under grad mode; records the backward node on `result`.
bool needs_grad(const SumCall& call);
void record_backward(const SumCall& call, at::Tensor& result);

// Forward mode: sets the result's tangent, sum of w_i * x_i's tangents, where an input has one.
void set_tangent(const SumCall& call, at::Tensor& result);

// out= is not differentiable: refused when anything requires grad under grad mode, or carries a
// tangent.
void refuse_out_with_grad(const SumCall& call, const at::Tensor& out);

// The Autograd kernel of an operator: runs `below` (the operator below the Autograd key) and
// records the backward and the tangent.
template <class Below>
at::Tensor sum_autograd(const SumCall& call, Below&& below) {
  const bool record = needs_grad(call);
  at::Tensor result;
  {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    result = below();
  }
  if (record) {
    record_backward(call, result);
  }
  set_tangent(call, result);
  return result;
}

template <class Below>
void sum_out_autograd(const SumCall& call, at::Tensor& out, Below&& below) {
  refuse_out_with_grad(call, out);
  {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    below();
  }
  torch::autograd::impl::bump_version(out);
}

}  // namespace vecadd::torch_binding
