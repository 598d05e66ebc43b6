// What vecadd's Python entries (module.cpp) use of torch's Python layer, libtorch_python, declared
// here as torch 2.10 to 2.15 declare them in torch/csrc/autograd/python_variable.h and
// torch/csrc/Exceptions.h: those headers include pybind11, which builds only against CPython's
// full API, and the entries are built under its limited API. The build checks each torch's
// headers for these declarations before it compiles entries against that torch
// (cmake/VecaddNativeBindings.cmake); a name torch no longer exports fails the entries' load,
// and vecadd then reaches the operators through the dispatcher.
#pragma once

#include <Python.h>

#include <ATen/core/Tensor.h>
#include <c10/macros/Export.h>

#include <exception>

// torch.Tensor's and nn.Parameter's Python types.
C10_IMPORT extern PyObject* THPVariableClass;
C10_IMPORT extern PyObject* ParameterClass;

// A new reference to the Python tensor of `tensor`.
C10_IMPORT PyObject* THPVariable_Wrap(at::TensorBase&& tensor);

namespace torch {
// Sets the Python error a C++ exception stands for (torch's own words and types).
C10_IMPORT void translate_exception_to_python(const std::exception_ptr& exception);
}  // namespace torch

namespace vecadd::torch_binding {

// A torch.Tensor's Python object: the object head (PyObject_HEAD), then the tensor
// (THPVariable's cdata).
struct PythonTensor {
  PyObject head;
  at::Tensor tensor;
};

}  // namespace vecadd::torch_binding
