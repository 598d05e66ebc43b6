// Evidence for: docs/benchmarks.md, "Mixed dtypes on the GPU" (lab/gpu_sum_kernels.sh).
// vecadd::plan_sum and vecadd::sum_cuda behind one C function, so that lab/gpu_sum_kernels.py can
// run a sum of mixed dtypes on torch's tensors (their pointers, the current stream) before the
// bindings take mixed dtypes. It reaches vecadd through its public headers and libraries only:
//   nvcc -O3 -std=c++17 -shared -Xcompiler -fPIC -DVECADD_WITH_CUDA=1 $(python3 -m vecadd
//        --includes) lab/sum_cuda_shim.cu -L<lib>/cudaN -L<lib> -lvecadd_cuda -lvecadd
//        -Xlinker -rpath,<lib>/cudaN -Xlinker -rpath,<lib> -o sum_cuda_shim.so
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>

#include <vecadd/cuda.h>

namespace {
constexpr int kMaxInputs = 8;
}  // namespace

// One call: `count` inputs, input i an array (data[i], ndim[i] sizes and element strides from
// shapes[i] / strides[i]) or, with data[i] null, the constant value[i] of dtypes[i] (a scalar:
// straight to the compute type); every weight one. Returns the CUDA status, or -1 when the
// planner refused the call (the message goes to stderr).
extern "C" int vecadd_lab_sum(int count, const void* const* data, const int* dtypes,
                              const int* ndims, const std::int64_t* const* sizes,
                              const std::int64_t* const* strides, const double* values, void* z,
                              int z_dtype, int z_ndim, const std::int64_t* z_sizes,
                              const std::int64_t* z_strides, int common, void* stream) {
  if (count < 1 || count > kMaxInputs) {
    return -1;
  }
  vecadd::SumInput inputs[kMaxInputs];
  for (int i = 0; i < count; ++i) {
    inputs[i].data = data[i];
    inputs[i].dtype = static_cast<vecadd::DType>(dtypes[i]);
    if (data[i] != nullptr) {
      inputs[i].shape = {ndims[i], sizes[i], strides[i]};
    } else {
      inputs[i].value = vecadd::Number::of_real(values[i]);
      inputs[i].value.integral = static_cast<std::int64_t>(values[i]);
      inputs[i].scalar = true;
    }
  }
  const vecadd::Sum sum{inputs,
                        count,
                        {z, {z_ndim, z_sizes, z_strides}, static_cast<vecadd::DType>(z_dtype)},
                        static_cast<vecadd::DType>(common)};
  try {
    return static_cast<int>(
        vecadd::sum_cuda(sum, vecadd::plan_sum(sum), static_cast<cudaStream_t>(stream)));
  } catch (const std::invalid_argument& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return -1;
  }
}
