#include "native_api.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>

#include <cstdlib>

namespace vecadd::torch_binding {

at::Tensor NativeApi::empty(const vecadd::Operand& shape, const at::Tensor& like,
                            at::ScalarType dtype) {
  return at::empty(c10::IntArrayRef(shape.sizes, static_cast<std::size_t>(shape.ndim)),
                   like.options().dtype(dtype));
}

at::Tensor NativeApi::empty_strided(const std::vector<std::int64_t>& sizes,
                                    const std::vector<std::int64_t>& strides,
                                    const at::Tensor& like, at::ScalarType dtype) {
  return at::empty_strided(sizes, strides, like.options().dtype(dtype));
}

vecadd::ParallelFor NativeApi::parallel_for() {
  return {at::get_num_threads(),
          [](std::int64_t count, std::int64_t grain, const vecadd::RangeBody& body) {
            at::parallel_for(0, count, grain,
                             [&](std::int64_t begin, std::int64_t end) { body(begin, end); });
          }};
}

void NativeApi::fail(binding::ErrorKind kind, const std::string& message) {
  switch (kind) {
    case binding::ErrorKind::kType:
      TORCH_CHECK_TYPE(false, message);
      break;
    case binding::ErrorKind::kValue:
      TORCH_CHECK_VALUE(false, message);
      break;
    case binding::ErrorKind::kRuntime:
      TORCH_CHECK(false, message);
      break;
  }
  std::abort();  // not reached: each TORCH_CHECK*(false, ...) throws
}

}  // namespace vecadd::torch_binding
