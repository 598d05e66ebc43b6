// The rules every call of a vecadd operator obeys, whichever torch API a binding is written
// against: each operator is a weighted sum of tensors, so one set of rules serves them all (the
// checks, their order and their words, the result's shape, and the one dispatch
// from a dtype to the kernel library's element type), each operator naming its inputs and
// weights in its own words (OperatorWords, from python/vecadd/_operators.py); sum_kernels.h
// runs a call that passes them. A binding supplies `Api`, a struct of static functions that
// read its tensors and raise its errors (see src/torch/native_api.h and
// src/stable/stable_api.h); nothing here includes torch.
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

// The Python exception a failed rule becomes.
enum class ErrorKind { kType, kValue, kRuntime };

// How one input's weight derives from the call's numbers (each record's Weight, through the
// generated vecadd_operators.h): offset + scale * the argument, scale 1 or -1; a constant
// `offset` (1) where no argument weighs the input.
struct WeightRule {
  const char* argument;  // the weighing argument's name, or nullptr for a constant weight
  int number;            // which of the call's float arguments gives it (a list: unused)
  int scale;             // 1 or -1
  long long offset;

  bool derived() const { return argument != nullptr && (scale != 1 || offset != 0); }

  // The weight for floating tensors, in double, as the Python face computes it.
  double of(double given) const {
    if (argument == nullptr) {
      return static_cast<double>(offset);
    }
    return derived() ? static_cast<double>(offset) + scale * given : given;
  }
};

// How an operator names itself, its inputs and its weights in its errors, and how it weighs its
// inputs (each record of python/vecadd/_operators.py gives one, through the generated
// vecadd_operators.h).
struct OperatorWords {
  const char* name;                 // "vecadd::add": the schema's name
  const char* call;                 // "vecadd.add()": every message starts with it
  const char* const* fixed_inputs;  // the inputs' names ("x", "y"), or nullptr: then
  const char* list;                 // the list argument the inputs come in ("tensors")
  const char* all_inputs;           // "x and y", "x, y and z", "the tensors"
  const WeightRule* weights;        // each fixed input's rule, or the list's one rule
  bool weights_listed;              // whether the weights come as a list, one per input
  const char* backward;             // the name of its autograd node ("AddBackward")

  std::string input(int index) const {
    return fixed_inputs ? fixed_inputs[index]
                        : std::string(list) + "[" + std::to_string(index) + "]";
  }

  const WeightRule& rule(int index) const { return weights[weights_listed ? 0 : index]; }

  // The argument that weighs input `index` ("alpha", "weights"), or nullptr for a constant.
  const char* weight_name(int index) const { return rule(index).argument; }

  // The list argument giving one weight per input, or nullptr.
  const char* weights_list() const { return weights_listed ? weights[0].argument : nullptr; }
};

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

// An integer's decimal digits, for the 128 bits an exact derived weight is computed in.
std::string integer_text(__int128 value);

