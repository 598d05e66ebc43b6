// The rules every call of a vecadd operator obeys, whichever torch API a binding is written
// against: each operator is a weighted sum of tensors, so one set of rules serves them all (the
// checks, their order and their words, torch's type promotion, the result's shape, and each
// weight as the kernel library takes it), each operator naming its inputs and weights in its
// own words (OperatorWords, from python/vecadd/_operators.py); sum_kernels.h runs a call that
// passes them. A binding supplies `Api`, a struct of static functions that
// read its tensors and raise its errors (see src/torch/native_api.h and
// src/stable/stable_api.h); nothing here includes torch.
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "promotion.h"
#include "vecadd/plan.h"
#include "vecadd/result_layout.h"
#include "vecadd/vecadd.h"
#if VECADD_WITH_CUDA
#include "vecadd/cuda.h"
#endif

namespace vecadd::binding {

// The Python exception a failed rule becomes.
enum class ErrorKind { kType, kValue, kRuntime };

// How the stable ABI, which delivers every C++ error as a RuntimeError, carries a rule's kind:
// the message's first words (vecadd/_words.py reads them in Python, the native entries in C++).
inline const char* kind_prefix(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kType:
      return "TypeError: ";
    case ErrorKind::kValue:
      return "ValueError: ";
    case ErrorKind::kRuntime:
      break;
  }
  return "";
}

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

// The library's dtype of a torch ScalarType (the native and stable enumerations share their
// enumerators), or nothing for one vecadd does not take.
template <class ScalarType>
std::optional<DType> library_dtype(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Bool:
      return DType::kBool;
    case ScalarType::Byte:
      return DType::kUInt8;
    case ScalarType::Char:
      return DType::kInt8;
    case ScalarType::Short:
      return DType::kInt16;
    case ScalarType::Int:
      return DType::kInt32;
    case ScalarType::Long:
      return DType::kInt64;
    case ScalarType::Half:
      return DType::kFloat16;
    case ScalarType::BFloat16:
      return DType::kBFloat16;
    case ScalarType::Float:
      return DType::kFloat32;
    case ScalarType::Double:
      return DType::kFloat64;
    case ScalarType::ComplexHalf:
      return DType::kComplex32;
    case ScalarType::ComplexFloat:
      return DType::kComplex64;
    case ScalarType::ComplexDouble:
      return DType::kComplex128;
    default:
      return std::nullopt;
  }
}

// The torch ScalarType of a library dtype.
template <class ScalarType>
ScalarType torch_dtype(DType dtype) {
  constexpr ScalarType kTorch[] = {
      ScalarType::Bool,         ScalarType::Byte,        ScalarType::Char,
      ScalarType::Short,        ScalarType::Int,         ScalarType::Long,
      ScalarType::Half,         ScalarType::BFloat16,    ScalarType::Float,
      ScalarType::Double,       ScalarType::ComplexHalf, ScalarType::ComplexFloat,
      ScalarType::ComplexDouble};
  static_assert(sizeof(kTorch) / sizeof(kTorch[0]) == kDTypeCount, "a dtype without a ScalarType");
  return kTorch[static_cast<int>(dtype)];
}

// "torch.float16": a dtype as Python spells it.
inline std::string dtype_text(DType dtype) {
  return std::string("torch.") + vecadd::dtype_name(dtype);
}

// A torch dtype as Python spells it, also one vecadd does not take (torch's own toString, found
// by argument-dependent lookup, for those).
template <class ScalarType>
std::string torch_dtype_name(ScalarType dtype) {
  const std::optional<DType> ours = library_dtype(dtype);
  if (ours) {
    return dtype_text(*ours);
  }
  std::string name = toString(dtype);  // "UInt16", "Float8_e4m3fn": Python's in lower case
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return "torch." + name;
}

// "torch.bool, torch.uint8, ... or torch.complex128": the library's dtypes, in order.
const std::string& supported_dtypes_text();

// A failed rule: what Python exception it becomes, and its words (empty: no failure).
struct Problem {
  ErrorKind kind = ErrorKind::kValue;
  std::string message;
};

// An integer's decimal digits, for the 128 bits an exact derived weight is computed in.
std::string integer_text(__int128 value);

// The smallest and largest weight an integer dtype takes: its range, but for uint8, whose
// weights torch takes from -255 on (a negative one wraps around, as x - 2 * y does).
std::pair<std::int64_t, std::int64_t> integer_range(DType dtype);

// A weight as a call gives it: the value of the argument that weighs the input and, for a
// complex weight, its imaginary part.
struct Given {
  double real = 1.0;
  double imag = 0.0;
};

