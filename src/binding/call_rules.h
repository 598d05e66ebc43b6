// The rules every vecadd.add call obeys, whichever torch API a binding is written against:
// the checks, their order and their words, the result's shape and layout, and the one
// dispatch from a dtype to the kernel library's element type. A binding supplies `Api`, a
// struct of static functions that read its tensors and raise its errors (see
// src/torch/native_api.h and src/stable/stable_api.h); nothing here includes torch.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "vecadd/plan.h"
#include "vecadd/result_layout.h"
#include "vecadd/vecadd.h"
#if VECADD_WITH_CUDA
#include "vecadd/cuda.h"
#endif

namespace vecadd::binding {

// Every message starts with the call it is about.
inline constexpr const char* kOp = "vecadd.add()";

// The Python exception a failed rule becomes.
enum class ErrorKind { kType, kValue, kRuntime };

// "%.17g" without iostreams (some toolchains crash inserting numbers into a stream from an
// extension); whole numbers print without a fraction, as Python prints an int.
std::string number_text(double value);

// The torch dtype enumerator of each library element type. `DType` is torch's ScalarType,
// whose enumerators the native and stable headers share.
template <class DType, class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, vecadd::float16>) {
    return DType::Half;
  } else if constexpr (std::is_same_v<T, vecadd::bfloat16>) {
    return DType::BFloat16;
  } else if constexpr (std::is_same_v<T, float>) {
    return DType::Float;
  } else if constexpr (std::is_same_v<T, double>) {
    return DType::Double;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return DType::Int;
  } else {
    static_assert(std::is_same_v<T, std::int64_t>, "an element type without a torch dtype");
    return DType::Long;
  }
}

template <class T>
struct ElementTag {
  using type = T;
};

// Calls fn(ElementTag<T>{}) with T the library's element type for `dtype`; false (and no
// call) for a dtype the library lacks.
template <class DType, class Fn>
bool visit_element_type(DType dtype, Fn&& fn) {
#define VECADD_VISIT_CASE(T)           \
  if (dtype == dtype_of<DType, T>()) { \
    fn(ElementTag<T>{});               \
    return true;                       \
  }
  VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_VISIT_CASE)
#undef VECADD_VISIT_CASE
  return false;
}

template <class DType>
bool is_supported_dtype(DType dtype) {
  return visit_element_type(dtype, [](auto) {});
}

// "torch.float16": a dtype as Python spells it (torch's own toString, found by argument-
// dependent lookup, for the rare ones).
template <class DType>
std::string dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Half:
      return "torch.float16";
    case DType::BFloat16:
      return "torch.bfloat16";
    case DType::Float:
      return "torch.float32";
    case DType::Double:
      return "torch.float64";
    case DType::Int:
      return "torch.int32";
    case DType::Long:
      return "torch.int64";
    case DType::Bool:
      return "torch.bool";
    case DType::Byte:
      return "torch.uint8";
    case DType::Char:
      return "torch.int8";
    case DType::Short:
      return "torch.int16";
    case DType::ComplexFloat:
      return "torch.complex64";
    case DType::ComplexDouble:
      return "torch.complex128";
    default:
      return std::string("torch.") + toString(dtype);
  }
}