// Input `index`'s weight for element type T, as the kernels take it (alpha_t<T>), derived from
// `given`, the value of the argument that weighs it (sub's alpha for its weight -alpha), which
// the words name; or the problem with it. For integer tensors the argument must be integral and
// the weight is derived exactly, in integers (1 - w for w = 2^60 is 1 - 2^60, not a double's
// rounding of it), and must fit T; for the types that compute in float32, within its range.
// `dtype()` names the tensors' dtype, called only to word a failure.
template <class T, class DTypeName>
Problem derive_weight(const OperatorWords& words, int index, double given, const DTypeName& dtype,
                      alpha_t<T>& weight) {
  const WeightRule& rule = words.rule(index);
  if (rule.argument == nullptr) {
    weight = static_cast<alpha_t<T>>(rule.offset);
    return {};
  }
  // The words are put together only for a failure: this runs on every call.
  const auto stated = [&](const std::string& derived) {
    const std::string value = number_text(given);
    return std::string(words.call) + ": argument '" + rule.argument + "' " +
           (words.weights_listed ? "has " + value + " at index " + std::to_string(index)
                                 : "is " + value) +
           (rule.derived() ? " (" + words.input(index) + "'s weight " + derived + ")" : "");
  };
  const auto have = [&] { return std::string(" but ") + words.all_inputs + " have dtype "; };
  if constexpr (std::is_integral_v<T>) {
    if (!std::isfinite(given) || given != std::trunc(given)) {
      return {ErrorKind::kType,
              stated(number_text(rule.of(given))) + have() + dtype() + "; expected " +
                  (words.weights_listed ? "integral weights"
                                        : std::string("an integral ") + rule.argument) +
                  " for integer tensors"};
    }
    // Any integral double below 2^100 is exact in 128 bits, and beyond it no weight fits T.
    constexpr double kLargest = 1267650600228229401496703205376.0;  // 2^100
    const bool representable = std::abs(given) < kLargest;
    const __int128 exact = representable ? rule.offset + rule.scale * static_cast<__int128>(given)
                                         : static_cast<__int128>(0);
    const auto lowest = std::numeric_limits<T>::min();
    const auto highest = std::numeric_limits<T>::max();
    if (!representable || exact < lowest || exact > highest) {
      const std::string derived = representable ? integer_text(exact) : number_text(rule.of(given));
      return {ErrorKind::kValue, stated(derived) + have() + dtype() + "; expected " +
                                     (rule.derived() ? "a weight" : "an integer") + " from " +
                                     std::to_string(lowest) + " to " + std::to_string(highest)};
    }
    weight = static_cast<T>(exact);
  } else {
    const double value = rule.of(given);
    if constexpr (std::is_same_v<vecadd::alpha_t<T>, float>) {
      const double largest = std::numeric_limits<float>::max();
      if (std::isfinite(value) && std::abs(value) > largest) {
        return {ErrorKind::kValue,
                stated(number_text(value)) + ", which " + dtype() +
                    " tensors cannot use: they compute in float32, so expected a magnitude of "
                    "at most " +
                    number_text(largest) + " (or inf or nan)"};
      }
    }
    weight = static_cast<alpha_t<T>>(value);
  }
  return {};
}

// Whether two arrays' byte ranges [first, last) intersect.
bool byte_ranges_intersect(const void* a, const Operand& a_shape, const void* b,
                           const Operand& b_shape, std::size_t element_size);

// Whether some element of an array shares memory with another (a repeated dimension).
bool has_repeated_elements(const Operand& shape);

// One call of a weighted-sum operator as the rules see it: its words, its inputs (pointers to a
// binding's tensors) and, for each input, the value of the argument that weighs it as the call
// gave it (sub's alpha, not -alpha; ignored for an input of constant weight), from which the
// rules derive each weight for the tensors' dtype.
template <class Tensor>
struct SumCall {
  const OperatorWords& words;
  const Tensor* const* inputs;
  int count;
  const double* given;

  // Input `index`'s weight for floating tensors (autograd's), in double.
  double weight(int index) const { return words.rule(index).of(given[index]); }

  const Tensor& operator[](int index) const { return *inputs[index]; }
};

// The kinds of schema argument a generic kernel entry reads (cmake/generate_operators.py names
// each record argument's kind): a tensor, a list of tensors, a float, an optional list of floats.
struct TensorKind {};
struct TensorListKind {};
struct FloatKind {};
struct FloatListKind {};

// Most float arguments one operator takes (the generator refuses more).
inline constexpr int kMaxNumbers = 8;

// The checks of one call, in one order, for a binding's tensors.
template <class Api>
struct CallRules {
  using Tensor = typename Api::Tensor;
  using Call = SumCall<Tensor>;

  // `name()` words the argument; it runs only for a failure, as these checks run on every call.
  template <class Name>
  static void check_defined(const Call& call, const Tensor& t, const Name& name) {
    if (!Api::defined(t)) {
      Api::fail(ErrorKind::kType, std::string(call.words.call) + ": argument '" + name() +
                                      "' is an undefined tensor; expected a tensor");
    }
  }

  template <class Name>
  static void check_supported(const Call& call, const Tensor& t, const Name& name) {
    if (!is_supported_dtype(Api::dtype(t))) {
      Api::fail(ErrorKind::kType, std::string(call.words.call) + ": argument '" + name() +
                                      "' has dtype " + dtype_name(Api::dtype(t)) +
                                      ", which vecadd does not support; expected " +
                                      supported_dtypes_text<decltype(Api::dtype(t))>());
    }
  }

