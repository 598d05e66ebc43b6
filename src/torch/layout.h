// The result's shape and memory layout, for the real kernels and for tracing alike: the only
// place that works in SymInt, whose sizes torch.compile may not know while it traces.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/SymInt.h>

#include <vector>

namespace vecadd::torch_binding {

// Broadcast shape of x and y under torch's rules, with an error that names both.
std::vector<c10::SymInt> broadcast_shape(const at::Tensor& x, const at::Tensor& y);

// out has exactly `shape` (out= never resizes).
void check_out_shape(const at::Tensor& out, c10::SymIntArrayRef shape);

// The uninitialized result of x + alpha * y, laid out in memory as torch.add lays out its
// result: like its inputs when they agree (channels-last stays channels-last, a transposed
// pair gives a transposed result), else in the order of the inputs' strides.
at::Tensor allocate_result(const at::Tensor& x, const at::Tensor& y, c10::SymIntArrayRef shape);

}  // namespace vecadd::torch_binding
