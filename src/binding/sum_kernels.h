// Every operator's kernels, for any binding's tensors (see call_rules.h for `Api`): check the
// call by the shared rules, allocate the result, ask the kernel library's planner, run the CPU
// or CUDA kernels. Nothing here includes torch.
#pragma once

#include <cstdint>
#include <vector>

#include "call_rules.h"
#include "vecadd/plan.h"
#include "vecadd/result_layout.h"
#include "vecadd/vecadd.h"
#if VECADD_WITH_CUDA
#include "vecadd/cuda.h"
#endif

namespace vecadd::binding {

// Every operator's kernels, for a binding's tensors: check -> allocate -> plan -> run. (The
// Meta kernels are the Python fake kernels: torch refuses a C++ Meta kernel beside them.)
template <class Api>
struct SumKernels {
  using Tensor = typename Api::Tensor;
  using Rules = CallRules<Api>;
  using Call = SumCall<Tensor>;

  static Tensor sum(const Call& call) {
    Rules::check_inputs(call);
    Tensor out = allocate_result(call);
    compute_into(call, out);
    return out;
  }

  static void sum_out(const Call& call, const Tensor& out) {
    Rules::check_inputs(call);
    Rules::check_out(call, out, Rules::result_shape(call));
    Rules::check_out_memory(call, out);
    compute_into(call, out);
  }

 private:
  // The uninitialized result, laid out as a chain of torch.add lays out its result.
  static Tensor allocate_result(const Call& call) {
    const std::vector<std::int64_t> shape = Rules::result_shape(call);
    if (call.count == 2) {  // the common call
      return Api::empty_strided(
          shape, vecadd::result_strides(Api::operand(call[0]), Api::operand(call[1]), shape),
          call[0]);
    }
    std::vector<Operand> operands(static_cast<std::size_t>(call.count));
    for (int i = 0; i < call.count; ++i) {
      operands[i] = Api::operand(call[i]);
    }
    return Api::empty_strided(shape, vecadd::result_strides(operands.data(), call.count, shape),
                              call[0]);
  }

  static void compute_into(const Call& call, const Tensor& out) {
    if (Api::numel(out) == 0) {
      return;
    }
    const typename Api::DeviceGuard guard(out);
    visit_element_type(Api::dtype(out), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int n = call.count;
      PerOperand<const T*> data(n);
      PerOperand<Operand> shapes(n);
      PerOperand<vecadd::alpha_t<T>> weights(n);
      for (int i = 0; i < n; ++i) {
        data[i] = static_cast<const T*>(Api::data(call[i]));
        shapes[i] = Api::operand(call[i]);
        // check_inputs refused every weight without one for T, so this derives without a problem.
        derive_weight<T>(call.words, i, call.given[i], [] { return std::string(); }, weights[i]);
      }
      auto* z_data = static_cast<T*>(Api::mutable_data(out));
      const vecadd::Plan plan =
          vecadd::plan_add_n(data.data(), shapes.data(), n, z_data, Api::operand(out));
#if VECADD_WITH_CUDA
      if (Api::is_cuda(out)) {
        const cudaError_t status =
            vecadd::add_n_cuda<T>(data.data(), weights.data(), z_data, plan, Api::cuda_stream(out));
        if (status != cudaSuccess) {
          const Problem problem = launch_problem(call.words.call, status, Api::device_index(out),
                                                 Api::device_name(out));
          Api::fail(problem.kind, problem.message);
        }
        return;
      }
#endif
      vecadd::add_n_cpu<T>(data.data(), weights.data(), z_data, plan, Api::parallel_for());
    });
  }
};

}  // namespace vecadd::binding
