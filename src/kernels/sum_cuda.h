// What the CUDA entry points (add_cuda.cu) share with the dynamic kernel (sum_dynamic.cu).
#pragma once

#include <cuda_runtime_api.h>

#include "vecadd/vecadd.h"

namespace vecadd::detail {

// A type as a value, to pick a kernel's element types at run time.
template <class T>
struct TypeTag {
  using type = T;
};

// Runs any sum (vecadd::sum_cuda's contract) on the dynamic-casting kernel: one per compute type,
// each element converted in registers by its dtype.
cudaError_t sum_dynamic(const Sum& sum, const Plan& plan, cudaStream_t stream);

}  // namespace vecadd::detail
