// vecadd._C: loading it registers the vecadd operators with torch; it also exposes a lean
// Python entry point to each of them, written from the records (VECADD_OPERATOR_ENTRIES in the
// generated vecadd_operators.h), so a new operator needs no line here (how it was built is in
// vecadd/_build_config.py).
#include <Python.h>  // first, as Python asks of its extensions

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstddef>
#include <exception>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "vecadd_operators.h"

namespace vecadd::torch_binding {
namespace {

// Each schema argument type, converted from the Python values the lean entries take without a
// question; parse answers false for anything else, and the Python face (vecadd._ops) then
// checks the call and words its errors.

// A float, or an int a double holds exactly (not a bool, which vecadd refuses).
bool double_from_python(PyObject* value, double& result) {
  if (PyFloat_CheckExact(value)) {
    result = PyFloat_AS_DOUBLE(value);
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

// visit(items, size) over a list's or tuple's items, the list locked against other threads
// meanwhile (a free-threaded CPython has no GIL to keep it from changing); false for any other
// object.
template <class Visit>
bool visit_items(PyObject* sequence, Visit&& visit) {
  if (!PyList_CheckExact(sequence) && !PyTuple_CheckExact(sequence)) {
    return false;
  }
  bool taken = false;
  std::exception_ptr failure;  // rethrown once the section has ended, which must not be skipped
#if PY_VERSION_HEX >= 0x030D0000
  Py_BEGIN_CRITICAL_SECTION(sequence);
#endif
  try {
    taken = visit(PySequence_Fast_ITEMS(sequence), PySequence_Fast_GET_SIZE(sequence));
  } catch (...) {
    failure = std::current_exception();
  }
#if PY_VERSION_HEX >= 0x030D0000
  Py_END_CRITICAL_SECTION();
#endif
  if (failure) {
    std::rethrow_exception(failure);
  }
  return taken;
}

// A plain torch.Tensor (a subclass may define __torch_function__: only torch.ops honours it),
// borrowed from its Python object, which the caller's arguments keep alive through the call.
struct TensorArgument {
  static constexpr bool kFromPython = true;
  using Type = const at::Tensor&;  // as the schema's C++ signature takes it
  const at::Tensor* tensor = nullptr;
  bool parse(PyObject* value) {
    if (!THPVariable_CheckExact(value)) {
      return false;
    }
    tensor = &THPVariable_Unpack(value);
    return true;
  }
  const at::Tensor& get() const { return *tensor; }
};

// A non-empty list or tuple of plain tensors.
struct TensorListArgument {
  static constexpr bool kFromPython = true;
  using Type = at::TensorList;
  std::vector<at::Tensor> tensors;
  bool parse(PyObject* value) {
    return visit_items(value, [this](PyObject** items, Py_ssize_t size) {
      tensors.reserve(static_cast<std::size_t>(size));
      for (Py_ssize_t i = 0; i < size; ++i) {
        if (!THPVariable_CheckExact(items[i])) {
          return false;
        }
        tensors.push_back(THPVariable_Unpack(items[i]));
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
    return visit_items(object, [this](PyObject** items, Py_ssize_t size) {
      values.emplace(static_cast<std::size_t>(size));
      for (Py_ssize_t i = 0; i < size; ++i) {
        if (!double_from_python(items[i], (*values)[static_cast<std::size_t>(i)])) {
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

// The lean entry of an operator whose schema takes Arguments, then out: name(*arguments, out).
// It calls the public operator (or its out overload) through the dispatcher, and returns
// NotImplemented for anything but plain values or under a torch function mode, which expects
// to see the operator's call.
template <class... Arguments>
PyObject* lean_entry(const char* name, const Overloads<Arguments...>& overloads,
                     PyObject* const* args, Py_ssize_t nargs) {
  constexpr Py_ssize_t kArguments = (Py_ssize_t{Arguments::kFromPython} + ... + 1);
  if (nargs != kArguments) {
    PyErr_Format(PyExc_TypeError, "vecadd._C.%s() takes %zd arguments (the last one out), got %zd",
                 name, kArguments, nargs);
    return nullptr;
  }
  PyObject* const out_object = args[kArguments - 1] == Py_None ? nullptr : args[kArguments - 1];
  if ((out_object != nullptr && !THPVariable_CheckExact(out_object)) ||
      at::impl::torch_function_mode_enabled()) {
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
  if (!plain) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  if (out_object == nullptr) {
    at::Tensor result;
    {
      const pybind11::gil_scoped_release no_gil;
      result = std::apply(
          [&](const Arguments&... each) { return overloads.functional.call(each.get()...); },
          parsed);
    }
    return THPVariable_Wrap(std::move(result));
  }
  at::Tensor out = THPVariable_Unpack(out_object);
  {
    const pybind11::gil_scoped_release no_gil;
    std::apply([&](const Arguments&... each) { overloads.out.call(each.get()..., out); }, parsed);
  }
  Py_INCREF(out_object);
  return out_object;
}

// NAME_entry for each operator the records describe.
#define VECADD_NATIVE_ENTRY(name, doc, ...)                                               \
  PyObject* name##_entry(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) { \
    HANDLE_TH_ERRORS                                                                      \
    static const Overloads<__VA_ARGS__> overloads("vecadd::" #name);                      \
    return lean_entry(#name, overloads, args, nargs);                                     \
    END_HANDLE_TH_ERRORS                                                                  \
  }
VECADD_OPERATOR_ENTRIES(VECADD_NATIVE_ENTRY)
#undef VECADD_NATIVE_ENTRY

PyCFunction fastcall(_PyCFunctionFast entry) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(entry));
}

#define VECADD_NATIVE_METHOD(name, doc, ...) {#name, fastcall(&name##_entry), METH_FASTCALL, doc},
PyMethodDef methods[] = {VECADD_OPERATOR_ENTRIES(VECADD_NATIVE_METHOD)};
#undef VECADD_NATIVE_METHOD

}  // namespace
}  // namespace vecadd::torch_binding

// Safe without the GIL (no state of its own), so a free-threaded CPython keeps the GIL off.
PYBIND11_MODULE(_C, m, pybind11::mod_gil_not_used()) {
  m.doc() = "vecadd's compiled core: registers torch.ops.vecadd.* on import";
  for (PyMethodDef& method : vecadd::torch_binding::methods) {
    m.add_object(method.ml_name,
                 pybind11::reinterpret_steal<pybind11::object>(PyCFunction_New(&method, nullptr)));
  }
}
