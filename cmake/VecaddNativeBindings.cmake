# The portable wheel's native bindings (docs/portable.md): the native build's torch-facing C++
# (VECADD_NATIVE_SOURCES: the CPU kernels' registration and the C++ Autograd kernels) compiled
# from the same sources once per torch release, each against that release's headers, into
# lib/torchX_Y/ beside the stable binding:
#
#   libvecadd_native_ops.so  registers the CPU and Autograd kernels when vecadd loads it
#                            (torch.ops.load_library); it links torch's CPU libraries and vecadd's
#                            kernel library, never torch_cuda, so that one file serves the
#                            CPU-only and the CUDA builds of its torch release
#   libvecadd_native_cuda_ops.so
#                            registers the CUDA kernels, loaded only under a CUDA torch after the
#                            CUDA library of its CUDA major (lib/cudaN/libvecadd_cuda.so, which
#                            it names without a path, so either major serves); it adds libc10_cuda
#                            (torch's current stream), which every CUDA build of torch holds and
#                            a CPU-only one lacks: built where the torch package has it, and with
#                            CUDA kernels; otherwise the CUDA library's stable kernels serve
#   _C.abi3.so               the lean Python entries (module.cpp, VECADD_NATIVE_ENTRY_SOURCES)
#                            under CPython's limited API 3.10: every CPython from 3.10 on but
#                            the free-threaded ones, which reach the operators through the
#                            dispatcher instead (not built by a free-threaded Python, nor
#                            against a torch whose Python headers differ from what
#                            src/torch/torch_python.h declares of them)
#   binding.json             the torch it was built against, its C++ standard and C++ ABI
#
# The torches: each torch package under VECADD_NATIVE_TORCHES (FOLDER/VERSION/torch, as
# tools/release/binding_torches.py unpacks them), and the build's own torch for a series the
# folder lacks. vecadd/_loader.py picks the binding of the running torch's series at import.

set(VECADD_NATIVE_BINDING_NAME vecadd_native_ops)
set(VECADD_NATIVE_CUDA_BINDING_NAME vecadd_native_cuda_ops)

# The torch packages to compile bindings against, one per series (oldest first), as a list of
# folders in `out_var`; a second torch of a series in `folder` stops the configure step.
function(vecadd_native_binding_torches folder build_torch_root out_var)
  set(_roots "")
  set(_series "")
  if(folder)
    file(GLOB _versions "${folder}/*/torch/version.py")
    if(NOT _versions)
      message(FATAL_ERROR "vecadd: VECADD_NATIVE_TORCHES='${folder}' holds no VERSION/torch/"
                          "version.py; expected a folder of torch packages as "
                          "tools/release/binding_torches.py unpacks them")
    endif()
    foreach(_version_file IN LISTS _versions)
      get_filename_component(_root "${_version_file}" DIRECTORY)
      vecadd_read_torch_files("${_root}" _torch)
      if(_torch_SERIES IN_LIST _series)
        message(FATAL_ERROR "vecadd: VECADD_NATIVE_TORCHES='${folder}' holds a second torch of "
                            "the ${_torch_SERIES} series ('${_root}'); expected one per series")
      endif()
      list(APPEND _series "${_torch_SERIES}")
      list(APPEND _roots "${_root}")
    endforeach()
  endif()
  vecadd_read_torch_files("${build_torch_root}" _build)
  if(NOT _build_SERIES IN_LIST _series)
    list(APPEND _roots "${build_torch_root}")
  endif()
  set(${out_var} "${_roots}" PARENT_SCOPE)
endfunction()

# Whether torch's Python headers at `root` declare what src/torch/torch_python.h declares of
# them (the Python entries are built under CPython's limited API, which those headers are not);
# in `out_var`, the declarations that differ, empty when none does.
function(vecadd_torch_python_differences root out_var)
  file(READ "${root}/include/torch/csrc/autograd/python_variable.h" _variable)
  file(READ "${root}/include/torch/csrc/Exceptions.h" _exceptions)
  set(_space "[ \t\n]*")
  set(_comments "(//[^\n]*\n[ \t]*)*")
  set(_differ "")
  if(NOT _variable MATCHES "struct THPVariable {${_space}PyObject_HEAD${_space}${_comments}at::Tensor cdata;")
    list(APPEND _differ "THPVariable (the object head, then at::Tensor cdata)")
  endif()
  foreach(_declared IN ITEMS "extern PyObject\\* THPVariableClass;"
                             "extern PyObject\\* ParameterClass;"
                             "PyObject\\* THPVariable_Wrap\\(at::TensorBase&& var\\);")
    if(NOT _variable MATCHES "TORCH_PYTHON_API ${_declared}")
      string(REPLACE "\\" "" _shown "${_declared}")
      list(APPEND _differ "${_shown}")
    endif()
  endforeach()
  if(NOT _exceptions MATCHES "TORCH_PYTHON_API void translate_exception_to_python\\(")
    list(APPEND _differ "translate_exception_to_python")
  endif()
  set(${out_var} "${_differ}" PARENT_SCOPE)