// Input `index`'s weight for a sum computed in `common`'s compute type, as the kernel library
// takes it (vecadd::Number), derived from `given`, the value of the argument that weighs it
// (sub's alpha for its weight -alpha), which the words name; or the problem with it. For an
// integer or bool sum the argument must be real and integral and the weight is derived exactly,
// in integers (1 - w for w = 2^60 is 1 - 2^60, not a double's rounding of it), and must fit the
// dtype (bool: any integer, nonzero is true); for a floating sum it must be real; for the types
// that compute in float32 or complex<float>, within float32's range. `have()` says what the
// inputs sum in (" but x and y have dtype torch.int64"), called only to word a failure.
template <class Have>
Problem derive_weight(const OperatorWords& words, int index, Given given, DType common,
                      const Have& have, Number& weight) {
  const WeightRule& rule = words.rule(index);
  if (rule.argument == nullptr) {
    weight = Number::of_integer(rule.offset);
    return {};
  }
  // The words are put together only for a failure: this runs on every call.
  const auto value_text = [](double real, double imag) {
    if (imag == 0) {
      return number_text(real);
    }
    return "(" + number_text(real) + (imag < 0 || std::signbit(imag) ? "" : "+") +
           number_text(imag) + "j)";
  };
  const auto stated = [&](const std::string& derived) {
    const std::string value = value_text(given.real, given.imag);
    return std::string(words.call) + ": argument '" + rule.argument + "' " +
           (words.weights_listed ? "has " + value + " at index " + std::to_string(index)
                                 : "is " + value) +
           (rule.derived() ? " (" + words.input(index) + "'s weight " + derived + ")" : "");
  };
  const auto derived_real = [&] { return rule.of(given.real); };
  const double imag = rule.scale * given.imag;
  if (!is_complex(common) && given.imag != 0) {
    return {ErrorKind::kType,
            stated(value_text(derived_real(), imag)) + have() + "; expected a real " +
                (words.weights_listed ? std::string("weight") : std::string(rule.argument)) +
                " for tensors that are not complex"};
  }
  if (is_integral(common)) {
    if (!std::isfinite(given.real) || given.real != std::trunc(given.real)) {
      return {ErrorKind::kType,
              stated(number_text(derived_real())) + have() + "; expected " +
                  (words.weights_listed ? "integral weights"
                                        : std::string("an integral ") + rule.argument) +
                  " for integer tensors"};
    }
    // Any integral double below 2^100 is exact in 128 bits, and beyond it no weight fits.
    constexpr double kLargest = 1267650600228229401496703205376.0;  // 2^100
    const bool representable = std::abs(given.real) < kLargest;
    const __int128 exact = representable
                               ? rule.offset + rule.scale * static_cast<__int128>(given.real)
                               : static_cast<__int128>(0);
    if (common == DType::kBool && representable) {
      weight = Number::of_integer(exact != 0);
      return {};
    }
    const auto [lowest, highest] = integer_range(common == DType::kBool ? DType::kInt64 : common);
    if (!representable || exact < lowest || exact > highest) {
      const std::string derived = representable ? integer_text(exact) : number_text(derived_real());
      return {ErrorKind::kValue, stated(derived) + have() + "; expected " +
                                     (rule.derived() ? "a weight" : "an integer") + " from " +
                                     std::to_string(lowest) + " to " + std::to_string(highest)};
    }
    weight = Number::of_integer(static_cast<std::int64_t>(exact));
    return {};
  }
  const double real = derived_real();
  if (compute_dtype(common) == DType::kFloat32 || compute_dtype(common) == DType::kComplex64) {
    const double largest = std::numeric_limits<float>::max();
    if ((std::isfinite(real) && std::abs(real) > largest) ||
        (std::isfinite(imag) && std::abs(imag) > largest)) {
      return {ErrorKind::kValue,
              stated(value_text(real, imag)) + have() +
                  ", which compute in float32, so expected a magnitude of at most " +
                  number_text(largest) + " (or inf or nan)"};
    }
  }
  weight = Number::of_real(real, imag);
  return {};
}

// Whether two arrays' byte ranges [first, last) intersect.
bool byte_ranges_intersect(const void* a, const Operand& a_shape, std::size_t a_element_size,
                           const void* b, const Operand& b_shape, std::size_t b_element_size);

// Whether some element of an array shares memory with another (a repeated dimension).
bool has_repeated_elements(const Operand& shape);

