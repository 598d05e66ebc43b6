// vecadd's lean Python entries to its operators, one per operator the records describe
// (VECADD_OPERATOR_ENTRIES in the generated vecadd_operators.h), so a new operator needs no line
// here. Built twice from this file: as the native build's vecadd._C, and as the vecadd._C beside
// each native binding of the portable wheel (lib/torchX.Y/_C.abi3.so), under CPython's
// limited API (3.10), so that one file serves every CPython from 3.10 on but the free-threaded
// ones, which take no abi3 module and reach the operators through the dispatcher instead. The
// entries call the operators through the dispatcher: the kernels are registered by the binding
// loaded beside them.
#include <Python.h>  // first, as Python asks of its extensions

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "torch_python.h"
#include "vecadd_operators.h"

#ifndef TORCH_EXTENSION_NAME
#error "TORCH_EXTENSION_NAME names the module (its PyInit_ function)"
#endif
#define VECADD_CONCATENATE(a, b) a##b
#define VECADD_MODULE_INIT(name) VECADD_CONCATENATE(PyInit_, name)
#define VECADD_STRING(name) #name
#define VECADD_MODULE_NAME(name) VECADD_STRING(name)

namespace vecadd::torch_binding {
namespace {

// The tensor a plain torch.Tensor (or nn.Parameter) holds, borrowed from its Python object;
// nullptr for any other object, a tensor subclass included (only torch.ops honours what a
// subclass may define, __torch_function__).
const at::Tensor* plain_tensor(PyObject* object) {
  PyObject* const type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  if (type != THPVariableClass && type != ParameterClass) {
    return nullptr;
  }
  return &reinterpret_cast<PythonTensor*>(object)->tensor;
}

// The warnings torch's C++ code gives during a call, kept to become Python's once the call is
// over and the GIL taken back (as torch's own Python bindings do).
class KeptWarnings final : public c10::WarningHandler {
 public:
  void process(const c10::Warning& warning) override { kept_.push_back(warning); }

  // Issues them as Python warnings: false where the warnings filter made one an error.
  bool issue() {
    for (const c10::Warning& warning : kept_) {
      PyObject* category = std::holds_alternative<c10::DeprecationWarning>(warning.type())
                               ? PyExc_DeprecationWarning
                               : PyExc_UserWarning;
      if (PyErr_WarnEx(category, warning.msg().c_str(), 1) != 0) {
        return false;
      }
    }
    return true;
  }

