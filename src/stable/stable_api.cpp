#include "stable_api.h"

#include <torch/csrc/stable/ops.h>

#include <stdexcept>

#include "vecadd/result_layout.h"

namespace vecadd::stable_binding {

void check_shim(AOTITorchError status, const char* what) {
  if (status != AOTI_TORCH_SUCCESS) {
    throw std::runtime_error(std::string("vecadd: torch could not ") + what);
  }
}

namespace {

std::int32_t cuda_device_type() {
  static const std::int32_t type = aoti_torch_device_type_cuda();
  return type;
}

}  // namespace

void HandleDeleter::operator()(AtenTensorHandle handle) const noexcept {
  aoti_torch_delete_tensor_object(handle);
}

StableTensor::StableTensor(AtenTensorHandle handle, HandleOwner owner)
    : owner_(std::move(owner)), handle_(handle) {
  check_shim(aoti_torch_is_defined(handle, &defined_), "tell whether a tensor is defined");
  if (!defined_) {
    return;
  }
  std::int64_t ndim = 0;
  check_shim(aoti_torch_get_dtype(handle, &dtype_code_), "read a tensor's dtype");
  check_shim(aoti_torch_get_device_type(handle, &device_type_), "read a tensor's device");
  check_shim(aoti_torch_get_device_index(handle, &device_index_), "read a tensor's device");
  check_shim(aoti_torch_get_dim(handle, &ndim), "read a tensor's shape");
  check_shim(aoti_torch_get_sizes(handle, const_cast<std::int64_t**>(&sizes_)),
             "read a tensor's shape");
  check_shim(aoti_torch_get_strides(handle, const_cast<std::int64_t**>(&strides_)),
             "read a tensor's strides");
  ndim_ = static_cast<int>(ndim);
}

bool StableTensor::is_cpu() const {
  return device_type_ == aoti_torch_device_type_cpu();
}

bool StableTensor::is_cuda() const {
  return device_type_ == cuda_device_type();
}

std::int64_t StableTensor::numel() const {
  std::int64_t count = 1;
  for (int d = 0; d < ndim_; ++d) {
    count *= sizes_[d];
  }
  return count;
}

StableApi::DeviceGuard::DeviceGuard(const Tensor& t) {
  if (t.is_cuda() && t.device_index() != torch::stable::accelerator::getCurrentDeviceIndex()) {
    guard_.emplace(t.device_index());
  }
}

std::string StableApi::device_name(const Tensor& t) {
  const std::int32_t type = t.device_type();
  if (type == aoti_torch_device_type_cpu()) {
    return "cpu";
  }
  if (type == aoti_torch_device_type_meta()) {
    return "meta";
  }
  const std::string index = std::to_string(t.device_index());
  if (type == cuda_device_type()) {
    return "cuda:" + index;
  }
  return "device type " + std::to_string(type) + ":" + index;
}

std::size_t StableApi::element_size(const Tensor& t) {
  return aoti_torch_dtype_element_size(t.dtype_code());
}

const void* StableApi::data(const Tensor& t) {
  const void* data = nullptr;
  check_shim(torch_get_const_data_ptr(t.handle(), &data), "give a tensor's data");
  return data;
}

void* StableApi::mutable_data(const Tensor& t) {
  void* data = nullptr;
  check_shim(torch_get_mutable_data_ptr(t.handle(), &data), "give a tensor's data");
  return data;
}

StableApi::Tensor StableApi::empty(const vecadd::Operand& shape, const Tensor& like,
                                   torch::headeronly::ScalarType dtype) {
  // The strides of the common ranks on the stack: the common call allocates nothing else.
  constexpr int kStackRank = 8;
  std::int64_t stack[kStackRank];
  std::vector<std::int64_t> heap(shape.ndim > kStackRank ? shape.ndim : 0);
  std::int64_t* const strides = heap.empty() ? stack : heap.data();
  vecadd::row_major_strides(shape.ndim, shape.sizes, strides);
  return allocate(shape.ndim, shape.sizes, strides, like, dtype);
}

StableApi::Tensor StableApi::empty_strided(const std::vector<std::int64_t>& sizes,
                                           const std::vector<std::int64_t>& strides,
                                           const Tensor& like,
                                           torch::headeronly::ScalarType dtype) {
  return allocate(static_cast<int>(sizes.size()), sizes.data(), strides.data(), like, dtype);
}

StableApi::Tensor StableApi::allocate(int ndim, const std::int64_t* sizes,
                                      const std::int64_t* strides, const Tensor& like,
                                      torch::headeronly::ScalarType dtype) {
  AtenTensorHandle result = nullptr;
  check_shim(aoti_torch_empty_strided(ndim, sizes, strides, static_cast<std::int32_t>(dtype),
                                      like.device_type(), like.device_index(), &result),
             "allocate the result");
  return Tensor(result, HandleOwner(result));
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
  check_shim(aoti_torch_get_current_cuda_stream(t.device_index(), &stream),
             "give the current CUDA stream");
  return static_cast<cudaStream_t>(stream);
}
#endif

void StableApi::fail(binding::ErrorKind kind, const std::string& message) {
  throw std::runtime_error(binding::kind_prefix(kind) + message);
}

}  // namespace vecadd::stable_binding
