// Every operator's kernels, for any binding's tensors (see call_rules.h for `Api`): check the
// call by the shared rules, allocate the result in the dtype they decide, ask the kernel
// library's planner, run the CPU or CUDA kernels. Nothing here includes torch.
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
    const Decided decided = Rules::check_inputs(call);
    Tensor out = allocate_result(call, decided);
    compute_into(call, decided, out);
    return out;
  }

  static void sum_out(const Call& call, const Tensor& out) {
    const Decided decided = Rules::check_inputs(call);
    Rules::check_out(call, decided, out, Rules::result_shape(call));
    Rules::check_out_memory(call, decided, out);
    compute_into(call, decided, out);
  }

 private:
  // The uninitialized result in the sum's dtype, on the call's device, laid out as a chain of
  // torch.add lays out its result.
  static Tensor allocate_result(const Call& call, const Decided& decided) {
    const Tensor& device = call[decided.device_input];
    const auto dtype = torch_dtype<decltype(Api::dtype(device))>(decided.common);
    PerOperand<Operand> operands(call.count);
    for (int i = 0; i < call.count; ++i) {
      operands[i] = Api::operand(call[i]);
    }
    if (vecadd::is_one_dense_shape(operands.data(), call.count)) {  // the common call
      return Api::empty(operands[0], device, dtype);
    }
    const std::vector<std::int64_t> shape = Rules::result_shape(call);
    return Api::empty_strided(shape,
                              call.count == 2
                                  ? vecadd::result_strides(operands[0], operands[1], shape)
                                  : vecadd::result_strides(operands.data(), call.count, shape),
                              device, dtype);
  }

  static void compute_into(const Call& call, const Decided& decided, const Tensor& out) {
    if (Api::numel(out) == 0) {
      return;
    }
    const int n = call.count;
    PerOperand<SumInput> inputs(n);
    for (int i = 0; i < n; ++i) {
      SumInput& input = inputs[i];
      const DecidedInput& decided_input = decided.inputs[i];
      input.dtype = decided_input.dtype;
      input.weight = decided_input.weight;
      if (decided_input.on_host) {  // read once, on the host, as a number
        input.value = number_at(Api::data(call[i]), input.dtype);
        input.scalar = decided_input.scalar;
      } else {
        input.data = Api::data(call[i]);
        input.shape = Api::operand(call[i]);
      }
    }
    const Sum sum{inputs.data(),
                  n,
                  {Api::mutable_data(out), Api::operand(out), *library_dtype(Api::dtype(out))},
                  decided.common};
    const typename Api::DeviceGuard guard(out);
    const Plan plan = vecadd::plan_sum(sum);
#if VECADD_WITH_CUDA
    if (Api::is_cuda(out)) {
      const cudaError_t status = vecadd::sum_cuda(sum, plan, Api::cuda_stream(out));
      if (status != cudaSuccess) {
        const Problem problem =
            launch_problem(call.words.call, status, Api::device_index(out), Api::device_name(out));
        Api::fail(problem.kind, problem.message);
      }
      return;
    }
#endif
    vecadd::sum_cpu(sum, plan, Api::parallel_for());
  }
};

}  // namespace vecadd::binding
