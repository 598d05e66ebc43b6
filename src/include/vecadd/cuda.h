// vecadd's CUDA entry points: weighted sums (z = x + alpha * y the common one) over device
// arrays, enqueued on a stream.
//
// The library behind this header (CMake target vecadd::cuda) is built once per CUDA major;
// it shares vecadd/vecadd.h's types and planner (vecadd::vecadd), and links the CUDA runtime
// of its major. 16-bit floats are vecadd::float16 / vecadd::bfloat16: pass __half or
// __nv_bfloat16 arrays with a reinterpret_cast (the same bits).
//
//   const vecadd::Sum sum = ...;  // as for vecadd::sum_cpu, with device arrays
//   cudaError_t status = vecadd::sum_cuda(sum, vecadd::plan_sum(sum), stream);
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "vecadd/vecadd.h"

namespace vecadd {

// Runs `sum` (vecadd/vecadd.h: each input in its own dtype, constants by value, z in any dtype)
// on device arrays, for a plan that plan_sum made for it; enqueued on `stream`. Constants are
// read on the host (they need no device memory: a 0-dim CPU tensor beside CUDA tensors). Each
// element is converted in registers: one pass over memory, no conversion copies. Returns the
// launch status as add_n_cuda does, or cudaErrorInvalidValue when the plan does not match the
// sum or a dtype is outside vecadd::DType.
cudaError_t sum_cuda(const Sum& sum, const Plan& plan, cudaStream_t stream);

// z = sum of weights[i] * inputs[i] over device arrays, for a plan that plan_add_n made for
// them; enqueued on `stream`. Returns the launch status (cudaSuccess, or e.g.
// cudaErrorNoKernelImageForDevice when this build holds no code for the GPU); execution errors
// surface later, on the stream, as with any CUDA launch. Each input is read once and z written
// once, in one launch for up to 32 inputs (more are summed in launches of 32, the partial sums
// kept in compute type in stream-ordered memory); a call with more than kMaxDims merged
// dimensions is several launches, and the first failed one's status is returned. On compute
// capability 9.0 and newer a launch may overlap the end of the previous kernel in the stream,
// but it reads and writes memory only after that kernel has completed.
template <class T>
cudaError_t add_n_cuda(const T* const* inputs, const alpha_t<T>* weights, T* z, const Plan& plan,
                       cudaStream_t stream);

// z = x + alpha * y: the two-input case, for a plan that plan_add made for these arrays.
template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, const Plan& plan, alpha_t<T> alpha,
                     cudaStream_t stream);

// n contiguous elements.
template <class T>
cudaError_t add_cuda(const T* x, const T* y, T* z, std::int64_t n, alpha_t<T> alpha,
                     cudaStream_t stream);

// The CUDA architectures this library was compiled for, in CMake's syntax ("80-real;90").
const char* cuda_architectures();

// The CUDA toolkit release it was compiled with ("12.4").
const char* cuda_toolkit_version();

// A CUDA status in the words of the runtime this library runs on (its own, when it links the
// runtime statically, which its callers then need not link at all).
const char* cuda_error_text(cudaError_t status);

// What the runtime knows of a device: its name and compute capability (known: it answered).
struct CudaDevice {
  bool known = false;
  char name[256] = {};
  int major = 0;
  int minor = 0;
};
CudaDevice describe_cuda_device(int device_index);

#define VECADD_DECLARE_CUDA(T)                                                                   \
  extern template cudaError_t add_n_cuda<T>(const T* const*, const alpha_t<T>*, T*, const Plan&, \
                                            cudaStream_t);                                       \
  extern template cudaError_t add_cuda<T>(const T*, const T*, T*, const Plan&, alpha_t<T>,       \
                                          cudaStream_t);                                         \
  extern template cudaError_t add_cuda<T>(const T*, const T*, T*, std::int64_t, alpha_t<T>,      \
                                          cudaStream_t);
VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_DECLARE_CUDA)
#undef VECADD_DECLARE_CUDA

}  // namespace vecadd