// "torch.float16, ..., torch.int32 or torch.int64": the library's element types, in order.
template <class DType>
const std::string& supported_dtypes_text() {
  static const std::string text = [] {
    std::vector<std::string> names;
#define VECADD_NAME_CASE(T) names.push_back(dtype_name(dtype_of<DType, T>()));
    VECADD_FOR_EACH_ELEMENT_TYPE(VECADD_NAME_CASE)
#undef VECADD_NAME_CASE
    std::string joined;
    for (std::size_t i = 0; i < names.size(); ++i) {
      joined += (i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + names[i];
    }
    return joined;
  }();
  return text;
}

// A failed rule: what Python exception it becomes, and its words (empty: no failure).
struct Problem {
  ErrorKind kind = ErrorKind::kValue;
  std::string message;
};

// alpha for element type T, which the kernels take as alpha_t<T>: integral (and in range)
// for integers, within float32's range for the types that compute in float32. `dtype()`
// names the tensors' dtype; it is called only to word a failure.
template <class T, class DTypeName>
Problem alpha_problem(double alpha, const DTypeName& dtype) {
  const auto given = [&] {
    return std::string(kOp) + ": argument 'alpha' is " + number_text(alpha);
  };
  if constexpr (std::is_integral_v<T>) {
    if (!std::isfinite(alpha) || alpha != std::trunc(alpha)) {
      return {ErrorKind::kType, given() + " but x and y have dtype " + dtype() +
                                    "; expected an integral alpha for integer tensors"};
    }
    const auto lowest = std::numeric_limits<T>::min();
    const auto highest = std::numeric_limits<T>::max();
    // -lowest is 2^31 or 2^63, exact as a double; the largest T may not be.
    if (alpha < static_cast<double>(lowest) || alpha >= -static_cast<double>(lowest)) {
      return {ErrorKind::kValue, given() + " but x and y have dtype " + dtype() +
                                     "; expected an integer from " + std::to_string(lowest) +
                                     " to " + std::to_string(highest)};
    }
  } else if constexpr (std::is_same_v<vecadd::alpha_t<T>, float>) {
    const double largest = std::numeric_limits<float>::max();
    if (std::isfinite(alpha) && std::abs(alpha) > largest) {
      return {ErrorKind::kValue,
              given() + ", which " + dtype() +
                  " tensors cannot use: they compute in float32, so expected a magnitude of "
                  "at most " +
                  number_text(largest) + " (or inf or nan)"};
    }
  }
  return {};
}

// Whether two arrays' byte ranges [first, last) intersect.
bool byte_ranges_intersect(const void* a, const Operand& a_shape, const void* b,
                           const Operand& b_shape, std::size_t element_size);

// Whether some element of an array shares memory with another (a repeated dimension).
bool has_repeated_elements(const Operand& shape);

// The checks of one call, in one order, for a binding's tensors.
template <class Api>
struct CallRules {
  using Tensor = typename Api::Tensor;

  static void check_defined(const Tensor& t, const char* name) {
    if (!Api::defined(t)) {
      Api::fail(ErrorKind::kType, std::string(kOp) + ": argument '" + name +
                                      "' is an undefined tensor; expected a tensor");
    }
  }

  static void check_supported(const Tensor& t, const char* name) {
    if (!is_supported_dtype(Api::dtype(t))) {
      Api::fail(ErrorKind::kType, std::string(kOp) + ": argument '" + name + "' has dtype " +
                                      dtype_name(Api::dtype(t)) +
                                      ", which vecadd does not support; expected " +
                                      supported_dtypes_text<decltype(Api::dtype(t))>());
    }
  }

  // x and y: defined, a supported dtype, the same dtype and device; alpha: one the kernels'
  // compute type holds, and integral for integer tensors.
  static void check_inputs(const Tensor& x, const Tensor& y, double alpha) {
    check_defined(x, "x");
    check_defined(y, "y");
    check_supported(x, "x");
    check_supported(y, "y");
    if (Api::dtype(x) != Api::dtype(y)) {
      Api::fail(ErrorKind::kType,
                std::string(kOp) + ": x has dtype " + dtype_name(Api::dtype(x)) +
                    " but y has dtype " + dtype_name(Api::dtype(y)) +
                    "; expected the same dtype (vecadd does not promote types: convert one, "
                    "e.g. y.to(x.dtype))");
    }
    if (!Api::same_device(x, y)) {
      Api::fail(ErrorKind::kRuntime,
                std::string(kOp) + ": x is on " + Api::device_name(x) + " but y is on " +
                    Api::device_name(y) +
                    "; expected both on the same device (move one, e.g. y.to(x.device))");
    }
    visit_element_type(Api::dtype(x), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const Problem problem = alpha_problem<T>(alpha, [&] { return dtype_name(Api::dtype(x)); });
      if (!problem.message.empty()) {
        Api::fail(problem.kind, problem.message);
      }
    });
  }

  // out: defined, with the dtype and device of x, the broadcast shape, its own memory for
  // each element, and x and y either out itself or apart from it.
  static void check_out(const Tensor& out, const Tensor& x, const Tensor& y,
                        const std::vector<std::int64_t>& shape) {
    check_defined(out, "out");
    if (Api::dtype(out) != Api::dtype(x)) {
      Api::fail(ErrorKind::kType, std::string(kOp) + ": out has dtype " +
                                      dtype_name(Api::dtype(out)) + "; expected " +
                                      dtype_name(Api::dtype(x)) + ", the dtype of x and y");
    }
    if (!Api::same_device(out, x)) {
      Api::fail(ErrorKind::kRuntime, std::string(kOp) + ": out is on " + Api::device_name(out) +
                                         "; expected " + Api::device_name(x) +
                                         ", the device of x and y");
    }
    const Operand out_shape = Api::operand(out);
    if (static_cast<std::size_t>(out_shape.ndim) != shape.size() ||
        !std::equal(shape.begin(), shape.end(), out_shape.sizes)) {
      Api::fail(ErrorKind::kValue,
                std::string(kOp) + ": out has shape " + shape_text(out_shape) + "; expected " +
                    shape_text({static_cast<int>(shape.size()), shape.data(), nullptr}) +
                    ", the broadcast shape of x and y (vecadd does not resize out)");
    }
  }

  static void check_out_memory(const Tensor& out, const Tensor& x, const Tensor& y) {
    if (Api::numel(out) == 0) {
      return;
    }
    if (has_repeated_elements(Api::operand(out))) {
      Api::fail(ErrorKind::kRuntime,
                std::string(kOp) +
                    ": out has elements that share memory (e.g. an expanded tensor); expected "
                    "every element of out to have its own memory");
    }
    check_apart(out, x, "x");
    check_apart(out, y, "y");
  }

  static std::vector<std::int64_t> result_shape(const Tensor& x, const Tensor& y) {
    try {
      return vecadd::broadcast_shape(Api::operand(x), Api::operand(y));
    } catch (const std::invalid_argument& error) {
      Api::fail(ErrorKind::kValue,
                std::string(kOp) + ": " +
                    std::string(error.what())
                        .substr(std::char_traits<char>::length(vecadd::kBroadcastErrorPrefix)));
    }
  }

 private:
  static std::string shape_text(const Operand& shape) {
    std::string text = "[";
    for (int d = 0; d < shape.ndim; ++d) {
      text += (d == 0 ? "" : ", ") + std::to_string(shape.sizes[d]);
    }
    return text + "]";
  }

  static void check_apart(const Tensor& out, const Tensor& input, const char* name) {
    const Operand out_shape = Api::operand(out);
    const Operand input_shape = Api::operand(input);
    if (Api::numel(out) == 0 || Api::numel(input) == 0) {
      return;
    }
    const bool same_view =
        Api::data(out) == Api::data(input) && out_shape.ndim == input_shape.ndim &&
        std::equal(out_shape.sizes, out_shape.sizes + out_shape.ndim, input_shape.sizes) &&
        std::equal(out_shape.strides, out_shape.strides + out_shape.ndim, input_shape.strides);
    // The very same view (in-place) is safe: each element is read before it is written.
    if (same_view || !byte_ranges_intersect(Api::data(out), out_shape, Api::data(input),
                                            input_shape, Api::element_size(out))) {
      return;
    }
    Api::fail(ErrorKind::kRuntime,
              std::string(kOp) + ": out partly overlaps the memory of '" + name +
                  "'; expected out to be either that very tensor (in-place) or separate memory "
                  "(clone one of them first)");
  }
};

