#include "autograd.h"

#include <ATen/ExpandUtils.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/variable.h>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "call_rules.h"
#include "ops.h"

namespace vecadd::torch_binding {
namespace {

// Backward of z = x + alpha * y: dz/dx = 1 and dz/dy = alpha, summed back over broadcast
// dimensions. Built from torch ops, so the backward is itself differentiable.
struct AddBackward final : public torch::autograd::Node {
  double alpha = 1;
  std::vector<c10::SymInt> x_sizes;
  std::vector<c10::SymInt> y_sizes;

  std::string name() const override { return "vecadd::AddBackward"; }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    torch::autograd::variable_list result(2);
    const at::Tensor& grad = grads[0];
    if (!grad.defined()) {
      return result;
    }
    if (should_compute_output(0)) {
      result[0] = at::sum_to(grad, x_sizes);
    }
    if (should_compute_output(1)) {
      result[1] = at::sum_to(alpha == 1 ? grad : grad.mul(alpha), y_sizes);
    }
    return result;
  }
};

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

// Forward mode: the tangent of z = x + alpha * y is x_t + alpha * y_t, broadcast to z's shape,
// built from torch ops so that it is itself differentiable (jvp of a gradient, hessians).
void set_tangent(const at::Tensor& x, const at::Tensor& y, double alpha, at::Tensor& result) {
  const at::Tensor& x_tangent = x._fw_grad(/*level=*/0);
  const at::Tensor& y_tangent = y._fw_grad(/*level=*/0);
  if (!x_tangent.defined() && !y_tangent.defined()) {
    return;
  }
  at::Tensor tangent;
  if (!y_tangent.defined()) {
    tangent = x_tangent;
  } else if (!x_tangent.defined()) {
    tangent = alpha == 1 ? y_tangent : y_tangent.mul(alpha);
  } else {
    tangent = x_tangent.add(y_tangent, alpha);
  }
  result._set_fw_grad(tangent.expand_symint(result.sym_sizes()), /*level=*/0,
                      /*is_inplace_op=*/false);
}

bool has_tangent(const at::Tensor& tensor) {
  return tensor._fw_grad(/*level=*/0).defined();
}

}  // namespace

at::Tensor add_autograd(const at::Tensor& x, const at::Tensor& y, double alpha) {
  const bool needs_grad = torch::autograd::compute_requires_grad(x, y);
  at::Tensor result;
  {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    result = add_operator().call(x, y, alpha);
  }
  if (needs_grad) {
    const auto node = make_node<AddBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(x, y));
    node->alpha = alpha;
    node->x_sizes = x.sym_sizes().vec();
    node->y_sizes = y.sym_sizes().vec();
    torch::autograd::set_history(result, node);
  }
  set_tangent(x, y, alpha, result);
  return result;
}

void add_out_autograd(const at::Tensor& x, const at::Tensor& y, double alpha, at::Tensor& out) {
  TORCH_CHECK(!(at::GradMode::is_enabled() &&
                (x.requires_grad() || y.requires_grad() || out.requires_grad())),
              binding::kOp,
              ": out= cannot be used when x, y or out requires grad (autograd does not "
              "flow through out=); expected no out= (call vecadd.add(x, y)) or a call inside "
              "torch.no_grad()");
  TORCH_CHECK(!(has_tangent(x) || has_tangent(y) || has_tangent(out)), binding::kOp,
              ": out= cannot be used with forward-mode AD (a tangent on x, y or out would not "
              "flow through out=); expected no out= (call vecadd.add(x, y)) or inputs without "
              "tangents");
  {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    add_out_operator().call(x, y, alpha, out);
  }
  torch::autograd::impl::bump_version(out);
}

}  // namespace vecadd::torch_binding
