// The torch binding: the one place where tensors become pointers. Checks the inputs,
// picks the element type once, and hands raw arrays to the kernel library.
#include "ops.h"

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/SymInt.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "vecadd/vecadd.h"

#if VECADD_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace vecadd::torch_binding {
namespace {

constexpr const char* kOp = "vecadd.add()";
constexpr std::int64_t kCpuGrainSize = 32768;

// ---------------------------------------------------------------- names in messages

std::string dtype_name(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf:
      return "torch.float16";
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kFloat:
      return "torch.float32";
    case at::kDouble:
      return "torch.float64";
    case at::kInt:
      return "torch.int32";
    case at::kLong:
      return "torch.int64";
    case at::kBool:
      return "torch.bool";
    case at::kByte:
      return "torch.uint8";
    case at::kChar:
      return "torch.int8";
    case at::kShort:
      return "torch.int16";
    case at::kComplexFloat:
      return "torch.complex64";
    case at::kComplexDouble:
      return "torch.complex128";
    default:
      return std::string("torch.") + c10::toString(dtype);
  }
}

constexpr const char* kSupportedDtypes =
    "torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32 or torch.int64";

// Numbers in messages are formatted without iostreams: some toolchains (seen with a GCC
// 13 build under torch 2.11) crash inserting integers into a stream from an extension.
std::string number_text(std::int64_t value) {
  return std::to_string(value);
}

std::string number_text(const c10::SymInt& value) {
  if (const auto known = value.maybe_as_int()) {
    return std::to_string(*known);
  }
  return value.toSymNodeImplUnowned()->str();
}

std::string scalar_text(const c10::Scalar& value) {
  if (value.isFloatingPoint()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value.toDouble());
    return text;
  }
  if (value.isBoolean()) {
    return value.toBool() ? "True" : "False";
  }
  if (value.isIntegral(/*includeBool=*/false)) {
    return std::to_string(value.toLong());
  }
  return "a complex number";
}

template <class Int>
std::string shape_text(c10::ArrayRef<Int> sizes) {
  std::string text = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    text += (i == 0 ? "" : ", ") + number_text(sizes[i]);
  }
  return text + "]";
}

// ---------------------------------------------------------------- one dtype dispatch

template <class T>
struct ElementTag {
  using type = T;
};

// Calls fn(ElementTag<T>{}) with T the kernel library's type for `dtype`.
template <class Fn>
decltype(auto) dispatch_element_type(at::ScalarType dtype, Fn&& fn) {
  switch (dtype) {
    case at::kHalf:
      return fn(ElementTag<vecadd::float16>{});
    case at::kBFloat16:
      return fn(ElementTag<vecadd::bfloat16>{});
    case at::kFloat:
      return fn(ElementTag<float>{});
    case at::kDouble:
      return fn(ElementTag<double>{});
    case at::kInt:
      return fn(ElementTag<std::int32_t>{});
    case at::kLong:
      return fn(ElementTag<std::int64_t>{});
    default:
      TORCH_CHECK_TYPE(false, kOp, ": dtype ", dtype_name(dtype), " is not supported; expected ",
                       kSupportedDtypes);
  }
}

bool is_supported_dtype(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
    case at::kDouble:
    case at::kInt:
    case at::kLong:
      return true;
    default:
      return false;
  }
}

// alpha converted to the element type; the 16-bit types go through torch's own rounding.
template <class T>
T alpha_as(const c10::Scalar& alpha) {
  if constexpr (std::is_same_v<T, vecadd::float16> || std::is_same_v<T, vecadd::bfloat16>) {
    using TorchHalf =
        std::conditional_t<std::is_same_v<T, vecadd::float16>, at::Half, at::BFloat16>;
    const TorchHalf rounded(alpha.to<float>());
    T value;
    static_assert(sizeof value == sizeof rounded);
    std::memcpy(&value, &rounded, sizeof value);
    return value;
  } else {
    return alpha.to<T>();
  }
}

// ---------------------------------------------------------------- checks

template <class Int>
c10::ArrayRef<Int> sizes_of(const at::Tensor& t) {
  if constexpr (std::is_same_v<Int, c10::SymInt>) {
    return t.sym_sizes();
  } else {
    return t.sizes();
  }
}