// One call of a weighted-sum operator as the rules see it: its words, its inputs (pointers to a
// binding's tensors), for each input the value of the argument that weighs it as the call gave
// it (sub's alpha, not -alpha; ignored for an input of constant weight), from which the rules
// derive each weight for the sum's dtype, and the dtype the call asks for (nothing: torch's
// promotion of the inputs decides).
template <class Tensor>
struct SumCall {
  const OperatorWords& words;
  const Tensor* const* inputs;
  int count;
  const Given* given;
  std::optional<DType> dtype;

  // Input `index`'s weight for floating tensors (autograd's), in double: its real part.
  double weight(int index) const { return words.rule(index).of(given[index].real); }
  // Its imaginary part, for complex tensors.
  double weight_imag(int index) const {
    return words.rule(index).argument == nullptr ? 0.0
                                                 : words.rule(index).scale * given[index].imag;
  }

  const Tensor& operator[](int index) const { return *inputs[index]; }
};

// The kinds of schema argument a generic kernel entry reads (cmake/generate_operators.py names
// each record argument's kind): a tensor, a list of tensors, a float, an optional list of floats.
struct TensorKind {};
struct TensorListKind {};
struct FloatKind {};
struct FloatListKind {};
// The imaginary part of the float (list) argument of the same place among the weighing ones.
struct ImaginaryKind {};
struct ImaginaryListKind {};
// The dtype the call asks for (ScalarType?).
struct DTypeKind {};

// Most float arguments one operator takes (the generator refuses more).
inline constexpr int kMaxNumbers = 8;

// What the rules decide of a call, for the kernels: the dtype it sums in and returns, each
// input's dtype and weight, which input's device it runs on, which inputs the kernels read as
// numbers on the host (a 0-dim CPU tensor beside tensors of any device) and which of those
// torch.add reads as scalars (see `read_as_scalar`).
struct DecidedInput {
  DType dtype = DType::kFloat32;
  Number weight;
  bool on_host = false;
  bool scalar = false;
};

struct Decided {
  DType common = DType::kFloat32;
  int device_input = 0;
  PerOperand<DecidedInput> inputs;

