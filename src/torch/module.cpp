// vecadd._C: loading it registers the vecadd operators with torch; it also exposes a lean
// Python entry point to them (how it was built is in vecadd/_build_config.py).
#include <Python.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <string>

#include "ops.h"

namespace vecadd::torch_binding {
namespace {

PyObject* raise_not_a_tensor(const char* name, PyObject* given) {
  PyErr_Format(PyExc_TypeError,
               "vecadd.add(): argument '%s' must be a torch.Tensor, got %s; expected a tensor "
               "(wrap numbers or lists with torch.as_tensor)",
               name, Py_TYPE(given)->tp_name);
  return nullptr;
}

// alpha from a Python bool, int or float; anything else is a TypeError naming it.
bool scalar_from_python(PyObject* value, c10::Scalar& scalar) {
  if (PyBool_Check(value)) {
    scalar = c10::Scalar(value == Py_True);
    return true;
  }
  if (PyLong_Check(value)) {
    int overflow = 0;
    const long long integer = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow != 0) {
      PyErr_SetString(PyExc_OverflowError,
                      "vecadd.add(): argument 'alpha' does not fit in 64 bits; expected an "
                      "integer between -2**63 and 2**63-1");
      return false;
    }
    scalar = c10::Scalar(static_cast<int64_t>(integer));
    return true;
  }
  if (PyFloat_Check(value)) {
    scalar = c10::Scalar(PyFloat_AS_DOUBLE(value));
    return true;
  }
  PyErr_Format(PyExc_TypeError,
               "vecadd.add(): argument 'alpha' must be a real number (int or float), got %s",
               Py_TYPE(value)->tp_name);
  return false;
}

// add(x, y, alpha, out): the hot path behind vecadd.add for plain tensors. Returns
// NotImplemented for tensor subclasses so that the Python face can honour
// __torch_function__ by going through torch.ops.vecadd.add instead.
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
  if (!THPVariable_Check(x_object)) {
    return raise_not_a_tensor("x", x_object);
  }
  if (!THPVariable_Check(y_object)) {
    return raise_not_a_tensor("y", y_object);
  }
  if (out_object != nullptr && !THPVariable_Check(out_object)) {
    return raise_not_a_tensor("out", out_object);
  }
  if (!THPVariable_CheckExact(x_object) || !THPVariable_CheckExact(y_object) ||
      (out_object != nullptr && !THPVariable_CheckExact(out_object))) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  c10::Scalar alpha;
  if (!scalar_from_python(alpha_object, alpha)) {
    return nullptr;
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

PYBIND11_MODULE(_C, m) {
  m.doc() = "vecadd's compiled core: registers torch.ops.vecadd.* on import";
  m.add_object("add", pybind11::reinterpret_steal<pybind11::object>(
                          PyCFunction_New(&vecadd::torch_binding::add_method, nullptr)));
}