template <class Int>
c10::ArrayRef<Int> strides_of(const at::Tensor& t) {
  if constexpr (std::is_same_v<Int, c10::SymInt>) {
    return t.sym_strides();
  } else {
    return t.strides();
  }
}

void check_inputs(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha) {
  TORCH_CHECK_TYPE(x.defined(), kOp, ": argument 'x' is an undefined tensor; expected a tensor");
  TORCH_CHECK_TYPE(y.defined(), kOp, ": argument 'y' is an undefined tensor; expected a tensor");
  TORCH_CHECK_TYPE(is_supported_dtype(x.scalar_type()), kOp, ": argument 'x' has dtype ",
                   dtype_name(x.scalar_type()), ", which vecadd does not support; expected ",
                   kSupportedDtypes);
  TORCH_CHECK_TYPE(is_supported_dtype(y.scalar_type()), kOp, ": argument 'y' has dtype ",
                   dtype_name(y.scalar_type()), ", which vecadd does not support; expected ",
                   kSupportedDtypes);
  TORCH_CHECK_TYPE(x.scalar_type() == y.scalar_type(), kOp, ": x has dtype ",
                   dtype_name(x.scalar_type()), " but y has dtype ", dtype_name(y.scalar_type()),
                   "; expected the same dtype (vecadd does not promote types: convert one, "
                   "e.g. y.to(x.dtype))");
  TORCH_CHECK(x.device() == y.device(), kOp, ": x is on ", x.device().str(), " but y is on ",
              y.device().str(),
              "; expected both on the same device (move one, e.g. y.to(x.device))");
  TORCH_CHECK_TYPE(!alpha.isComplex(), kOp,
                   ": argument 'alpha' is a complex number; expected a real number");
  if (at::isIntegralType(x.scalar_type(), /*includeBool=*/false) && alpha.isFloatingPoint()) {
    const double value = alpha.toDouble();
    TORCH_CHECK_TYPE(std::isfinite(value) && value == std::trunc(value), kOp,
                     ": argument 'alpha' is ", scalar_text(alpha), " but x and y have dtype ",
                     dtype_name(x.scalar_type()),
                     "; expected an integral alpha for integer tensors");
  }
}

// ---- conditions on sizes that torch.compile may not know while tracing ----

// A condition's value, or false when it depends on a size torch.compile cannot know while
// tracing (a data-dependent size), as torch's own shape functions treat it. Older torch
// without guard_or_false decides it outright.
template <class Condition>
auto decide(const Condition& condition, int) -> decltype(condition.guard_or_false("", 0)) {
  return condition.guard_or_false(__FILE__, __LINE__);
}

template <class Condition>
bool decide(const Condition& condition, long) {
  return condition.guard_bool(__FILE__, __LINE__);
}

bool known_equal(std::int64_t a, std::int64_t b) {
  return a == b;
}

bool known_equal(const c10::SymInt& a, const c10::SymInt& b) {
  return decide(a.sym_eq(b), 0);
}

bool known_less(std::int64_t a, std::int64_t b) {
  return a < b;
}

bool known_less(const c10::SymInt& a, const c10::SymInt& b) {
  return decide(a.sym_lt(b), 0);
}

bool is_concrete(std::int64_t /*size*/) {
  return true;
}

bool is_concrete(const c10::SymInt& size) {
  return size.maybe_as_int().has_value();
}