  explicit Decided(int count) : inputs(count) {}
};

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
  static DType check_supported(const Call& call, const Tensor& t, const Name& name) {
    const std::optional<DType> dtype = library_dtype(Api::dtype(t));
    if (!dtype) {
      Api::fail(ErrorKind::kType, std::string(call.words.call) + ": argument '" + name() +
                                      "' has dtype " + torch_dtype_name(Api::dtype(t)) +
                                      ", which vecadd does not support (nor does torch.add); "
                                      "expected " +
                                      supported_dtypes_text());
    }
    return *dtype;
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

  // A 0-dim CPU tensor, which torch lets join tensors on another device.
  static bool is_cpu_number(const Tensor& t) { return Api::is_cpu(t) && Api::operand(t).ndim == 0; }

  // Whether input `index` of a two-input call is read as torch.add reads a scalar: straight from
  // its own dtype to the compute type, not rounded to the common dtype first. torch.add does so
  // on a GPU for an input that is a 0-dim CPU tensor; on a CPU it rounds every input first.
  static bool read_as_scalar(const Call& call, const Decided& decided, int index) {
    return call.count == 2 && decided.inputs[index].on_host &&
           !Api::is_cpu(call[decided.device_input]);
  }

  // The inputs: defined, of dtypes vecadd takes, on one device (but for 0-dim CPU tensors); the
  // dtype they sum in (torch's promotion over them as a chain of torch.add, or the one the call
  // asks for); the weights: ones that dtype's compute type holds, integral for an integer sum.
  static Decided check_inputs(const Call& call) {
    const OperatorWords& words = call.words;
    Decided decided(call.count);
    for (int i = 0; i < call.count; ++i) {
      check_defined(call, call[i], [&] { return words.input(i); });
    }
    for (int i = 0; i < call.count; ++i) {
      decided.inputs[i].dtype = check_supported(call, call[i], [&] { return words.input(i); });
    }
    // The call runs on the device of its first input that is not a 0-dim CPU tensor.
    for (int i = 0; i < call.count; ++i) {
      if (!is_cpu_number(call[i])) {
        decided.device_input = i;
        break;
      }
    }
    const Tensor& device = call[decided.device_input];
    for (int i = 0; i < call.count; ++i) {
      if (i == decided.device_input) {
        continue;
      }
      // Read once as a number on a CPU call too: a one-element array would cost a strided loop.
      if (is_cpu_number(call[i])) {
        decided.inputs[i].on_host = true;
        continue;
      }
      if (Api::same_device(device, call[i])) {
        continue;
      }
      const std::string first = words.input(decided.device_input);
      const std::string other = words.input(i);
      Api::fail(ErrorKind::kRuntime,
                std::string(words.call) + ": " + first + " is on " + Api::device_name(device) +
                    " but " + other + " is on " + Api::device_name(call[i]) + "; expected " +
                    (call.count == 2 ? "both" : "all") +
                    " on the same device, but for 0-dim CPU tensors (move one, e.g. " + other +
                    ".to(" + first + ".device))");
    }
    decided.common = call.dtype ? *call.dtype : promoted_dtype(call, decided);
    for (int i = 0; i < call.count; ++i) {
      decided.inputs[i].scalar = read_as_scalar(call, decided, i);
    }
    // Each weight an argument gives (add's x has a constant 1, which no argument gives).
    for (int i = 0; i < call.count; ++i) {
      const Problem problem = derive_weight(
          words, i, call.given[i], decided.common, [&] { return sum_words(call, decided); },
          decided.inputs[i].weight);
      if (!problem.message.empty()) {
        Api::fail(problem.kind, problem.message);
      }
    }
    return decided;
  }

  // " but x and y have dtype torch.int64", or where they differ, " but x and y promote to
  // torch.float32": what the weights' words say of the sum.
  static std::string sum_words(const Call& call, const Decided& decided) {
    bool alike = true;
    for (int i = 0; i < call.count; ++i) {
      alike = alike && decided.inputs[i].dtype == decided.common;
    }
    return std::string(" but ") + call.words.all_inputs + (alike ? " have dtype " : " sum in ") +
           dtype_text(decided.common);
  }

  // torch's promotion of the inputs as a chain of torch.add promotes them: the first with the
  // second, their result (with dimensions where either has them) with the third, and so on.
  static DType promoted_dtype(const Call& call, const Decided& decided) {
    Promoted result{decided.inputs[0].dtype, Api::operand(call[0]).ndim > 0};
    for (int i = 1; i < call.count; ++i) {
      const std::optional<Promoted> next =
          result_of(result, {decided.inputs[i].dtype, Api::operand(call[i]).ndim > 0});
      if (!next) {
        Api::fail(ErrorKind::kType,
                  std::string(call.words.call) + ": " + call.words.input(i) + " has dtype " +
                      dtype_text(decided.inputs[i].dtype) + " beside " + dtype_text(result.dtype) +
                      " tensors, which torch promotes to a complex dtype of bfloat16's range; "
                      "vecadd (and torch.add) compute in none: expected the bfloat16 tensors "
                      "converted first, e.g. to torch.float32");
      }
      result = *next;
    }
    return result.dtype;
  }

  // A call's inputs and each input's given weight, gathered by a binding's generic kernel entry
  // from the arguments in schema order: add(tensor) for a tensor (a list's, one by one),
  // add(number) for a float, add_list(values, size) for a float list (nullptr: left out), then
  // the imaginary parts of the weighing ones alike and the dtype asked for.
  class Gathered {
   public:
    Gathered(const OperatorWords& words, int input_count)
        : words_(words), inputs_(input_count), given_(input_count) {}

    void add(const Tensor& tensor) { inputs_[next_input_++] = &tensor; }
    void add(double number) { numbers_[next_number_++].real = number; }
    void add_list(const double* values, int size) {
      list_ = values;
      list_size_ = size;
    }
    void add_imaginary(double number) { numbers_[next_imaginary_++].imag = number; }
    void add_imaginary_list(const double* values, int size) {
      list_imaginary_ = values;
      list_imaginary_size_ = size;
    }
    template <class ScalarType>
    void ask_dtype(const std::optional<ScalarType>& dtype) {
      if (dtype) {
        const std::optional<DType> ours = library_dtype(*dtype);
        if (!ours) {
          Api::fail(ErrorKind::kType, std::string(words_.call) + ": argument 'dtype' is " +
                                          torch_dtype_name(*dtype) +
                                          ", which vecadd does not support; expected " +
                                          supported_dtypes_text() + " or None");
        }
        dtype_ = ours;
      }
    }

    // The call, each input's given weight read through its rule; a list's lengths checked.
    Call call() {
      const int count = next_input_;
      if (words_.weights_listed) {
        check_list(words_, count, list_ != nullptr ? list_size_ : count);
        if (list_imaginary_ != nullptr && list_imaginary_size_ != count) {
          Api::fail(ErrorKind::kValue, std::string(words_.call) + ": argument '" +
                                           words_.weights_list() + "_imag' has " +
                                           counted(list_imaginary_size_, "value") + " but '" +
                                           words_.list + "' has " + counted(count, "tensor") +
                                           "; expected one imaginary part per weight");
        }
      }
      for (int i = 0; i < count; ++i) {
        const WeightRule& rule = words_.rule(i);
        if (words_.weights_listed) {
          given_[i] = {list_ != nullptr ? list_[i] : 1.0,
                       list_ != nullptr && list_imaginary_ != nullptr ? list_imaginary_[i] : 0.0};
        } else {
          given_[i] = rule.argument != nullptr ? numbers_[rule.number] : Given{};
        }
      }
      return {words_, inputs_.data(), count, given_.data(), dtype_};
    }

   private:
    const OperatorWords& words_;
    PerOperand<const Tensor*> inputs_;
    PerOperand<Given> given_;
    Given numbers_[kMaxNumbers] = {};
    const double* list_ = nullptr;
    int list_size_ = 0;
    const double* list_imaginary_ = nullptr;
    int list_imaginary_size_ = 0;
    std::optional<DType> dtype_;
    int next_input_ = 0;
    int next_number_ = 0;
    int next_imaginary_ = 0;
  };

  // out: defined, of a dtype the sum's casts to as torch casts, on the call's device, the
  // broadcast shape, its own memory for each element, and each input either out itself or apart
  // from it.
  static void check_out(const Call& call, const Decided& decided, const Tensor& out,
                        const std::vector<std::int64_t>& shape) {
    const OperatorWords& words = call.words;
    const Tensor& device = call[decided.device_input];
    check_defined(call, out, [] { return "out"; });
    const DType out_dtype = check_supported(call, out, [] { return "out"; });
    if (!can_cast(decided.common, out_dtype)) {
      Api::fail(ErrorKind::kType,
                std::string(words.call) + ": out has dtype " + dtype_text(out_dtype) +
                    " but the sum of " + words.all_inputs + " is " + dtype_text(decided.common) +
                    ", which torch does not cast to it (" + cast_words(decided.common, out_dtype) +
                    "); expected out of dtype " + dtype_text(decided.common) +
                    " or one it casts to");
    }
    if (!Api::same_device(out, device)) {
      Api::fail(ErrorKind::kRuntime,
                std::string(words.call) + ": out is on " + Api::device_name(out) + "; expected " +
                    Api::device_name(device) + ", the device of " + words.all_inputs);
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

  static void check_out_memory(const Call& call, const Decided& decided, const Tensor& out) {
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
      if (!decided.inputs[i].on_host) {
        check_apart(call, out, i);
      }
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

  // Why torch does not cast `from` into `to`, in words.
  static const char* cast_words(DType from, DType to) {
    if (is_complex(from)) {
      return "a complex number to a real one";
    }
    if (is_floating(from) && to != DType::kBool) {
      return "a floating-point number to an integer";
    }
    return "a number that is not bool to bool";
  }

  static void check_apart(const Call& call, const Tensor& out, int index) {
    const Tensor& input = call[index];
    const Operand out_shape = Api::operand(out);
    const Operand input_shape = Api::operand(input);
    if (Api::numel(out) == 0 || Api::numel(input) == 0) {
      return;
    }
    const bool same_view =
        Api::data(out) == Api::data(input) && Api::dtype(out) == Api::dtype(input) &&
        out_shape.ndim == input_shape.ndim &&
        std::equal(out_shape.sizes, out_shape.sizes + out_shape.ndim, input_shape.sizes) &&
        std::equal(out_shape.strides, out_shape.strides + out_shape.ndim, input_shape.strides);
    // The very same view (in-place) is safe: each element is read before it is written.
    if (same_view ||
        !byte_ranges_intersect(Api::data(out), out_shape, Api::element_size(out), Api::data(input),
                               input_shape, Api::element_size(input))) {
      return;
    }
    Api::fail(ErrorKind::kRuntime,
              std::string(call.words.call) + ": out partly overlaps the memory of '" +
                  call.words.input(index) +
                  "'; expected out to be either that very tensor (in-place, of its dtype) or "
                  "separate memory (clone one of them first)");
  }
};

// What a launch failure means, in words: a missing kernel image names the GPU, the
// architectures built and how to rebuild; anything else says what the driver said.
#if VECADD_WITH_CUDA
Problem launch_problem(const char* call, cudaError_t status, int device_index,
                       const std::string& device);
#endif

}  // namespace vecadd::binding
