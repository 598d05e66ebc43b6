#include "stable_api.h"

#include <stdexcept>

namespace vecadd::stable_binding {
namespace {

void check_shim(AOTITorchError status, const char* what) {
  if (status != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(std::string(binding::kOp) + ": torch could not " + what);
  }
}

}  // namespace

torch::headeronly::ScalarType StableApi::dtype(const Tensor& t) {
  std::int32_t code = 0;
  check_shim(aoti_torch_get_dtype(t.get(), &code), "read a tensor's dtype");
  return static_cast<torch::headeronly::ScalarType>(code);
}

std::string StableApi::device_name(const Tensor& t) {
  std::int32_t type = 0;
  check_shim(aoti_torch_get_device_type(t.get(), &type), "read a tensor's device");
  if (type == aoti_torch_device_type_cpu()) {
    return "cpu";
  }
  if (type == aoti_torch_device_type_meta()) {
    return "meta";
  }
  const std::string index = std::to_string(t.get_device_index());
  if (type == aoti_torch_device_type_cuda()) {
    return "cuda:" + index;
  }
  return "device type " + std::to_string(type) + ":" + index;
}

StableApi::Tensor StableApi::empty_strided(const std::vector<std::int64_t>& sizes,
                                           const std::vector<std::int64_t>& strides,
                                           const Tensor& like) {
  std::int32_t dtype = 0;
  std::int32_t device_type = 0;
  std::int32_t device_index = 0;
  check_shim(aoti_torch_get_dtype(like.get(), &dtype), "read a tensor's dtype");
  check_shim(aoti_torch_get_device_type(like.get(), &device_type), "read a tensor's device");
  check_shim(aoti_torch_get_device_index(like.get(), &device_index), "read a tensor's device");
  AtenTensorHandle result = nullptr;
  check_shim(aoti_torch_empty_strided(static_cast<std::int64_t>(sizes.size()), sizes.data(),
                                      strides.data(), dtype, device_type, device_index, &result),
             "allocate the result");
  return Tensor(result);
}

vecadd::ParallelFor StableApi::parallel_for() {
  return {static_cast<int>(torch::stable::get_num_threads()),
          [](std::int64_t count, std::int64_t grain, const vecadd::RangeBody& body) {
            torch::stable::parallel_for(
                0, count, grain, [&](std::int64_t begin, std::int64_t end) { body(begin, end); });
          }};
}

#if VECADD_WITH_CUDA
cudaStream_t StableApi::cuda_stream(const Tensor& t) {
  void* stream = nullptr;
  check_shim(aoti_torch_get_current_cuda_stream(t.get_device_index(), &stream),
             "give the current CUDA stream");
  return static_cast<cudaStream_t>(stream);
}
#endif

void StableApi::fail(binding::ErrorKind kind, const std::string& message) {
  switch (kind) {
    case binding::ErrorKind::kType:
      throw std::runtime_error("TypeError: " + message);
    case binding::ErrorKind::kValue:
      throw std::runtime_error("ValueError: " + message);
    case binding::ErrorKind::kRuntime:
      break;
  }
  throw std::runtime_error(message);
}

}  // namespace vecadd::stable_binding