template <class Int>
bool known_equal(c10::ArrayRef<Int> a, c10::ArrayRef<Int> b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!known_equal(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

// Broadcast shape of x and y under torch's rules, with an error that names both.
template <class Int>
std::vector<Int> broadcast_shape(const at::Tensor& x, const at::Tensor& y) {
  const c10::ArrayRef<Int> x_sizes = sizes_of<Int>(x);
  const c10::ArrayRef<Int> y_sizes = sizes_of<Int>(y);
  const std::size_t ndim = std::max(x_sizes.size(), y_sizes.size());
  std::vector<Int> shape(ndim, Int(1));
  for (std::size_t i = 0; i < ndim; ++i) {
    const std::size_t d = ndim - 1 - i;
    const Int x_size = i < x_sizes.size() ? x_sizes[x_sizes.size() - 1 - i] : Int(1);
    const Int y_size = i < y_sizes.size() ? y_sizes[y_sizes.size() - 1 - i] : Int(1);
    if (known_equal(y_size, Int(1)) || known_equal(x_size, y_size)) {
      shape[d] = x_size;
    } else if (known_equal(x_size, Int(1))) {
      shape[d] = y_size;
    } else if (!is_concrete(x_size) || !is_concrete(y_size)) {
      shape[d] = x_size;  // sizes tracing cannot compare: the real kernel checks them
    } else {
      TORCH_CHECK_VALUE(false, kOp, ": x of shape ", shape_text(x_sizes), " and y of shape ",
                        shape_text(y_sizes), " cannot be broadcast together (dimension ",
                        std::to_string(d), " of the result: ", number_text(x_size), " vs ",
                        number_text(y_size),
                        "); expected sizes that are equal or 1 in each trailing dimension");
    }
  }
  return shape;
}

template <class Int>
void check_out(const at::Tensor& out, const at::Tensor& x, const std::vector<Int>& shape) {
  TORCH_CHECK_TYPE(out.defined(), kOp,
                   ": argument 'out' is an undefined tensor; expected a tensor");
  TORCH_CHECK_TYPE(out.scalar_type() == x.scalar_type(), kOp, ": out has dtype ",
                   dtype_name(out.scalar_type()), "; expected ", dtype_name(x.scalar_type()),
                   ", the dtype of x and y");
  TORCH_CHECK(out.device() == x.device(), kOp, ": out is on ", out.device().str(), "; expected ",
              x.device().str(), ", the device of x and y");
  TORCH_CHECK_VALUE(sizes_of<Int>(out) == c10::ArrayRef<Int>(shape), kOp, ": out has shape ",
                    shape_text(sizes_of<Int>(out)), "; expected ",
                    shape_text(c10::ArrayRef<Int>(shape)),
                    ", the broadcast shape of x and y (vecadd does not resize out)");
}

// Whether the byte ranges [first, last) spanned by two tensors' elements intersect.
bool memory_ranges_intersect(const at::Tensor& a, const at::Tensor& b) {
  if (!a.has_storage() || !b.has_storage() || !a.storage().is_alias_of(b.storage())) {
    return false;
  }
  auto span = [](const at::Tensor& t) {
    std::int64_t reach = 0;
    for (std::int64_t d = 0; d < t.dim(); ++d) {
      reach += (t.size(d) - 1) * t.stride(d);
    }
    const auto* first = static_cast<const char*>(t.data_ptr());
    return std::pair{first, first + (reach + 1) * t.element_size()};
  };
  const auto [a_first, a_last] = span(a);
  const auto [b_first, b_last] = span(b);
  return a_first < b_last && b_first < a_last;
}

void check_out_memory(const at::Tensor& out, const at::Tensor& input, const char* name) {
  if (out.numel() == 0 || input.numel() == 0) {
    return;
  }
  const at::MemOverlapStatus status = at::get_overlap_status(out, input);
  if (status == at::MemOverlapStatus::Full || status == at::MemOverlapStatus::No) {
    return;  // the very same view (in-place) is safe: each element is read before written
  }
  TORCH_CHECK(status != at::MemOverlapStatus::Partial && !memory_ranges_intersect(out, input), kOp,
              ": out partly overlaps the memory of '", name,
              "'; expected out to be either that very tensor (in-place) or separate memory "
              "(clone one of them first)");
}

void check_out_aliasing(const at::Tensor& out, const at::Tensor& x, const at::Tensor& y) {
  TORCH_CHECK(at::has_internal_overlap(out) != at::MemOverlap::Yes, kOp,
              ": out has elements that share memory (e.g. an expanded tensor); expected every "
              "element of out to have its own memory");
  check_out_memory(out, x, "x");
  check_out_memory(out, y, "y");
}

// ---------------------------------------------------------------- layouts

// Whether `t` fills its memory densely with its dimensions in `order` (innermost first),
// size-1 dimensions aside; an empty tensor always does.
template <class Int>
bool is_dense_in_order(const at::Tensor& t, c10::ArrayRef<std::size_t> order) {
  const c10::ArrayRef<Int> sizes = sizes_of<Int>(t);
  const c10::ArrayRef<Int> strides = strides_of<Int>(t);
  for (const Int& size : sizes) {
    if (known_equal(size, Int(0))) {
      return true;
    }
  }
  Int expected(1);
  for (const std::size_t d : order) {
    if (known_equal(sizes[d], Int(1))) {
      continue;
    }
    if (!known_equal(strides[d], expected)) {
      return false;
    }
    expected = expected * sizes[d];
  }
  return true;
}

std::vector<std::size_t> row_major_order(std::size_t ndim) {
  std::vector<std::size_t> order(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    order[i] = ndim - 1 - i;
  }
  return order;
}

// `t`'s dimensions by increasing stride (an insertion sort: it needs no strict ordering of
// strides that tracing cannot compare).
template <class Int>
std::vector<std::size_t> order_by_stride(const at::Tensor& t) {
  const c10::ArrayRef<Int> strides = strides_of<Int>(t);
  std::vector<std::size_t> order = row_major_order(strides.size());
  for (std::size_t i = 1; i < order.size(); ++i) {
    for (std::size_t j = i; j > 0 && known_less(strides[order[j]], strides[order[j - 1]]); --j) {
      std::swap(order[j], order[j - 1]);
    }
  }
  return order;
}

// Element strides of `t` seen through the broadcast `shape`: 0 where t's size-1 (or
// missing) dimension is repeated.
template <class Int>
std::vector<Int> broadcast_strides(const at::Tensor& t, c10::ArrayRef<Int> shape) {
  const c10::ArrayRef<Int> sizes = sizes_of<Int>(t);
  const c10::ArrayRef<Int> strides = strides_of<Int>(t);
  std::vector<Int> result(shape.size(), Int(0));
  const std::size_t offset = shape.size() - sizes.size();
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const bool repeated = known_equal(sizes[d], Int(1)) && !known_equal(shape[offset + d], Int(1));
    result[offset + d] = repeated ? Int(0) : strides[d];
  }
  return result;
}

// The result's dimensions from innermost to outermost, in the order torch.add gives its
// output: sorted by the strides of x, then of y where x cannot tell (a repeated
// dimension), equal strides settled by size; row-major where neither input decides.
template <class Int>
std::vector<std::size_t> result_dimension_order(c10::ArrayRef<Int> shape,
                                                const std::vector<Int>& x_strides,
                                                const std::vector<Int>& y_strides) {
  std::vector<std::size_t> order = row_major_order(shape.size());
  // 1 if dimension a belongs outside b, -1 if inside, 0 if no input decides.
  const auto compare = [&](std::size_t a, std::size_t b) {
    for (const std::vector<Int>* strides : {&x_strides, &y_strides}) {
      const Int& stride_a = (*strides)[a];
      const Int& stride_b = (*strides)[b];
      if (known_equal(stride_a, Int(0)) || known_equal(stride_b, Int(0))) {
        continue;
      }
      if (known_less(stride_a, stride_b)) {
        return -1;
      }
      if (known_less(stride_b, stride_a) || known_less(shape[b], shape[a])) {
        return 1;
      }
    }
    return 0;
  };
  // Insertion sort that stops at the first decided comparison, so undecided dimensions
  // keep their row-major places.
  for (std::size_t i = 1; i < order.size(); ++i) {
    std::size_t moving = i;
    for (std::size_t j = i; j-- > 0;) {
      const int comparison = compare(order[j], order[moving]);
      if (comparison > 0) {
        std::swap(order[j], order[moving]);
        moving = j;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  return order;
}

at::Tensor empty_result(c10::IntArrayRef shape, const at::TensorOptions& options,
                        at::MemoryFormat format) {
  return at::empty(shape, options, format);
}

at::Tensor empty_result(c10::SymIntArrayRef shape, const at::TensorOptions& options,
                        at::MemoryFormat format) {
  return at::empty_symint(shape, options, format);
}

at::Tensor empty_result(c10::IntArrayRef shape, c10::IntArrayRef strides,
                        const at::TensorOptions& options) {
  return at::empty_strided(shape, strides, options);
}

at::Tensor empty_result(c10::SymIntArrayRef shape, c10::SymIntArrayRef strides,
                        const at::TensorOptions& options) {
  return at::empty_strided_symint(shape, strides, options);
}

// The uninitialized result of x + alpha * y, laid out in memory as torch.add lays out
// its result: like its inputs when they agree (channels-last stays channels-last, a
// transposed pair gives a transposed result), else by result_dimension_order.
template <class Int>
at::Tensor allocate_result(const at::Tensor& x, const at::Tensor& y,
                           const std::vector<Int>& shape) {
  const c10::ArrayRef<Int> shape_ref(shape);
  const at::TensorOptions options = x.options();
  const std::vector<std::size_t> row_major = row_major_order(shape.size());
  if (known_equal(sizes_of<Int>(x), shape_ref) && known_equal(sizes_of<Int>(y), shape_ref)) {
    if (is_dense_in_order<Int>(x, row_major) && is_dense_in_order<Int>(y, row_major)) {
      return empty_result(shape_ref, options, at::MemoryFormat::Contiguous);
    }
    static constexpr std::size_t kChannelsLast[] = {1, 3, 2, 0};  // C innermost, then W, H, N
    if (shape.size() == 4 && is_dense_in_order<Int>(x, kChannelsLast) &&
        is_dense_in_order<Int>(y, kChannelsLast)) {
      return empty_result(shape_ref, options, at::MemoryFormat::ChannelsLast);
    }
    if (known_equal(strides_of<Int>(x), strides_of<Int>(y)) &&
        is_dense_in_order<Int>(x, order_by_stride<Int>(x))) {
      return empty_result(shape_ref, strides_of<Int>(x), options);
    }
  }
  const std::vector<std::size_t> order = result_dimension_order<Int>(
      shape_ref, broadcast_strides<Int>(x, shape_ref), broadcast_strides<Int>(y, shape_ref));
  if (order == row_major) {
    return empty_result(shape_ref, options, at::MemoryFormat::Contiguous);
  }
  std::vector<Int> strides(shape.size(), Int(0));
  Int next(1);
  for (const std::size_t d : order) {
    strides[d] = next;
    next = next * shape[d];
  }
  return empty_result(shape_ref, c10::ArrayRef<Int>(strides), options);
}

// Whether `t` has the sizes of `dense` and its strides wherever the size is above 1, so
// that both put each element at the same offset.
bool has_layout_of(const at::Tensor& t, const at::Tensor& dense) {
  if (t.sizes() != dense.sizes()) {
    return false;
  }
  for (std::int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && t.stride(d) != dense.stride(d)) {
      return false;
    }
  }
  return true;
}

// Shape and strides of the call with size-1 dimensions dropped, the rest ordered by out's
// strides (out's innermost dimension last), and adjacent dimensions merged wherever all
// three tensors allow; false if more than kMaxDims remain.
bool make_strided_layout(const at::Tensor& x, const at::Tensor& y, const at::Tensor& out,
                         vecadd::StridedLayout& layout) {
  const c10::IntArrayRef shape = out.sizes();
  const std::vector<std::int64_t> x_strides = broadcast_strides<std::int64_t>(x, shape);
  const std::vector<std::int64_t> y_strides = broadcast_strides<std::int64_t>(y, shape);
  const c10::IntArrayRef z_strides = out.strides();
  std::vector<std::size_t> dims;  // outermost first
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) {
      dims.push_back(d);
    }
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [&](std::size_t a, std::size_t b) { return z_strides[a] > z_strides[b]; });
  // Built innermost first, then reversed.
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> xs;
  std::vector<std::int64_t> ys;
  std::vector<std::int64_t> zs;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    const std::size_t d = *it;
    if (!sizes.empty()) {
      const std::int64_t inner = sizes.back();
      const bool mergeable = x_strides[d] == xs.back() * inner &&
                             y_strides[d] == ys.back() * inner && z_strides[d] == zs.back() * inner;
      if (mergeable) {
        sizes.back() *= shape[d];
        continue;
      }
    }
    sizes.push_back(shape[d]);
    xs.push_back(x_strides[d]);
    ys.push_back(y_strides[d]);
    zs.push_back(z_strides[d]);
  }
  if (sizes.size() > static_cast<std::size_t>(vecadd::kMaxDims)) {
    return false;
  }
  layout.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < layout.ndim; ++d) {
    const std::size_t from = sizes.size() - 1 - d;
    layout.sizes[d] = sizes[from];
    layout.x_strides[d] = xs[from];
    layout.y_strides[d] = ys[from];
    layout.z_strides[d] = zs[from];
  }
  return true;
}