// What a launch failure means, in words: a missing kernel image names the GPU, the
// architectures built and how to rebuild; anything else says what the driver said.
#if VECADD_WITH_CUDA
Problem launch_problem(cudaError_t status, int device_index, const std::string& device);
#endif

// The operator's kernels, for a binding's tensors: check -> allocate -> plan -> run. (The
// Meta kernels are the Python fake kernels: torch refuses a C++ Meta kernel beside them.)
template <class Api>
struct AddKernels {
  using Tensor = typename Api::Tensor;
  using Rules = CallRules<Api>;

  static Tensor add(const Tensor& x, const Tensor& y, double alpha) {
    Rules::check_inputs(x, y, alpha);
    Tensor out = allocate_result(x, y);
    compute_into(x, y, alpha, out);
    return out;
  }

  static void add_out(const Tensor& x, const Tensor& y, double alpha, const Tensor& out) {
    Rules::check_inputs(x, y, alpha);
    Rules::check_out(out, x, y, Rules::result_shape(x, y));
    Rules::check_out_memory(out, x, y);
    compute_into(x, y, alpha, out);
  }

 private:
  // The uninitialized result, laid out as torch.add lays out its result.
  static Tensor allocate_result(const Tensor& x, const Tensor& y) {
    const std::vector<std::int64_t> shape = Rules::result_shape(x, y);
    const std::vector<std::int64_t> strides =
        vecadd::result_strides(Api::operand(x), Api::operand(y), shape);
    return Api::empty_strided(shape, strides, x);
  }

  static void compute_into(const Tensor& x, const Tensor& y, double alpha, const Tensor& out) {
    if (Api::numel(out) == 0) {
      return;
    }
    const typename Api::DeviceGuard guard(out);
    visit_element_type(Api::dtype(out), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const auto* x_data = static_cast<const T*>(Api::data(x));
      const auto* y_data = static_cast<const T*>(Api::data(y));
      auto* z_data = static_cast<T*>(Api::mutable_data(out));
      const vecadd::Plan plan = vecadd::plan_add(x_data, Api::operand(x), y_data, Api::operand(y),
                                                 z_data, Api::operand(out));
      // check_inputs made sure alpha fits the compute type.
      const auto scale = static_cast<vecadd::alpha_t<T>>(alpha);
#if VECADD_WITH_CUDA
      if (Api::is_cuda(out)) {
        const cudaError_t status =
            vecadd::add_cuda<T>(x_data, y_data, z_data, plan, scale, Api::cuda_stream(out));
        if (status != cudaSuccess) {
          const Problem problem =
              launch_problem(status, Api::device_index(out), Api::device_name(out));
          Api::fail(problem.kind, problem.message);
        }
        return;
      }
#endif
      vecadd::add_cpu<T>(x_data, y_data, z_data, plan, scale, Api::parallel_for());
    });
  }
};

}  // namespace vecadd::binding