  // A list's inputs: at least one, and one weight for each (`weight_count` given).
  static void check_list(const OperatorWords& words, int count, int weight_count) {
    if (count == 0) {
      Api::fail(ErrorKind::kValue, std::string(words.call) + ": argument '" + words.list +
                                       "' is an empty list; expected at least one tensor");
    }
    if (weight_count != count) {
      Api::fail(ErrorKind::kValue, std::string(words.call) + ": argument '" + words.weights_list() +
                                       "' has " + counted(weight_count, "value") + " but '" +
                                       words.list + "' has " + counted(count, "tensor") +
                                       "; expected one weight per tensor");
    }
  }

  // "1 value", "2 values".
  static std::string counted(int count, const char* noun) {
    return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
  }

  // The inputs: defined, a supported dtype, the first one's dtype and device; the weights:
  // ones the kernels' compute type holds, and integral for integer tensors.
  static void check_inputs(const Call& call) {
    const OperatorWords& words = call.words;
    for (int i = 0; i < call.count; ++i) {
      check_defined(call, call[i], [&] { return words.input(i); });
    }
    for (int i = 0; i < call.count; ++i) {
      check_supported(call, call[i], [&] { return words.input(i); });
    }
    const Tensor& first = call[0];
    for (int i = 1; i < call.count; ++i) {
      if (Api::dtype(call[i]) != Api::dtype(first)) {
        const std::string other = words.input(i);
        Api::fail(ErrorKind::kType,
                  std::string(words.call) + ": " + words.input(0) + " has dtype " +
                      dtype_name(Api::dtype(first)) + " but " + other + " has dtype " +
                      dtype_name(Api::dtype(call[i])) +
                      "; expected the same dtype (vecadd does not promote types: convert one, "
                      "e.g. " +
                      other + ".to(" + words.input(0) + ".dtype))");
      }
    }
    for (int i = 1; i < call.count; ++i) {
      if (!Api::same_device(first, call[i])) {
        const std::string other = words.input(i);
        Api::fail(ErrorKind::kRuntime, std::string(words.call) + ": " + words.input(0) + " is on " +
                                           Api::device_name(first) + " but " + other + " is on " +
                                           Api::device_name(call[i]) + "; expected " +
                                           (call.count == 2 ? "both" : "all") +
                                           " on the same device (move one, e.g. " + other + ".to(" +
                                           words.input(0) + ".device))");
      }
    }
    visit_element_type(Api::dtype(first), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // Each weight an argument gives (add's x has a constant 1, which no argument gives).
      for (int i = 0; i < call.count; ++i) {
        if (words.weight_name(i) == nullptr) {
          continue;
        }
        vecadd::alpha_t<T> weight{};
        const Problem problem = derive_weight<T>(
            words, i, call.given[i], [&] { return dtype_name(Api::dtype(first)); }, weight);
        if (!problem.message.empty()) {
          Api::fail(problem.kind, problem.message);
        }
      }
    });
  }

  // A call's inputs and each input's given weight, gathered by a binding's generic kernel entry
  // from the arguments in schema order: add(tensor) for a tensor (a list's, one by one),
  // add(number) for a float, add_list(values, size) for a float list (nullptr: left out).
  class Gathered {
   public:
    Gathered(const OperatorWords& words, int input_count)
        : words_(words), inputs_(input_count), given_(input_count) {}

    void add(const Tensor& tensor) { inputs_[next_input_++] = &tensor; }
    void add(double number) { numbers_[next_number_++] = number; }
    void add_list(const double* values, int size) {
      list_ = values;
      list_size_ = size;
    }

    // The call, each input's given weight read through its rule; a list's length checked.
    Call call() {
      const int count = next_input_;
      if (words_.weights_listed) {
        check_list(words_, count, list_ != nullptr ? list_size_ : count);
      }
      for (int i = 0; i < count; ++i) {
        const WeightRule& rule = words_.rule(i);
        if (words_.weights_listed) {
          given_[i] = list_ != nullptr ? list_[i] : 1.0;
        } else {
          given_[i] = rule.argument != nullptr ? numbers_[rule.number] : 1.0;
        }
      }
      return {words_, inputs_.data(), count, given_.data()};
    }

   private:
    const OperatorWords& words_;
    PerOperand<const Tensor*> inputs_;
    PerOperand<double> given_;
    double numbers_[kMaxNumbers] = {};
    const double* list_ = nullptr;
    int list_size_ = 0;
    int next_input_ = 0;
    int next_number_ = 0;
  };

  // out: defined, with the inputs' dtype and device, the broadcast shape, its own memory for
  // each element, and each input either out itself or apart from it.
  static void check_out(const Call& call, const Tensor& out,
                        const std::vector<std::int64_t>& shape) {
    const OperatorWords& words = call.words;
    const Tensor& first = call[0];
    check_defined(call, out, [] { return "out"; });
    if (Api::dtype(out) != Api::dtype(first)) {
      Api::fail(ErrorKind::kType, std::string(words.call) + ": out has dtype " +
                                      dtype_name(Api::dtype(out)) + "; expected " +
                                      dtype_name(Api::dtype(first)) + ", the dtype of " +
                                      words.all_inputs);
    }
    if (!Api::same_device(out, first)) {
      Api::fail(ErrorKind::kRuntime,
                std::string(words.call) + ": out is on " + Api::device_name(out) + "; expected " +
                    Api::device_name(first) + ", the device of " + words.all_inputs);
    }
    const Operand out_shape = Api::operand(out);
    if (static_cast<std::size_t>(out_shape.ndim) != shape.size() ||
        !std::equal(shape.begin(), shape.end(), out_shape.sizes)) {
      Api::fail(
          ErrorKind::kValue,
          std::string(words.call) + ": out has shape " + shape_text(out_shape) + "; expected " +
              shape_text({static_cast<int>(shape.size()), shape.data(), nullptr}) +
              ", the broadcast shape of " + words.all_inputs + " (vecadd does not resize out)");
    }
  }

  static void check_out_memory(const Call& call, const Tensor& out) {
    if (Api::numel(out) == 0) {
      return;
    }
    if (has_repeated_elements(Api::operand(out))) {
      Api::fail(ErrorKind::kRuntime,
                std::string(call.words.call) +
                    ": out has elements that share memory (e.g. an expanded tensor); expected "
                    "every element of out to have its own memory");
    }
    for (int i = 0; i < call.count; ++i) {
      check_apart(call, out, i);
    }
  }

  static std::vector<std::int64_t> result_shape(const Call& call) {
    PerOperand<Operand> operands(call.count);
    for (int i = 0; i < call.count; ++i) {
      operands[i] = Api::operand(call[i]);
    }
    try {
      return call.count == 2  // the common call
                 ? vecadd::broadcast_shape(operands[0], operands[1])
                 : vecadd::broadcast_shape(operands.data(), nullptr, call.count);
    } catch (const std::invalid_argument&) {
      // Again with the inputs' own names, which only an error needs.
    }
    std::vector<std::string> names(static_cast<std::size_t>(call.count));
    std::vector<const char*> name_pointers(static_cast<std::size_t>(call.count));
    for (int i = 0; i < call.count; ++i) {
      names[i] = call.words.input(i);
      name_pointers[i] = names[i].c_str();
    }
    try {
      return vecadd::broadcast_shape(operands.data(), name_pointers.data(), call.count);
    } catch (const std::invalid_argument& error) {
      Api::fail(ErrorKind::kValue,
                std::string(call.words.call) + ": " +
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

  static void check_apart(const Call& call, const Tensor& out, int index) {
    const Tensor& input = call[index];
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
              std::string(call.words.call) + ": out partly overlaps the memory of '" +
                  call.words.input(index) +
                  "'; expected out to be either that very tensor (in-place) or separate memory "
                  "(clone one of them first)");
  }
};

// What a launch failure means, in words: a missing kernel image names the GPU, the
// architectures built and how to rebuild; anything else says what the driver said.
#if VECADD_WITH_CUDA
Problem launch_problem(const char* call, cudaError_t status, int device_index,
                       const std::string& device);
#endif

}  // namespace vecadd::binding