// ---------------------------------------------------------------- running the kernels

#if VECADD_WITH_CUDA
cudaStream_t current_stream(const at::Device& device) {
  return c10::cuda::getCurrentCUDAStream(device.index()).stream();
}

[[noreturn]] void fail_no_kernel_image(cudaError_t status, const at::Device& device) {
  cudaDeviceProp properties{};
  const bool known = cudaGetDeviceProperties(&properties, device.index()) == cudaSuccess;
  const std::string gpu = known ? properties.name : "unknown GPU";
  const std::string capability =
      known ? std::to_string(properties.major) + "." + std::to_string(properties.minor) : "?";
  const std::string arch =
      known ? std::to_string(properties.major * 10 + properties.minor) : "<arch>";
  TORCH_CHECK(false, kOp, ": this build of vecadd holds no CUDA code that can run on ",
              device.str(), " (", gpu, ", compute capability ", capability,
              "): it was compiled for CUDA "
              "architectures '",
              VECADD_CUDA_ARCHITECTURES,
              "' (vecadd.build_info()['cuda_archs'] "
              "lists them) and the driver reports: ",
              cudaGetErrorString(status),
              ". Rebuild vecadd for this GPU from its source, e.g.\n  pip install "
              "--no-build-isolation --force-reinstall -C cmake.define.CMAKE_CUDA_ARCHITECTURES=",
              arch, " .");
}

