#include "autograd.h"

#include <ATen/ExpandUtils.h>
#include <ATen/ops/real.h>
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

// Input `index`'s weight as a torch Scalar: complex where its imaginary part is not 0.
c10::Scalar weight_of(const SumCall& call, int index) {
  const double real = call.weight(index);
  const double imag = call.weight_imag(index);
  return imag == 0 ? c10::Scalar(real) : c10::Scalar(c10::complex<double>(real, imag));
}

// Whether two shapes are the same, answered without a guard: a symbolic size (torch.compile's
// tracing) counts as different, and its gradient is then summed to it.
bool same_sizes(c10::SymIntArrayRef input, c10::SymIntArrayRef result) {
  if (input.size() != result.size()) {
    return false;
  }
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (input[i].is_heap_allocated() || result[i].is_heap_allocated() ||
        input[i].as_int_unchecked() != result[i].as_int_unchecked()) {
      return false;
    }
  }
  return true;
}

bool is_one(const c10::Scalar& weight) {
  return !weight.isComplex() && weight.toDouble() == 1;
}

}  // namespace

torch::autograd::variable_list WeightedSumBackward::apply(torch::autograd::variable_list&& grads) {
  torch::autograd::variable_list result(weights.size());
  const at::Tensor& grad = grads[0];
  if (!grad.defined()) {
    return result;
  }
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!should_compute_output(i)) {
      continue;
    }
    // d(w * x)/dx for the conjugate-Wirtinger gradients torch uses: the gradient times conj(w),
    // summed back over the broadcast dimensions, in the input's dtype (its real part for a real
    // input of a complex sum).
    const c10::Scalar& weight = weights[i];
    at::Tensor input_grad = is_one(weight) ? grad : grad.mul(weight.conj());
    if (broadcast_sizes[i]) {
      input_grad = at::sum_to(input_grad, *broadcast_sizes[i]);
    }
    if (input_grad.is_complex() && !c10::isComplexType(dtypes[i])) {
      input_grad = at::real(input_grad);
    }
    result[i] = input_grad.scalar_type() == dtypes[i] ? input_grad : input_grad.to(dtypes[i]);
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
    node->weights.push_back(weight_of(call, i));
    node->dtypes.push_back(call[i].scalar_type());
    const c10::SymIntArrayRef sizes = call[i].sym_sizes();
    node->broadcast_sizes.push_back(
        same_sizes(sizes, result.sym_sizes()) ? std::nullopt : std::optional(sizes.vec()));
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
    const c10::Scalar weight = weight_of(call, i);
    if (!tangent.defined()) {
      tangent = is_one(weight) ? input_tangent : input_tangent.mul(weight);
    } else {
      tangent = tangent.add(input_tangent, weight);
    }
  }
  if (tangent.defined()) {
    if (tangent.scalar_type() != result.scalar_type()) {
      tangent = tangent.to(result.scalar_type());
    }
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