 private:
  std::vector<c10::Warning> kept_;
};

// Raises the error that `failure` carries its kind for in its message's first words, as the
// stable ABI's kernels (the CUDA library's, in the portable wheel) deliver a rule's TypeError
// or ValueError; false for any other failure.
bool raise_kind_in_message(const std::exception_ptr& failure) {
  std::string message;
  try {
    std::rethrow_exception(failure);
  } catch (const c10::Error& error) {
    message = error.what_without_backtrace();
  } catch (const std::runtime_error& error) {
    message = error.what();
  } catch (...) {  // a Python error raised below (torch's python_error) among them: kept as it is
    return false;
  }
  using binding::ErrorKind;
  for (const auto& [kind, python_kind] : {std::pair{ErrorKind::kType, PyExc_TypeError},
                                          std::pair{ErrorKind::kValue, PyExc_ValueError}}) {
    const std::string prefix = binding::kind_prefix(kind);
    if (message.compare(0, prefix.size(), prefix) == 0) {
      PyErr_SetString(python_kind, message.c_str() + prefix.size());
      return true;
    }
  }
  return false;
}

// body(context) with torch's C++ errors and warnings turned into Python's: its result, or
// nullptr with the Python error set.
PyObject* with_torch_errors(PyObject* (*body)(void*), void* context) {
  KeptWarnings warnings;
  PyObject* result = nullptr;
  std::exception_ptr failure;
  {
    const c10::WarningUtils::WarningHandlerGuard keep(&warnings);
    try {
      result = body(context);
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (!warnings.issue()) {
    Py_XDECREF(result);
    return nullptr;
  }
  if (failure) {
    if (!raise_kind_in_message(failure)) {
      torch::translate_exception_to_python(failure);
    }
    return nullptr;
  }
  return result;
}

// Each schema argument type, converted from the Python values the lean entries take without a
// question; parse answers false for anything else, and the Python face (vecadd._ops) then
// checks the call and words its errors.

// A float, or an int a double holds exactly (not a bool, which vecadd refuses).
bool double_from_python(PyObject* value, double& result) {
  if (PyFloat_CheckExact(value)) {
    result = PyFloat_AsDouble(value);
    return true;
  }
  if (!PyLong_Check(value) || PyBool_Check(value)) {  // bool is an int subclass
    return false;
  }
  int overflow = 0;
  const long long integer = PyLong_AsLongLongAndOverflow(value, &overflow);
  constexpr long long kExactLimit = binding::kExactIntegerLimit;
  if (overflow != 0 || integer > kExactLimit || integer < -kExactLimit) {
    return false;
  }
  result = static_cast<double>(integer);
  return true;
}

// visit(item(i), size) over a list's or tuple's items (borrowed), the list locked against other
// threads meanwhile where a free-threaded CPython has no GIL to keep it from changing; false for
// any other object.
template <class Visit>
bool visit_items(PyObject* sequence, Visit&& visit) {
  const bool list = PyList_CheckExact(sequence);
  if (!list && !PyTuple_CheckExact(sequence)) {
    return false;
  }
  const auto item = [sequence, list](Py_ssize_t i) {
    return list ? PyList_GetItem(sequence, i) : PyTuple_GetItem(sequence, i);
  };
  const Py_ssize_t size = list ? PyList_Size(sequence) : PyTuple_Size(sequence);
#ifdef Py_GIL_DISABLED
  bool taken = false;
  std::exception_ptr failure;  // rethrown once the section has ended, which must not be skipped
  Py_BEGIN_CRITICAL_SECTION(sequence);
  try {
    taken = visit(item, size);
  } catch (...) {
    failure = std::current_exception();
  }
  Py_END_CRITICAL_SECTION();
  if (failure) {
    std::rethrow_exception(failure);
  }
  return taken;
#else
  return visit(item, size);
#endif
}

// A Python number (bool, int, float or complex, not a subclass) as the 0-dim CPU tensor that
// holds it exactly, as vecadd/_lean.py's lean_number makes it, and its category in torch's
// promotion (bool 0, integer 1, floating 2, complex 3); false for anything else, an int that
// int64 cannot hold included.
bool number_as_tensor(PyObject* value, at::Tensor& tensor, int& category) {
  if (PyBool_Check(value)) {
    tensor = c10::scalar_to_tensor(c10::Scalar(value == Py_True));
    category = 0;
  } else if (PyLong_CheckExact(value)) {
    int overflow = 0;
    const long long integer = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow != 0) {
      return false;
    }
    tensor = c10::scalar_to_tensor(c10::Scalar(static_cast<int64_t>(integer)));
    category = 1;
  } else if (PyFloat_CheckExact(value)) {
    tensor = c10::scalar_to_tensor(c10::Scalar(PyFloat_AsDouble(value)));
    category = 2;
  } else if (PyComplex_CheckExact(value)) {
    const c10::complex<double> number(PyComplex_RealAsDouble(value), PyComplex_ImagAsDouble(value));
    tensor = c10::scalar_to_tensor(c10::Scalar(number));
    category = 3;
  } else {
    return false;
  }
  return true;
}

// A dtype's category in torch's promotion, or -1 for one vecadd does not take (the checked way
// words its error).
int category_of(at::ScalarType dtype) {
  if (!binding::library_dtype(dtype)) {
    return -1;
  }
  if (c10::isComplexType(dtype)) {
    return 3;
  }
  if (c10::isFloatingType(dtype)) {
    return 2;
  }
  return dtype == at::kBool ? 0 : 1;
}

// A plain torch.Tensor, borrowed from its Python object, which the caller's arguments keep
// alive through the call; or a Python number, held as a 0-dim tensor of its own.
struct TensorArgument {
  static constexpr bool kFromPython = true;
  using Type = const at::Tensor&;  // as the schema's C++ signature takes it
  const at::Tensor* tensor = nullptr;
  at::Tensor number;
  int number_category = -1;  // the number's, or -1 for a tensor
  bool parse(PyObject* value) {
    tensor = plain_tensor(value);
    if (tensor == nullptr && number_as_tensor(value, number, number_category)) {
      tensor = &number;  // the argument stays in its tuple through the call
    }
    return tensor != nullptr;
  }
  const at::Tensor& get() const { return *tensor; }
};

// Whether the numbers among an entry's tensor arguments, made 0-dim tensors, promote there as
// torch promotes the numbers themselves: every other operand has dimensions and no number's
// category is above theirs (the rule of vecadd/_lean.py's numbers_join).
template <class... Arguments>
bool numbers_join(const std::tuple<Arguments...>& parsed) {
  const auto each_tensor_argument = [&parsed](const auto& visit) {
    std::apply(
        [&visit](const Arguments&... each) {
          const auto visit_tensor = [&visit](const auto& argument) {
            if constexpr (std::is_same_v<std::decay_t<decltype(argument)>, TensorArgument>) {
              visit(argument);
            }
          };
          (visit_tensor(each), ...);
        },
        parsed);
  };
  int numbers = 0;
  int highest_number = -1;
  each_tensor_argument([&](const TensorArgument& argument) {
    if (argument.number_category >= 0) {
      ++numbers;
      highest_number = std::max(highest_number, argument.number_category);
    }
  });
  if (numbers == 0) {
    return true;  // tensors alone, the common call: nothing more to read
  }
  int zero_dim = 0;
  int highest = -1;
  each_tensor_argument([&](const TensorArgument& argument) {
    const at::Tensor& operand = argument.get();
    if (operand.dim() == 0) {
      ++zero_dim;
    } else {
      highest = std::max(highest, category_of(operand.scalar_type()));
    }
  });
  return zero_dim == numbers && highest_number <= highest;
}

// A non-empty list or tuple of plain tensors.
struct TensorListArgument {
  static constexpr bool kFromPython = true;
  using Type = at::TensorList;
  std::vector<at::Tensor> tensors;
  bool parse(PyObject* value) {
    return visit_items(value, [this](const auto& item, Py_ssize_t size) {
      tensors.reserve(static_cast<std::size_t>(size));
      for (Py_ssize_t i = 0; i < size; ++i) {
        const at::Tensor* tensor = plain_tensor(item(i));
        if (tensor == nullptr) {
          return false;
        }
        tensors.push_back(*tensor);
      }
      return !tensors.empty();
    });
  }
  at::TensorList get() const { return tensors; }
};

struct FloatArgument {
  static constexpr bool kFromPython = true;
  using Type = double;
  double value = 1;
  bool parse(PyObject* object) { return double_from_python(object, value); }
  double get() const { return value; }
};

// None, or a list or tuple of floats.
struct OptionalFloatListArgument {
  static constexpr bool kFromPython = true;
  using Type = std::optional<at::ArrayRef<double>>;
  std::optional<std::vector<double>> values;
  bool parse(PyObject* object) {
    if (object == Py_None) {
      return true;
    }
    return visit_items(object, [this](const auto& item, Py_ssize_t size) {
      values.emplace(static_cast<std::size_t>(size));
      for (Py_ssize_t i = 0; i < size; ++i) {
        if (!double_from_python(item(i), (*values)[static_cast<std::size_t>(i)])) {
          return false;
        }
      }
      return true;
    });
  }
  std::optional<at::ArrayRef<double>> get() const {
    return values ? std::optional<at::ArrayRef<double>>(*values) : std::nullopt;
  }
};

// The schema's arguments after the record's, which the lean entries leave at their defaults: a
// real weight's imaginary part, and no dtype asked for.
struct ImaginaryDefault {
  static constexpr bool kFromPython = false;
  using Type = double;
  double get() const { return 0.0; }
};

struct ImaginaryListDefault {
  static constexpr bool kFromPython = false;
  using Type = std::optional<at::ArrayRef<double>>;
  Type get() const { return std::nullopt; }
};

struct DTypeDefault {
  static constexpr bool kFromPython = false;
  using Type = std::optional<at::ScalarType>;
  Type get() const { return std::nullopt; }
};

// The public overload and its .out overload of an operator whose schema takes Arguments,
// looked up once by each entry.
template <class... Arguments>
struct Overloads {
  c10::TypedOperatorHandle<at::Tensor(typename Arguments::Type...)> functional;
  c10::TypedOperatorHandle<void(typename Arguments::Type..., at::Tensor&)> out;

  explicit Overloads(const char* name)
      : functional(c10::Dispatcher::singleton()
                       .findSchemaOrThrow(name, "")
                       .template typed<at::Tensor(typename Arguments::Type...)>()),
        out(c10::Dispatcher::singleton()
                .findSchemaOrThrow(name, "out")
                .template typed<void(typename Arguments::Type..., at::Tensor&)>()) {}
};

// The GIL let go for a dispatcher call, taken back however the call ends.
class WithoutGil {
 public:
  WithoutGil() : state_(PyEval_SaveThread()) {}
  ~WithoutGil() { PyEval_RestoreThread(state_); }
  WithoutGil(const WithoutGil&) = delete;
  WithoutGil& operator=(const WithoutGil&) = delete;

 private:
  PyThreadState* state_;
};

// How many arguments a lean entry takes: those of the schema's that come from Python, then out.
template <class... Arguments>
constexpr Py_ssize_t lean_arguments() {
  return (Py_ssize_t{Arguments::kFromPython} + ... + 1);
}

// One call of a lean entry: what with_torch_errors runs.
template <class... Arguments>
struct EntryCall {
  const char* name;
  const Overloads<Arguments...>* (*overloads)();
  PyObject* const* args;
  Py_ssize_t nargs;
};

// The lean entry of an operator whose schema takes Arguments, then out: name(*arguments, out).
// It calls the public operator (or its out overload) through the dispatcher, and returns
// NotImplemented for anything but plain values or under a torch function mode, which expects
// to see the operator's call.
template <class... Arguments>
PyObject* lean_entry(const EntryCall<Arguments...>& call) {
  constexpr Py_ssize_t kArguments = lean_arguments<Arguments...>();
  if (call.nargs != kArguments) {
    PyErr_Format(PyExc_TypeError, "vecadd._C.%s() takes %zd arguments (the last one out), got %zd",
                 call.name, kArguments, call.nargs);
    return nullptr;
  }
  PyObject* const* args = call.args;
  PyObject* const out_object = args[kArguments - 1] == Py_None ? nullptr : args[kArguments - 1];
  const at::Tensor* out_tensor = out_object == nullptr ? nullptr : plain_tensor(out_object);
  if ((out_object != nullptr && out_tensor == nullptr) || at::impl::torch_function_mode_enabled()) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  std::tuple<Arguments...> parsed;
  const bool plain = std::apply(
      [args](Arguments&... each) {
        Py_ssize_t next = 0;
        const auto parse = [&](auto& argument) {
          if constexpr (std::decay_t<decltype(argument)>::kFromPython) {
            return argument.parse(args[next++]);
          } else {
            return true;
          }
        };
        return (parse(each) && ...);
      },
      parsed);
  if (!plain || !numbers_join(parsed)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  const Overloads<Arguments...>& overloads = *call.overloads();
  if (out_tensor == nullptr) {
    at::Tensor result;
    {
      const WithoutGil no_gil;
      result = std::apply(
          [&](const Arguments&... each) { return overloads.functional.call(each.get()...); },
          parsed);
    }
    return THPVariable_Wrap(std::move(result));
  }
  at::Tensor out = *out_tensor;
  {
    const WithoutGil no_gil;
    std::apply([&](const Arguments&... each) { overloads.out.call(each.get()..., out); }, parsed);
  }
  Py_INCREF(out_object);
  return out_object;
}

template <class... Arguments>
PyObject* run_lean_entry(void* call) {
  return lean_entry(*static_cast<const EntryCall<Arguments...>*>(call));
}

// What an operator's public entry (vecadd.add itself, where this module loads) knows of the
// Python wrapper it stands in for, given once by _C.public_entry: the wrapper, which takes every
// call the entry does not, its parameters' names and defaults (nullptr: none), how many it takes
// by position, and where torch says that non-strict export traces (torch.compiler's flag).
struct PublicWrapper {
  PyObject* wrapper = nullptr;
  PyObject* names = nullptr;     // a tuple of str: the record's arguments, then out
  PyObject* defaults = nullptr;  // a tuple, one per name: its default, or the wrapper for none
  Py_ssize_t positional = 0;
  PyObject* tracing_owner = nullptr;  // torch.compiler, or nullptr where it lacks the flag
  PyObject* tracing_flag = nullptr;   // "_is_compiling_flag"
  PyMethodDef definition{};
};

// The index of keyword `name` among the wrapper's parameters; -1 for none.
Py_ssize_t parameter_index(const PublicWrapper& wrapper, PyObject* name) {
  const Py_ssize_t count = PyTuple_Size(wrapper.names);
  for (Py_ssize_t i = 0; i < count; ++i) {  // interned names: the pointers match
    if (PyTuple_GetItem(wrapper.names, i) == name) {
      return i;
    }
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (PyUnicode_Compare(PyTuple_GetItem(wrapper.names, i), name) == 0) {
      return i;
    }
  }
  PyErr_Clear();  // a keyword that is not a str: the wrapper words it
  return -1;
}

// Whether non-strict torch.export traces (torch.compiler._is_compiling_flag): its fake tensors
// must reach the wrapper, which knows them (torch.compile never calls the entry: it traces the
// wrapper's traced way in its place, vecadd/_compile.py).
bool export_traces(const PublicWrapper& wrapper) {
  if (wrapper.tracing_owner == nullptr) {
    return false;
  }
  PyObject* const flag = PyObject_GetAttr(wrapper.tracing_owner, wrapper.tracing_flag);
  const int traces = flag == nullptr ? 1 : PyObject_IsTrue(flag);
  Py_XDECREF(flag);
  PyErr_Clear();
  return traces != 0;
}

// The wrapper's call with the entry's arguments, as they were given.
PyObject* call_wrapper(const PublicWrapper& wrapper, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  PyObject* const positional = PyTuple_New(nargs);
  if (positional == nullptr) {
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    Py_INCREF(args[i]);
    PyTuple_SetItem(positional, i, args[i]);  // steals the reference
  }
  PyObject* keywords = nullptr;
  const Py_ssize_t keyword_count = kwnames == nullptr ? 0 : PyTuple_Size(kwnames);
  if (keyword_count > 0) {
    keywords = PyDict_New();
    for (Py_ssize_t i = 0; keywords != nullptr && i < keyword_count; ++i) {
      if (PyDict_SetItem(keywords, PyTuple_GetItem(kwnames, i), args[nargs + i]) != 0) {
        Py_CLEAR(keywords);
      }
    }
    if (keywords == nullptr) {
      Py_DECREF(positional);
      return nullptr;
    }
  }
  PyObject* const result = PyObject_Call(wrapper.wrapper, positional, keywords);
  Py_DECREF(positional);
  Py_XDECREF(keywords);
  return result;
}

// An operator's public entry: the wrapper's parameters (by position or keyword, defaults
// filled in) to its lean entry; any call that entry answers NotImplemented, or that binds
// otherwise than it expects, to the wrapper itself, which checks and words it.
template <class... Arguments>
PyObject* public_entry(const PublicWrapper& wrapper, const char* name,
                       const Overloads<Arguments...>* (*overloads)(), PyObject* const* args,
                       Py_ssize_t nargs, PyObject* kwnames) {
  constexpr Py_ssize_t kArguments = lean_arguments<Arguments...>();
  PyObject* given[kArguments] = {};
  bool plain = nargs <= wrapper.positional && !export_traces(wrapper);
  for (Py_ssize_t i = 0; plain && i < nargs; ++i) {
    given[i] = args[i];
  }
  const Py_ssize_t keyword_count = kwnames == nullptr ? 0 : PyTuple_Size(kwnames);
  for (Py_ssize_t i = 0; plain && i < keyword_count; ++i) {
    const Py_ssize_t index = parameter_index(wrapper, PyTuple_GetItem(kwnames, i));
    plain = index >= 0 && given[index] == nullptr;
    if (plain) {
      given[index] = args[nargs + i];
    }
  }
  for (Py_ssize_t i = 0; plain && i < kArguments; ++i) {
    if (given[i] == nullptr) {
      given[i] = PyTuple_GetItem(wrapper.defaults, i);
      plain = given[i] != wrapper.wrapper;  // a parameter without a default was not given
    }
  }
  if (plain) {
    EntryCall<Arguments...> call{name, overloads, given, kArguments};
    PyObject* const result = with_torch_errors(&run_lean_entry<Arguments...>, &call);
    if (result != Py_NotImplemented) {
      return result;  // nullptr with the error set where the call failed
    }
    Py_DECREF(result);
  }
  return call_wrapper(wrapper, args, nargs, kwnames);
}

// NAME_entry (the lean entry) and NAME_public (the public entry) for each operator the records
// describe.
#define VECADD_NATIVE_ENTRY(name, doc, ...)                                                 \
  const Overloads<__VA_ARGS__>* name##_overloads() {                                        \
    static const Overloads<__VA_ARGS__> overloads("vecadd::" #name);                        \
    return &overloads;                                                                      \
  }                                                                                         \
  PyObject* name##_entry(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {   \
    EntryCall<__VA_ARGS__> call{#name, &name##_overloads, args, nargs};                     \
    return with_torch_errors(&run_lean_entry<__VA_ARGS__>, &call);                          \
  }                                                                                         \
  PublicWrapper name##_wrapper;                                                             \
  PyObject* name##_public(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs,    \
                          PyObject* kwnames) {                                              \
    return public_entry<__VA_ARGS__>(name##_wrapper, #name, &name##_overloads, args, nargs, \
                                     kwnames);                                              \
  }
VECADD_OPERATOR_ENTRIES(VECADD_NATIVE_ENTRY)
#undef VECADD_NATIVE_ENTRY

// Each operator's public entry and what it knows, by the operator's name.
struct PublicEntryOf {
  const char* name;
  PublicWrapper* wrapper;
  PyObject* (*entry)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);
  Py_ssize_t arguments;  // the lean entry's: the record's arguments and out
};

#define VECADD_PUBLIC_ENTRY_OF(name, doc, ...) \
  PublicEntryOf{#name, &name##_wrapper, &name##_public, lean_arguments<__VA_ARGS__>()},
const PublicEntryOf public_entries[] = {VECADD_OPERATOR_ENTRIES(VECADD_PUBLIC_ENTRY_OF)};
#undef VECADD_PUBLIC_ENTRY_OF

// The name (args[0]) and doc (args[7]) given to _C.<maker>, which takes nine arguments; false
// with the error set otherwise.
bool name_and_doc(const char* maker, PyObject* const* args, Py_ssize_t nargs, const char*& name,
                  const char*& doc) {
  constexpr Py_ssize_t kParameters = 9;
  if (nargs != kParameters) {
    PyErr_Format(PyExc_TypeError, "vecadd._C.%s() takes %zd arguments, got %zd", maker, kParameters,
                 nargs);
    return false;
  }
  name = PyUnicode_AsUTF8AndSize(args[0], nullptr);
  doc = PyUnicode_AsUTF8AndSize(args[7], nullptr);
  return name != nullptr && doc != nullptr;
}

// _C.public_entry(name, wrapper, names, defaults, positional, tracing_owner, tracing_flag, doc,
// module): the operator's public entry, a builtin named `name` of module `module` that stands
// in for `wrapper` (see PublicWrapper; tracing_owner None where torch has no flag). Called once
// an import; a second call replaces what the first gave (the builtins it made keep working).
PyObject* make_public_entry(PyObject* module, PyObject* const* args, Py_ssize_t nargs) {
  const char* name = nullptr;
  const char* doc = nullptr;
  if (!name_and_doc("public_entry", args, nargs, name, doc)) {
    return nullptr;
  }
  const Py_ssize_t positional = PyLong_AsSsize_t(args[4]);
  if (positional == -1 && PyErr_Occurred() != nullptr) {
    return nullptr;
  }
  for (const PublicEntryOf& entry : public_entries) {
    if (std::string(entry.name) != name) {
      continue;
    }
    if (!PyTuple_Check(args[2]) || !PyTuple_Check(args[3]) ||
        PyTuple_Size(args[2]) != entry.arguments || PyTuple_Size(args[3]) != entry.arguments) {
      PyErr_Format(PyExc_ValueError,
                   "vecadd._C.public_entry(): %s takes %zd parameters (the record's arguments, "
                   "then out); expected names and defaults as tuples of that many",
                   name, entry.arguments);
      return nullptr;
    }
    PublicWrapper& wrapper = *entry.wrapper;
    PyObject* const owner = args[5] == Py_None ? nullptr : args[5];
    for (PyObject* kept : {args[1], args[2], args[3], owner, args[6]}) {
      Py_XINCREF(kept);  // kept for the process: builtins made before a replacement use them
    }
    wrapper.wrapper = args[1];
    wrapper.names = args[2];
    wrapper.defaults = args[3];
    wrapper.positional = positional;
    wrapper.tracing_owner = owner;
    wrapper.tracing_flag = args[6];
    // The definition outlives every builtin made from it; its doc (the wrapper's, with the
    // signature that inspect reads) is kept for the process too.
    wrapper.definition = {entry.name,
                          reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(entry.entry)),
                          METH_FASTCALL | METH_KEYWORDS, (new std::string(doc))->c_str()};
    return PyCFunction_NewEx(&wrapper.definition, module, args[8]);
  }
  PyErr_Format(PyExc_ValueError, "vecadd._C.public_entry(): no operator %s", name);
  return nullptr;
}

// What a layer's call (vecadd.VecAdd.__call__) reads on every call, given once by _C.layer_call:
// the layer's class, its forward and the class whose __call__ takes any other call (read at the
// call, where torch.fx patches it), the operator it calls and the keyword its weight goes by,
// torch's global module hooks (dicts), the names of a module's own hook dicts and of
// Module.compile's attribute, and the dict of the module where torch.jit.trace keeps the map it
// sets while it records submodule calls, with that map's name. Plain arrays: the limited API's
// tuple reads are calls.
struct LayerCall {
  static constexpr int kHookDicts = 4;
  PyObject* layer_class = nullptr;
  PyObject* forward = nullptr;       // the layer class's forward function
  PyObject* forward_name = nullptr;  // "forward"
  PyObject* base_class = nullptr;    // the class whose __call__ takes any other call
  PyObject* call_name = nullptr;     // "__call__"
  const PublicEntryOf* entry = nullptr;
  PyObject* weight_name = nullptr;     // the layer's attribute, and the operator's keyword
  PyObject* weight_keyword = nullptr;  // (weight_name,): the call's kwnames
  PyObject* global_hooks[kHookDicts] = {};
  PyObject* own_hooks[kHookDicts] = {};
  PyObject* compiled_name = nullptr;
  PyObject* trace_globals = nullptr;
  PyObject* trace_name = nullptr;
  PyMethodDef definition{};
};
LayerCall layer_call;

// Whether calling the module whose __dict__ is `own` would run its class's forward and nothing
// else: no hooks of its own or global ones, no Module.compile, no torch.jit.trace recording
// submodules, no forward set on it (vecadd/_torch_private.py's _forward_only_from_dicts, the same
// questions without its frames).
bool runs_forward_only(const LayerCall& call, PyObject* own) {
  for (PyObject* hooks : call.global_hooks) {
    if (PyDict_Size(hooks) != 0) {
      return false;
    }
  }
  for (PyObject* name : call.own_hooks) {
    PyObject* const hooks = PyDict_GetItemWithError(own, name);
    if (hooks == nullptr || !PyDict_Check(hooks) || PyDict_Size(hooks) != 0) {
      return false;
    }
  }
  if (PyDict_Contains(own, call.compiled_name) != 0 ||
      PyDict_Contains(own, call.forward_name) != 0) {
    return false;
  }
  return PyDict_GetItemWithError(call.trace_globals, call.trace_name) == Py_None;
}

// Whether `layer`'s class runs the layer class's forward: that class, or a subclass that keeps it.
bool runs_class_forward(const LayerCall& call, PyObject* layer) {
  PyObject* const layer_class = reinterpret_cast<PyObject*>(Py_TYPE(layer));
  if (layer_class == call.layer_class) {
    return true;
  }
  PyObject* const forward = PyObject_GetAttr(layer_class, call.forward_name);
  Py_XDECREF(forward);  // compared by identity alone
  return forward == call.forward;
}

// The layer's weight (a new reference) where calling `layer` would run the class's forward and
// nothing else; nullptr, with no error set, otherwise.
PyObject* forward_only_weight(const LayerCall& call, PyObject* layer) {
  PyObject* const own = PyObject_GenericGetDict(layer, nullptr);
  PyObject* weight = nullptr;
  if (own != nullptr && runs_class_forward(call, layer) && runs_forward_only(call, own)) {
    weight = PyDict_GetItemWithError(own, call.weight_name);
    Py_XINCREF(weight);  // held through the call, which may run Python code
  }
  Py_XDECREF(own);
  PyErr_Clear();  // a question that failed sends the call to Module.__call__, which words it
  return weight;
}

// layer(*args, **kwargs) as the base class's __call__ (torch.nn.Module's) takes it.
PyObject* base_class_call(const LayerCall& call, PyObject* layer, PyObject* const* args,
                          Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* const base_call = PyObject_GetAttr(call.base_class, call.call_name);
  PyObject* const positional = base_call == nullptr ? nullptr : PyTuple_New(nargs + 1);
  const Py_ssize_t named = kwnames == nullptr ? 0 : PyTuple_Size(kwnames);
  PyObject* const keywords = positional == nullptr || named == 0 ? nullptr : PyDict_New();
  PyObject* result = nullptr;
  bool built = positional != nullptr && (named == 0 || keywords != nullptr);
  for (Py_ssize_t i = 0; built && i <= nargs; ++i) {
    PyObject* const item = i == 0 ? layer : args[i - 1];
    Py_INCREF(item);
    built = PyTuple_SetItem(positional, i, item) == 0;  // steals the reference
  }
  for (Py_ssize_t i = 0; built && i < named; ++i) {
    built = PyDict_SetItem(keywords, PyTuple_GetItem(kwnames, i), args[nargs + i]) == 0;
  }
  if (built) {
    result = PyObject_Call(base_call, positional, keywords);
  }
  Py_XDECREF(keywords);
  Py_XDECREF(positional);
  Py_XDECREF(base_call);
  return result;
}

// The layer class's __call__ (bound to the layer by its method descriptor): layer(x, y) as the
// operator's public entry called with (x, y, <weight_name>=layer.<weight_name>) where that is
// all calling the layer would do, saving Module.__call__'s frames; the base class's __call__
// for every other call.
PyObject* layer_call_entry(PyObject* layer, PyObject* const* args, Py_ssize_t nargs,
                           PyObject* kwnames) {
  const LayerCall& call = layer_call;
  PyObject* const weight =
      nargs == 2 && kwnames == nullptr ? forward_only_weight(call, layer) : nullptr;
  if (weight == nullptr) {
    return base_class_call(call, layer, args, nargs, kwnames);
  }
  PyObject* const operands[3] = {args[0], args[1], weight};
  PyObject* const result = call.entry->entry(nullptr, operands, 2, call.weight_keyword);
  Py_DECREF(weight);
  return result;
}

// _C.layer_call(operator, weight_name, global_hooks, own_hooks, compiled_name, trace_owner,
// trace_name, doc, layer_class): the method descriptor that serves as layer_class.__call__, for
// the operator whose public entry _C.public_entry made. Called once an import; a second call
// replaces what the first gave.
PyObject* make_layer_call(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  const char* name = nullptr;
  const char* doc = nullptr;
  if (!name_and_doc("layer_call", args, nargs, name, doc)) {
    return nullptr;
  }
  const PublicEntryOf* found = nullptr;
  for (const PublicEntryOf& entry : public_entries) {
    if (std::string(entry.name) == name && entry.wrapper->wrapper != nullptr) {
      found = &entry;
    }
  }
  const auto dicts = [](PyObject* tuple, bool of_dicts) {
    bool fit = PyTuple_Check(tuple) && PyTuple_Size(tuple) == LayerCall::kHookDicts;
    for (Py_ssize_t i = 0; fit && i < LayerCall::kHookDicts; ++i) {
      PyObject* const item = PyTuple_GetItem(tuple, i);
      fit = of_dicts ? PyDict_Check(item) : PyUnicode_Check(item);
    }
    return fit;
  };
  PyObject* const trace_globals = PyModule_Check(args[5]) ? PyModule_GetDict(args[5]) : nullptr;
  PyObject* const layer_class = args[8];
  if (found == nullptr || !PyUnicode_Check(args[1]) || !dicts(args[2], true) ||
      !dicts(args[3], false) || !PyUnicode_Check(args[4]) || trace_globals == nullptr ||
      !PyUnicode_Check(args[6]) || !PyType_Check(layer_class)) {
    PyErr_Format(PyExc_ValueError,
                 "vecadd._C.layer_call(): expected an operator whose public entry exists (got "
                 "%s), a str, a tuple of 4 dicts, a tuple of 4 str, a str, a module, a str, a "
                 "str and a class",
                 name);
    return nullptr;
  }
  PyObject* const keyword = PyTuple_Pack(1, args[1]);
  PyObject* const forward_name = PyUnicode_FromString("forward");
  PyObject* const call_name = PyUnicode_FromString("__call__");
  PyObject* const forward =
      forward_name == nullptr ? nullptr : PyObject_GetAttr(layer_class, forward_name);
  PyObject* const base_class = PyObject_GetAttrString(layer_class, "__base__");
  if (keyword == nullptr || call_name == nullptr || forward == nullptr || base_class == nullptr) {
    for (PyObject* made : {keyword, forward_name, call_name, forward, base_class}) {
      Py_XDECREF(made);
    }
    return nullptr;
  }
  for (PyObject* kept : {args[1], args[2], args[3], args[4], trace_globals, args[6], layer_class}) {
    Py_INCREF(kept);  // kept for the process: descriptors made before a replacement use them
  }
  layer_call.layer_class = layer_class;
  layer_call.forward = forward;
  layer_call.forward_name = forward_name;
  layer_call.base_class = base_class;
  layer_call.call_name = call_name;
  layer_call.entry = found;
  layer_call.weight_name = args[1];
  layer_call.weight_keyword = keyword;
  for (int i = 0; i < LayerCall::kHookDicts; ++i) {
    layer_call.global_hooks[i] = PyTuple_GetItem(args[2], i);  // held by the kept tuples
    layer_call.own_hooks[i] = PyTuple_GetItem(args[3], i);
  }
  layer_call.compiled_name = args[4];
  layer_call.trace_globals = trace_globals;
  layer_call.trace_name = args[6];
  layer_call.definition = {
      "__call__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&layer_call_entry)),
      METH_FASTCALL | METH_KEYWORDS, (new std::string(doc))->c_str()};
  return PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(layer_class), &layer_call.definition);
}

PyCFunction fastcall(PyObject* (*entry)(PyObject*, PyObject* const*, Py_ssize_t)) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(entry));
}