void check_launch(cudaError_t status, const at::Device& device) {
  if (status == cudaSuccess) {
    return;
  }
  if (status == cudaErrorNoKernelImageForDevice || status == cudaErrorInvalidDeviceFunction ||
      status == cudaErrorUnsupportedPtxVersion) {
    fail_no_kernel_image(status, device);
  }
  TORCH_CHECK(false, kOp, ": launching the CUDA kernel on ", device.str(),
              " failed: ", cudaGetErrorString(status));
}
#endif

template <class T>
void run_contiguous(const T* x, const T* y, T* z, std::int64_t n, T alpha,
                    const at::Device& device) {
#if VECADD_WITH_CUDA
  if (device.is_cuda()) {
    check_launch(vecadd::add_cuda<T>(x, y, z, n, alpha, current_stream(device)), device);
    return;
  }
#endif
  at::parallel_for(0, n, kCpuGrainSize, [&](std::int64_t begin, std::int64_t end) {
    vecadd::add_cpu<T>(x + begin, y + begin, z + begin, end - begin, alpha);
  });
}

template <class T>
void run_strided(const T* x, const T* y, T* z, const vecadd::StridedLayout& layout, T alpha,
                 const at::Device& device) {
#if VECADD_WITH_CUDA
  if (device.is_cuda()) {
    check_launch(vecadd::add_strided_cuda<T>(x, y, z, layout, alpha, current_stream(device)),
                 device);
    return;
  }
#endif
  if (layout.ndim == 0) {
    vecadd::add_strided_cpu<T>(x, y, z, layout, alpha);
    return;
  }
  // Threads split the outermost dimension into slabs of whole rows. When it is too short to
  // keep every thread busy, they split the outer two dimensions together instead; a thread's
  // range then runs as one slab per index of the outermost dimension it touches.
  const bool split_two = layout.ndim >= 2 && layout.sizes[0] < 4 * at::get_num_threads();
  const std::int64_t second = split_two ? layout.sizes[1] : 1;
  const std::int64_t units = layout.sizes[0] * second;
  const std::int64_t grain =
      std::max<std::int64_t>(1, kCpuGrainSize / (vecadd::element_count(layout) / units));
  at::parallel_for(0, units, grain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t unit = begin; unit < end;) {
      const std::int64_t outer = unit / second;
      const std::int64_t inner = unit % second;
      const std::int64_t take = split_two ? std::min(end - unit, second - inner) : end - unit;
      vecadd::StridedLayout slab = layout;
      std::int64_t x_start = outer * layout.x_strides[0];
      std::int64_t y_start = outer * layout.y_strides[0];
      std::int64_t z_start = outer * layout.z_strides[0];
      if (split_two) {  // drop the outermost dimension: the slab is part of one index of it
        slab.ndim = layout.ndim - 1;
        for (int d = 0; d < slab.ndim; ++d) {
          slab.sizes[d] = layout.sizes[d + 1];
          slab.x_strides[d] = layout.x_strides[d + 1];
          slab.y_strides[d] = layout.y_strides[d + 1];
          slab.z_strides[d] = layout.z_strides[d + 1];
        }
        x_start += inner * layout.x_strides[1];
        y_start += inner * layout.y_strides[1];
        z_start += inner * layout.z_strides[1];
      }
      slab.sizes[0] = take;
      vecadd::add_strided_cpu<T>(x + x_start, y + y_start, z + z_start, slab, alpha);
      unit += take;
    }
  });
}

