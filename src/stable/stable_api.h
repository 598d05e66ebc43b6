// How the shared call rules (src/binding/call_rules.h) read a tensor and raise an error,
// through the LibTorch stable ABI alone (the C shims of torch 2.10 and the header-only
// torch/headeronly and torch/csrc/stable headers).
#pragma once

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/headeronly/core/ScalarType.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "call_rules.h"
#include "vecadd/plan.h"

namespace vecadd::stable_binding {

// Throws "vecadd: torch could not <what>" where a shim call failed.
void check_shim(AOTITorchError status, const char* what);

// Deletes a tensor handle: the dispatcher hands each kernel owning handles of its tensors.
struct HandleDeleter {
  void operator()(AtenTensorHandle handle) const noexcept;
};
using HandleOwner = std::unique_ptr<AtenTensorOpaque, HandleDeleter>;

// One tensor of a call: its handle and what the call rules read of it, taken from torch once
// at construction (each read is a call into torch). Owns the handle when given its owner.
class StableTensor {
 public:
  StableTensor() = default;  // none yet: a slot of PerOperand, assigned before use
  explicit StableTensor(AtenTensorHandle handle, HandleOwner owner = {});

  // Gives up ownership (a kernel's result goes to the dispatcher).
  AtenTensorHandle release() { return owner_.release(); }

  AtenTensorHandle handle() const { return handle_; }
  bool defined() const { return defined_; }
  std::int32_t dtype_code() const { return dtype_code_; }
  std::int32_t device_type() const { return device_type_; }
  std::int32_t device_index() const { return device_index_; }
  bool is_cuda() const;
  bool is_cpu() const;
  vecadd::Operand operand() const { return {ndim_, sizes_, strides_}; }
  std::int64_t numel() const;

 private:
  HandleOwner owner_;  // first member: released even if reading the metadata throws
  AtenTensorHandle handle_ = nullptr;
  bool defined_ = false;
  std::int32_t dtype_code_ = 0;
  std::int32_t device_type_ = 0;
  std::int32_t device_index_ = 0;
  int ndim_ = 0;
  const std::int64_t* sizes_ = nullptr;
  const std::int64_t* strides_ = nullptr;
};

struct StableApi {
  using Tensor = StableTensor;

  // A CPU or Meta tensor needs no guard, nor a CUDA one on the current device (the common
  // call, spared creating a guard); another CUDA one makes its device current.
  class DeviceGuard {
   public:
    explicit DeviceGuard(const Tensor& t);

   private:
    std::optional<torch::stable::accelerator::DeviceGuard> guard_;
  };

  static bool defined(const Tensor& t) { return t.defined(); }
  // From the shim's code, which is the enumerator's value: the stable ABI's own conversion
  // throws for the dtypes it does not convert (int1, bits8, ...), which deserve our words.
  static torch::headeronly::ScalarType dtype(const Tensor& t) {
    return static_cast<torch::headeronly::ScalarType>(t.dtype_code());
  }
  static bool same_device(const Tensor& a, const Tensor& b) {
    return a.device_type() == b.device_type() && a.device_index() == b.device_index();
  }
  static std::string device_name(const Tensor& t);
  static int device_index(const Tensor& t) { return t.device_index(); }
  static bool is_cuda(const Tensor& t) { return t.is_cuda(); }
  static bool is_cpu(const Tensor& t) { return t.is_cpu(); }
  static vecadd::Operand operand(const Tensor& t) { return t.operand(); }
  static std::int64_t numel(const Tensor& t) { return t.numel(); }
  static std::size_t element_size(const Tensor& t);
  static const void* data(const Tensor& t);
  static void* mutable_data(const Tensor& t);

  // A new dense row-major tensor of `shape`'s sizes on `like`'s device, of `dtype`.
  static Tensor empty(const vecadd::Operand& shape, const Tensor& like,
                      torch::headeronly::ScalarType dtype);

  // Through the C shim, which takes strides (the stable ops offer only contiguous empty): on
  // `like`'s device, of `dtype`.
  static Tensor empty_strided(const std::vector<std::int64_t>& sizes,
                              const std::vector<std::int64_t>& strides, const Tensor& like,
                              torch::headeronly::ScalarType dtype);

  // The library's CPU ranges on torch's intra-op threads.
  static vecadd::ParallelFor parallel_for();

#if VECADD_WITH_CUDA
  static cudaStream_t cuda_stream(const Tensor& t);
#endif

  // A new tensor of `ndim` sizes and strides through the C shim.
  static Tensor allocate(int ndim, const std::int64_t* sizes, const std::int64_t* strides,
                         const Tensor& like, torch::headeronly::ScalarType dtype);

  // The stable ABI carries only the message across (every error arrives as RuntimeError);
  // the kind travels as its first word, which vecadd's Python face turns back into the
  // exception type (vecadd/_ops.py).
  [[noreturn]] static void fail(binding::ErrorKind kind, const std::string& message);
};

}  // namespace vecadd::stable_binding
