// vecadd._C: loading it registers the vecadd operators with torch; it also exposes a lean
// Python entry point to them (how it was built is in vecadd/_build_config.py).
#include <Python.h>  // first, as Python asks of its extensions

#include <ATen/PythonTorchFunctionTLS.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <string>

#include "ops.h"

namespace vecadd::torch_binding {
namespace {

// alpha as the double the schema takes, for the values that convert without a question: a
// float or an int a double holds exactly. Anything else (a bool too, which vecadd refuses)
// goes through Python (vecadd._ops), which owns the words of alpha's errors.
bool double_from_python(PyObject* value, double& alpha) {
  if (PyFloat_CheckExact(value)) {
    alpha = PyFloat_AS_DOUBLE(value);
    return true;
  }
  if (!PyLong_Check(value) || PyBool_Check(value)) {  // bool is an int subclass
    return false;
  }
  int overflow = 0;
  const long long integer = PyLong_AsLongLongAndOverflow(value, &overflow);
  constexpr long long kExactLimit = 1LL << 53;  // every integer up to 2^53 is a double
  if (overflow != 0 || integer > kExactLimit || integer < -kExactLimit) {
    return false;
  }
  alpha = static_cast<double>(integer);
  return true;
}

// add(x, y, alpha, out): the hot path behind vecadd.add for plain tensors. Returns
// NotImplemented for anything but plain tensors or under a torch function mode (so that the
// Python face can honour __torch_function__ through torch.ops.vecadd.add, and word the errors
// of wrong arguments) and for an alpha it does not convert.
PyObject* add_entry(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs != 4) {
    PyErr_Format(PyExc_TypeError, "vecadd._C.add() takes 4 arguments (x, y, alpha, out), got %zd",
                 nargs);
    return nullptr;
  }
  PyObject* const x_object = args[0];
  PyObject* const y_object = args[1];
  PyObject* const alpha_object = args[2];
  PyObject* const out_object = args[3] == Py_None ? nullptr : args[3];
  if (!THPVariable_CheckExact(x_object) || !THPVariable_CheckExact(y_object) ||
      (out_object != nullptr && !THPVariable_CheckExact(out_object))) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  // A torch function mode expects to see vecadd::add: only torch.ops' way reaches it.
  if (at::impl::torch_function_mode_enabled()) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  double alpha = 1;
  if (!double_from_python(alpha_object, alpha)) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  const at::Tensor& x = THPVariable_Unpack(x_object);
  const at::Tensor& y = THPVariable_Unpack(y_object);
  if (out_object == nullptr) {
    at::Tensor result;
    {
      const pybind11::gil_scoped_release no_gil;
      result = add_operator().call(x, y, alpha);
    }
    return THPVariable_Wrap(std::move(result));
  }
  at::Tensor out = THPVariable_Unpack(out_object);
  {
    const pybind11::gil_scoped_release no_gil;
    add_out_operator().call(x, y, alpha, out);
  }
  Py_INCREF(out_object);
  return out_object;
  END_HANDLE_TH_ERRORS
}

PyMethodDef add_method = {
    "add", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&add_entry)), METH_FASTCALL,
    "add(x, y, alpha, out) -> Tensor\n\nLean entry to torch.ops.vecadd.add for plain tensors; "
    "use vecadd.add instead."};

}  // namespace
}  // namespace vecadd::torch_binding

// Safe without the GIL (no state of its own), so a free-threaded CPython keeps the GIL off.
PYBIND11_MODULE(_C, m, pybind11::mod_gil_not_used()) {
  m.doc() = "vecadd's compiled core: registers torch.ops.vecadd.* on import";
  m.add_object("add", pybind11::reinterpret_steal<pybind11::object>(
                          PyCFunction_New(&vecadd::torch_binding::add_method, nullptr)));
}