template <class T>
const T* pointer_to(const at::Tensor& t) {
  return static_cast<const T*>(t.data_ptr());
}

template <class T>
T* mutable_pointer_to(const at::Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

// Writes x + alpha * y into `out`, already checked to have the broadcast shape.
void compute_into(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                  const at::Tensor& out) {
  if (out.numel() == 0) {
    return;
  }
  const c10::DeviceGuard device_guard(out.device());
  const at::Device device = out.device();
  // One dense layout shared by all three (contiguous, channels-last, transposed...): a flat
  // array of numel elements in memory order.
  const bool contiguous =
      out.is_non_overlapping_and_dense() && has_layout_of(x, out) && has_layout_of(y, out);
  dispatch_element_type(out.scalar_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T scale = alpha_as<T>(alpha);
    if (contiguous) {
      run_contiguous<T>(pointer_to<T>(x), pointer_to<T>(y), mutable_pointer_to<T>(out), out.numel(),
                        scale, device);
      return;
    }
    vecadd::StridedLayout layout;
    if (make_strided_layout(x, y, out, layout)) {
      run_strided<T>(pointer_to<T>(x), pointer_to<T>(y), mutable_pointer_to<T>(out), layout, scale,
                     device);
      return;
    }
    // More than kMaxDims dimensions survive merging: compute on dense copies instead.
    const at::Tensor dense_x = x.expand(out.sizes()).contiguous();
    const at::Tensor dense_y = y.expand(out.sizes()).contiguous();
    const at::Tensor dense_out = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
    run_contiguous<T>(pointer_to<T>(dense_x), pointer_to<T>(dense_y),
                      mutable_pointer_to<T>(dense_out), out.numel(), scale, device);
    if (!dense_out.is_same(out)) {
      out.copy_(dense_out);
    }
  });
}

