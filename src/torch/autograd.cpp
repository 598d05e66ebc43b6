#include "autograd.h"

#include <ATen/ExpandUtils.h>
#include <torch/csrc/autograd/variable.h>

#include <memory>
#include <string>
#include <type_traits>

namespace vecadd::torch_binding {
namespace {

// torch moved autograd nodes from std::shared_ptr to c10::intrusive_ptr; follow the edge type.
using NodePointer = decltype(torch::autograd::Edge::function);
constexpr bool kIntrusiveNodes =
    !std::is_same_v<NodePointer, std::shared_ptr<torch::autograd::Node>>;

template <class NodeType>
auto make_node() {
  if constexpr (kIntrusiveNodes) {
    return c10::make_intrusive<NodeType>();
  } else {
    return std::make_shared<NodeType>();
  }
}

bool has_tangent(const at::Tensor& tensor) {
  return tensor._fw_grad(/*level=*/0).defined();
}

}  // namespace

torch::autograd::variable_list WeightedSumBackward::apply(torch::autograd::variable_list&& grads) {
  torch::autograd::variable_list result(weights.size());
  const at::Tensor& grad = grads[0];
  if (!grad.defined()) {
    return result;
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (should_compute_output(i)) {
      result[i] = at::sum_to(weights[i] == 1 ? grad : grad.mul(weights[i]), sizes[i]);
    }
  }
  return result;
}

bool needs_grad(const SumCall& call) {
  if (!at::GradMode::is_enabled()) {
    return false;
  }
  for (int i = 0; i < call.count; ++i) {
    if (call[i].requires_grad()) {
      return true;
    }
  }
  return false;
}

void record_backward(const SumCall& call, at::Tensor& result) {
  const auto node = make_node<WeightedSumBackward>();
  torch::autograd::edge_list edges;
  edges.reserve(static_cast<std::size_t>(call.count));
  for (int i = 0; i < call.count; ++i) {
    edges.push_back(torch::autograd::impl::gradient_edge(call[i]));
    node->weights.push_back(call.weight(i));
    node->sizes.push_back(call[i].sym_sizes().vec());
  }
  node->node_name = call.words.backward;
  node->set_next_edges(std::move(edges));
  torch::autograd::set_history(result, node);
}

// The tangent of z = sum of w_i * x_i is the sum of w_i * x_i's tangents, broadcast to z's
// shape, built from torch ops so that it is itself differentiable (jvp of a gradient, hessians).
void set_tangent(const SumCall& call, at::Tensor& result) {
  at::Tensor tangent;
  for (int i = 0; i < call.count; ++i) {
    const at::Tensor& input_tangent = call[i]._fw_grad(/*level=*/0);
    if (!input_tangent.defined()) {
      continue;
    }
    const double weight = call.weight(i);
    if (!tangent.defined()) {
      tangent = weight == 1 ? input_tangent : input_tangent.mul(weight);
    } else {
      tangent = tangent.add(input_tangent, weight);
    }
  }
  if (tangent.defined()) {
    result._set_fw_grad(tangent.expand_symint(result.sym_sizes()), /*level=*/0,
                        /*is_inplace_op=*/false);
  }
}

void refuse_out_with_grad(const SumCall& call, const at::Tensor& out) {
  bool grad = at::GradMode::is_enabled() && out.requires_grad();
  bool tangent = has_tangent(out);
  for (int i = 0; i < call.count; ++i) {
    grad = grad || (at::GradMode::is_enabled() && call[i].requires_grad());
    tangent = tangent || has_tangent(call[i]);
  }
  // "x, y" or "tensors": the inputs as the call names its arguments.
  std::string inputs = call.words.fixed_inputs ? "" : call.words.list;
  for (int i = 0; call.words.fixed_inputs && i < call.count; ++i) {
    inputs += (i == 0 ? "" : ", ") + call.words.input(i);
  }
  const std::string name(call.words.call);
  const std::string plain = name.substr(0, name.size() - 2) + "(" + inputs + ")";
  TORCH_CHECK(!grad, call.words.call, ": out= cannot be used when ", inputs,
              " or out requires grad (autograd does not flow through out=); expected no out= "
              "(call ",
              plain, ") or a call inside torch.no_grad()");
  TORCH_CHECK(!tangent, call.words.call,
              ": out= cannot be used with forward-mode AD (a tangent on ", inputs,
              " or out would not flow through out=); expected no out= (call ", plain,
              ") or inputs without tangents");
}

}  // namespace vecadd::torch_binding