endfunction()

# One native binding, against the torch package at `root`, and its Python entries unless
# `with_entries` is false; the series it serves in `out_series`.
function(vecadd_add_native_binding root operators_header with_entries out_series)
  vecadd_read_torch_files("${root}" _torch)
  string(REPLACE "." "_" _id "${_torch_SERIES}")
  set(_folder "torch${_id}")  # torch2_14: a name Python could import (check-wheel-contents W004)
  set(_output "${CMAKE_CURRENT_BINARY_DIR}/native/${_folder}")
  set(_ops vecadd_native_ops_${_id})
  find_library(_c10 c10 PATHS "${root}/lib" NO_DEFAULT_PATH NO_CACHE REQUIRED)
  find_library(_torch_cpu torch_cpu PATHS "${root}/lib" NO_DEFAULT_PATH NO_CACHE REQUIRED)

  add_library(${_ops} MODULE ${VECADD_BINDING_SOURCES} "${operators_header}"
    ${VECADD_NATIVE_SOURCES})
  set(_targets ${_ops})
  set(_kernel_libraries ${_ops})
  set(_cuda_kernels false)
  if(TARGET vecadd_cuda_kernels)
    find_library(_c10_cuda c10_cuda PATHS "${root}/lib" NO_DEFAULT_PATH NO_CACHE)
    if(_c10_cuda)
      set(_cuda_kernels true)
      set(_cuda_ops vecadd_native_cuda_ops_${_id})
      add_library(${_cuda_ops} MODULE ${VECADD_BINDING_SOURCES} "${operators_header}"
        ${VECADD_NATIVE_CUDA_SOURCES})
      target_compile_definitions(${_cuda_ops} PRIVATE VECADD_CUDA_KERNELS_ONLY=1)
      # vecadd_cuda_kernels brings VECADD_WITH_CUDA, the CUDA headers and libvecadd_cuda.so.
      target_link_libraries(${_cuda_ops} PRIVATE "${_c10_cuda}" vecadd_cuda_kernels)
      set_target_properties(${_cuda_ops} PROPERTIES OUTPUT_NAME ${VECADD_NATIVE_CUDA_BINDING_NAME})
      list(APPEND _kernel_libraries ${_cuda_ops})
      list(APPEND _targets ${_cuda_ops})
    else()
      message(STATUS "vecadd: torch ${_torch_VERSION} at ${root} holds no libc10_cuda (a CPU-only "
                     "build): its native binding's CUDA calls take the CUDA library's stable kernels")
    endif()
  endif()
  set(_entries false)
  if(with_entries)
    vecadd_torch_python_differences("${root}" _differ)
    if(_differ)
      string(REPLACE ";" "; " _differ "${_differ}")
      message(STATUS "vecadd: torch ${_torch_VERSION}'s Python headers declare otherwise than "
                     "src/torch/torch_python.h (${_differ}): its native binding goes without "
                     "Python entries")
      set(with_entries FALSE)
    endif()
  endif()
  if(with_entries)
    set(_entries true)
    find_library(_torch_python torch_python PATHS "${root}/lib" NO_DEFAULT_PATH NO_CACHE REQUIRED)
    set(_entry vecadd_native_entry_${_id})
    Python_add_library(${_entry} MODULE USE_SABI 3.10 WITH_SOABI ${VECADD_NATIVE_ENTRY_SOURCES}
      "${operators_header}")
    set_target_properties(${_entry} PROPERTIES OUTPUT_NAME _C)
    target_compile_definitions(${_entry} PRIVATE TORCH_EXTENSION_NAME=_C)
    target_link_libraries(${_entry} PRIVATE "${_torch_python}")
    list(APPEND _targets ${_entry})
  endif()
  foreach(_target IN LISTS _targets)
    set_target_properties(${_target} PROPERTIES
      CXX_STANDARD ${_torch_CXX_STANDARD}
      CXX_STANDARD_REQUIRED ON
      CXX_EXTENSIONS OFF
      CXX_VISIBILITY_PRESET hidden
      LIBRARY_OUTPUT_DIRECTORY "${_output}")
    target_include_directories(${_target} PRIVATE "${PROJECT_SOURCE_DIR}/src/binding"
      "${VECADD_GENERATED_DIR}/binding")
    # torch's headers (and the pybind11 copy they were written against) before any other.
    target_include_directories(${_target} SYSTEM BEFORE PRIVATE "${root}/include"
      "${root}/include/torch/csrc/api/include")
    target_include_directories(${_target} PRIVATE
      "$<TARGET_PROPERTY:vecadd_kernels,INTERFACE_INCLUDE_DIRECTORIES>")
    target_compile_definitions(${_target} PRIVATE "_GLIBCXX_USE_CXX11_ABI=${_torch_CXX11_ABI}")
    target_link_libraries(${_target} PRIVATE "${_torch_cpu}" "${_c10}")
  endforeach()
  foreach(_library IN LISTS _kernel_libraries)
    # One translation unit: torch's headers, most of each file's compile time, parsed once per
    # binding (25 s of CPU here where the files apart took 49 s, torch 2.13).
    set_target_properties(${_library} PROPERTIES
      PREFIX lib
      INSTALL_RPATH "$ORIGIN/.."
      UNITY_BUILD ON
      UNITY_BUILD_BATCH_SIZE 0)
    target_link_libraries(${_library} PRIVATE vecadd_kernels)
    # Every symbol it calls is one this torch release exports: checked here, not at a user's
    # import.
    target_link_options(${_library} PRIVATE "LINKER:--no-undefined")
    vecadd_use_torch_openmp(${_library} "${root}")
  endforeach()
  set_target_properties(${_ops} PROPERTIES OUTPUT_NAME ${VECADD_NATIVE_BINDING_NAME})
  if(_cuda_kernels)
    # The loader has libvecadd_cuda.so of torch's CUDA major loaded first, which the name matches;
    # the path is for tools that resolve it from the file (auditwheel) and finds this build's own.
    set_target_properties(${_cuda_ops} PROPERTIES
      INSTALL_RPATH "$ORIGIN/..;$ORIGIN/../${VECADD_CUDA_LIBRARY_DIR}")
  endif()

  file(CONFIGURE OUTPUT "${_output}/binding.json" CONTENT [[
{
  "vecadd_version": "@PROJECT_VERSION@",
  "torch_version": "@_torch_VERSION@",
  "torch_series": "@_torch_SERIES@",
  "cxx_standard": @_torch_CXX_STANDARD@,
  "cxx11_abi": @_torch_CXX11_ABI@,
  "python_entries": @_entries@,
  "cuda_kernels": @_cuda_kernels@
}
]] @ONLY)
  install(TARGETS ${_targets} LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/${_folder}")
  install(FILES "${_output}/binding.json" DESTINATION "${CMAKE_INSTALL_LIBDIR}/${_folder}")
  set(${out_series} "${_torch_SERIES}" PARENT_SCOPE)
endfunction()

# A native binding per torch release (VECADD_NATIVE_TORCHES and the build's own torch), each in
# lib/torchX_Y/; the series they serve in VECADD_NATIVE_BINDING_SERIES.
function(vecadd_add_native_bindings operators_header)
  get_filename_component(_build_root "${VECADD_TORCH_INCLUDE_DIR}" DIRECTORY)
  vecadd_native_binding_torches("${VECADD_NATIVE_TORCHES}" "${_build_root}" _roots)
  # A free-threaded CPython has no limited API: its bindings go without entries.
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      "import sysconfig; print(int(bool(sysconfig.get_config_var('Py_GIL_DISABLED'))))"
    OUTPUT_VARIABLE _free_threaded OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  if(_free_threaded)
    set(_with_entries FALSE)
    message(STATUS "vecadd: ${Python_EXECUTABLE} is a free-threaded CPython, which has no "
                   "limited API: the native bindings go without their Python entries")
  else()
    set(_with_entries TRUE)
    find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.SABIModule)
  endif()
  set(_all "")
  foreach(_root IN LISTS _roots)
    vecadd_add_native_binding("${_root}" "${operators_header}" ${_with_entries} _series)
    list(APPEND _all "${_series}")
  endforeach()
  string(REPLACE ";" ", " _listed "${_all}")
  message(STATUS "vecadd: native bindings for torch ${_listed}")
  set(VECADD_NATIVE_BINDING_SERIES "${_all}" PARENT_SCOPE)
endfunction()