// ---------------------------------------------------------------- CPU and CUDA kernels

at::Tensor add_kernel(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha) {
  check_inputs(x, y, alpha);
  at::Tensor out = allocate_result(x, y, broadcast_shape<std::int64_t>(x, y));
  compute_into(x, y, alpha, out);
  return out;
}

void add_out_kernel(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                    at::Tensor& out) {
  check_inputs(x, y, alpha);
  check_out(out, x, broadcast_shape<std::int64_t>(x, y));
  check_out_aliasing(out, x, y);
  compute_into(x, y, alpha, out);
}

// ---------------------------------------------------------------- Meta (shapes only)

at::Tensor add_meta(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha) {
  check_inputs(x, y, alpha);
  return allocate_result(x, y, broadcast_shape<c10::SymInt>(x, y));
}

void add_out_meta(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                  at::Tensor& out) {
  check_inputs(x, y, alpha);
  check_out(out, x, broadcast_shape<c10::SymInt>(x, y));
}

// ---------------------------------------------------------------- autograd

// Backward of z = x + alpha * y: dz/dx = 1 and dz/dy = alpha, summed back over broadcast
// dimensions. Built from torch ops, so the backward is itself differentiable.
struct AddBackward final : public torch::autograd::Node {
  c10::Scalar alpha;
  std::vector<c10::SymInt> x_sizes;
  std::vector<c10::SymInt> y_sizes;