#define VECADD_NATIVE_METHOD(name, doc, ...) {#name, fastcall(&name##_entry), METH_FASTCALL, doc},
PyMethodDef methods[] = {
    VECADD_OPERATOR_ENTRIES(VECADD_NATIVE_METHOD){
        "public_entry", fastcall(&make_public_entry), METH_FASTCALL,
        "public_entry(name, wrapper, names, defaults, positional, tracing_owner, tracing_flag, "
        "doc, module)\n\nThe builtin that stands in for an operator's Python wrapper "
        "(vecadd/_ops.py)."},
    {"layer_call", fastcall(&make_layer_call), METH_FASTCALL,
     "layer_call(operator, weight_name, global_hooks, own_hooks, compiled_name, trace_owner, "
     "trace_name, doc, layer_class)\n\nThe __call__ of a layer class that calls its operator "
     "where calling the layer would run its forward alone (vecadd/_module.py)."},
    {nullptr, nullptr, 0, nullptr}};
#undef VECADD_NATIVE_METHOD

PyModuleDef_Slot slots[] = {
#if !defined(Py_LIMITED_API) && PY_VERSION_HEX >= 0x030D0000
    // Safe without the GIL (no state of its own), so a free-threaded CPython keeps the GIL off.
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, nullptr}};

PyModuleDef definition = {
    PyModuleDef_HEAD_INIT,
    VECADD_MODULE_NAME(TORCH_EXTENSION_NAME),
    "vecadd's lean entries to torch.ops.vecadd.* (vecadd.build_info() says which binding runs)",
    0,
    methods,
    slots,
    nullptr,
    nullptr,
    nullptr};

}  // namespace
}  // namespace vecadd::torch_binding

PyMODINIT_FUNC VECADD_MODULE_INIT(TORCH_EXTENSION_NAME)(void) {
  return PyModuleDef_Init(&vecadd::torch_binding::definition);
}
