// How the shared call rules (src/binding/call_rules.h) read a torch::stable::Tensor and raise
// an error, through the LibTorch stable ABI alone (the C shims of torch 2.10 and the
// header-only torch/headeronly and torch/csrc/stable headers).
#pragma once

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "call_rules.h"
#include "vecadd/plan.h"

namespace vecadd::stable_binding {

struct StableApi {
  using Tensor = torch::stable::Tensor;

  // A CPU or Meta tensor needs no guard; a CUDA one makes its device current.
  class DeviceGuard {
   public:
    explicit DeviceGuard(const Tensor& t) {
      if (t.is_cuda()) {
        guard_.emplace(t.get_device_index());
      }
    }

   private:
    std::optional<torch::stable::accelerator::DeviceGuard> guard_;
  };

  static bool defined(const Tensor& t) { return t.defined(); }
  // From the shim's code, which is the enumerator's value: Tensor::scalar_type() throws for
  // the dtypes the stable ABI does not convert (int1, bits8, ...), which deserve our words.
  static torch::headeronly::ScalarType dtype(const Tensor& t);
  static bool same_device(const Tensor& a, const Tensor& b) { return a.device() == b.device(); }
  static std::string device_name(const Tensor& t);
  static int device_index(const Tensor& t) { return t.get_device_index(); }
  static bool is_cuda(const Tensor& t) { return t.is_cuda(); }
  static vecadd::Operand operand(const Tensor& t) {
    const auto sizes = t.sizes();
    return {static_cast<int>(sizes.size()), sizes.data(), t.strides().data()};
  }
  static std::int64_t numel(const Tensor& t) { return t.numel(); }
  static std::size_t element_size(const Tensor& t) { return t.element_size(); }
  static const void* data(const Tensor& t) { return t.const_data_ptr(); }
  static void* mutable_data(const Tensor& t) { return t.mutable_data_ptr(); }

  // Through the C shim, which takes strides (the stable ops offer only contiguous empty).
  static Tensor empty_strided(const std::vector<std::int64_t>& sizes,
                              const std::vector<std::int64_t>& strides, const Tensor& like);

  // The library's CPU ranges on torch's intra-op threads.
  static vecadd::ParallelFor parallel_for();

#if VECADD_WITH_CUDA
  static cudaStream_t cuda_stream(const Tensor& t);
#endif

  // The stable ABI carries only the message across (every error arrives as RuntimeError);
  // the kind travels as its first word, which vecadd's Python face turns back into the
  // exception type (vecadd/_ops.py).
  [[noreturn]] static void fail(binding::ErrorKind kind, const std::string& message);
};

}  // namespace vecadd::stable_binding