  std::string name() const override { return "vecadd::AddBackward"; }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    torch::autograd::variable_list result(2);
    const at::Tensor& grad = grads[0];
    if (!grad.defined()) {
      return result;
    }
    if (should_compute_output(0)) {
      result[0] = at::sum_to(grad, x_sizes);
    }
    if (should_compute_output(1)) {
      const bool unit_alpha = alpha.isIntegral(/*includeBool=*/true) && alpha.toLong() == 1;
      result[1] = at::sum_to(unit_alpha ? grad : grad.mul(alpha), y_sizes);
    }
    return result;
  }
};

// torch moved autograd nodes from std::shared_ptr to c10::intrusive_ptr; follow the edge type.
using NodePointer = decltype(torch::autograd::Edge::function);
constexpr bool kIntrusiveNodes =
    !std::is_same_v<NodePointer, std::shared_ptr<torch::autograd::Node>>;

template <class NodeType>
auto make_node() {
  if constexpr (kIntrusiveNodes) {
    return c10::make_intrusive<NodeType>();
  } else {
    return std::make_shared<NodeType>();
  }
}

at::Tensor add_autograd(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha) {
  const bool needs_grad = torch::autograd::compute_requires_grad(x, y);
  at::Tensor result;
  {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    result = add_operator().call(x, y, alpha);
  }
  if (needs_grad) {
    const auto node = make_node<AddBackward>();
    node->set_next_edges(torch::autograd::collect_next_edges(x, y));
    node->alpha = alpha;
    node->x_sizes = x.sym_sizes().vec();
    node->y_sizes = y.sym_sizes().vec();
    torch::autograd::set_history(result, node);
  }
  return result;
}

void add_out_autograd(const at::Tensor& x, const at::Tensor& y, const c10::Scalar& alpha,
                      at::Tensor& out) {
  TORCH_CHECK(!(at::GradMode::is_enabled() &&
                (x.requires_grad() || y.requires_grad() || out.requires_grad())),
              kOp,
              ": out= cannot be used when x, y or out requires grad (autograd does not "
              "flow through out=); expected no out= (call vecadd.add(x, y)) or a call inside "
              "torch.no_grad()");
  {
    const at::AutoDispatchBelowADInplaceOrView below_autograd;
    add_out_operator().call(x, y, alpha, out);
  }
  torch::autograd::impl::bump_version(out);
}

}  // namespace

const c10::TypedOperatorHandle<AddSignature>& add_operator() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("vecadd::add", "").typed<AddSignature>();
  return handle;
}

const c10::TypedOperatorHandle<AddOutSignature>& add_out_operator() {
  static const auto handle =
      c10::Dispatcher::singleton().findSchemaOrThrow("vecadd::add", "out").typed<AddOutSignature>();
  return handle;
}

TORCH_LIBRARY(vecadd, m) {
  m.def("add(Tensor x, Tensor y, *, Scalar alpha=1) -> Tensor", {at::Tag::pt2_compliant_tag});
  m.def("add.out(Tensor x, Tensor y, *, Scalar alpha=1, Tensor(a!) out) -> ()",
        {at::Tag::pt2_compliant_tag});
}

TORCH_LIBRARY_IMPL(vecadd, CPU, m) {
  m.impl("add", &add_kernel);
  m.impl("add.out", &add_out_kernel);
}

#if VECADD_WITH_CUDA
TORCH_LIBRARY_IMPL(vecadd, CUDA, m) {
  m.impl("add", &add_kernel);
  m.impl("add.out", &add_out_kernel);
}
#endif

TORCH_LIBRARY_IMPL(vecadd, Meta, m) {
  m.impl("add", &add_meta);
  m.impl("add.out", &add_out_meta);
}

TORCH_LIBRARY_IMPL(vecadd, Autograd, m) {
  m.impl("add", &add_autograd);
  m.impl("add.out", &add_out_autograd);
}

}  // namespace vecadd::torch_binding
