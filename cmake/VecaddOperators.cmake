# The two builds of vecadd's torch operators over the same kernels and call rules (src/binding):
# each function defines its targets and leaves installing them to the caller.

set(VECADD_BINDING_SOURCES "${PROJECT_SOURCE_DIR}/src/binding/call_rules.cpp"
  "${PROJECT_SOURCE_DIR}/src/binding/promotion.cpp")
# torch's full C++ API: the kernel registration for CPU (and CUDA, in the native build) and the
# C++ Autograd kernels, compiled into the native build's vecadd._C and into each native binding
# of the portable wheel (VecaddNativeBindings.cmake).
set(VECADD_NATIVE_SOURCES
  "${PROJECT_SOURCE_DIR}/src/torch/native_api.cpp"
  "${PROJECT_SOURCE_DIR}/src/torch/autograd.cpp"
  "${PROJECT_SOURCE_DIR}/src/torch/registration.cpp")
# What a portable wheel's native binding compiles again for its CUDA kernels' own library.
set(VECADD_NATIVE_CUDA_SOURCES
  "${PROJECT_SOURCE_DIR}/src/torch/native_api.cpp"
  "${PROJECT_SOURCE_DIR}/src/torch/registration.cpp")
# The lean Python entries (vecadd._C) over the dispatcher: CPython's C API, its limited API where
# built for the portable wheel.
set(VECADD_NATIVE_ENTRY_SOURCES "${PROJECT_SOURCE_DIR}/src/torch/module.cpp")

# The C++ side of the operators' one description (python/vecadd/_operators.py): their words,
# schemas and kernel lists, written at build time for both builds' registration.
function(vecadd_generate_operators_header out_var)
  set(_header "${VECADD_GENERATED_DIR}/binding/vecadd_operators.h")
  set(${out_var} "${_header}" PARENT_SCOPE)
  get_property(_written GLOBAL PROPERTY VECADD_OPERATORS_HEADER_RULE)
  if(_written)  # one rule for every target that compiles it
    return()
  endif()
  set_property(GLOBAL PROPERTY VECADD_OPERATORS_HEADER_RULE TRUE)
  add_custom_command(
    OUTPUT "${_header}"
    COMMAND Python::Interpreter "${PROJECT_SOURCE_DIR}/cmake/generate_operators.py" "${_header}"
    DEPENDS "${PROJECT_SOURCE_DIR}/python/vecadd/_operators.py"
            "${PROJECT_SOURCE_DIR}/cmake/generate_operators.py"
    COMMENT "Writing the operators' registration header from python/vecadd/_operators.py"
    VERBATIM)
endfunction()

# The lean ways of the Python package (vecadd/_lean_ways.py), written from the same records and
# torch's tracing questions as vecadd/_torch_private.py words them; installed into the package.
function(vecadd_generate_lean_ways)
  set(_lean_ways "${VECADD_GENERATED_DIR}/_lean_ways.py")
  add_custom_command(
    OUTPUT "${_lean_ways}"
    COMMAND Python::Interpreter "${PROJECT_SOURCE_DIR}/cmake/generate_operators.py"
            --lean-ways "${_lean_ways}"
    DEPENDS "${PROJECT_SOURCE_DIR}/python/vecadd/_operators.py"
            "${PROJECT_SOURCE_DIR}/python/vecadd/_torch_private.py"
            "${PROJECT_SOURCE_DIR}/cmake/generate_operators.py"
    COMMENT "Writing the lean ways from python/vecadd/_operators.py"
    VERBATIM)
  add_custom_target(vecadd_lean_ways ALL DEPENDS "${_lean_ways}")
  install(FILES "${_lean_ways}" DESTINATION .)
endfunction()

# The LibTorch stable ABI: plain shared libraries (no Python module; vecadd's Python face loads
# them with torch.ops.load_library), compiled against torch's header-only and stable headers
# with TORCH_TARGET_VERSION at the stable minimum, so that no newer shim is reachable, and
# linked to the torch libraries that export the shims. torch's CMake package is not used.
# `target` registers the CPU kernels (libvecadd_stable_ops.so, loads under every torch); with
# CUDA, `cuda_target` registers the CUDA kernels (cudaN/libvecadd_stable_ops_cuda.so, loaded
# only under a torch of that CUDA major, since it links libtorch_cuda and that CUDA runtime);
# `schemas_target` defines the schemas for C++ programs (libvecadd_stable_schemas.so). They are
# shared libraries with a soname, not modules, so that a C++ program can link them (vecadd::ops).
function(vecadd_add_stable_operators target cuda_target schemas_target)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/cmake/torch_pin.py" --stable-minimum
    OUTPUT_VARIABLE _minimum OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  string(REPLACE "." ";" _parts "${_minimum}")
  list(GET _parts 0 _major)
  list(GET _parts 1 _minor)
  if(VECADD_TORCH_VERSION VERSION_LESS _minimum)
    message(FATAL_ERROR "vecadd: the stable operators need torch >= ${_minimum} to build; found "
                        "torch ${VECADD_TORCH_VERSION} (build with VECADD_TORCH_ABI=native instead)")
  endif()
  # TORCH_TARGET_VERSION packs major and minor into the top two bytes.
  math(EXPR _target_version "(${_major} << 56) | (${_minor} << 48)" OUTPUT_FORMAT HEXADECIMAL)
  find_library(VECADD_TORCH_CPU_LIBRARY torch_cpu
    PATHS "${VECADD_TORCH_LIBRARY_DIR}" NO_DEFAULT_PATH REQUIRED)

  vecadd_generate_operators_header(_operators_header)
  set(_targets "")
  if(NOT VECADD_CUDA_LIBRARY_ONLY)
    list(APPEND _targets ${target})
    add_library(${schemas_target} SHARED "${_operators_header}"
      "${PROJECT_SOURCE_DIR}/src/stable/schemas.cpp")
    # The operators' header names the kernel library's types; the schemas need no kernels.
    target_include_directories(${schemas_target} PRIVATE
      "$<TARGET_PROPERTY:vecadd_kernels,INTERFACE_INCLUDE_DIRECTORIES>")
  endif()
  if(VECADD_WITH_CUDA)
    list(APPEND _targets ${cuda_target})
  endif()
  foreach(_target IN LISTS _targets)
    add_library(${_target} SHARED ${VECADD_BINDING_SOURCES} "${_operators_header}"
      "${PROJECT_SOURCE_DIR}/src/stable/stable_api.cpp"
      "${PROJECT_SOURCE_DIR}/src/stable/registration.cpp")
  endforeach()
  foreach(_target IN LISTS _targets ITEMS ${schemas_target})
    if(NOT TARGET ${_target})
      continue()
    endif()
    set_target_properties(${_target} PROPERTIES
      PREFIX lib
      CXX_STANDARD 17
      CXX_STANDARD_REQUIRED ON
      CXX_EXTENSIONS OFF
      CXX_VISIBILITY_PRESET hidden)
    target_include_directories(${_target} PRIVATE "${PROJECT_SOURCE_DIR}/src/binding"
      "${VECADD_GENERATED_DIR}/binding")
    target_include_directories(${_target} SYSTEM PRIVATE "${VECADD_TORCH_INCLUDE_DIR}")
    target_compile_definitions(${_target} PRIVATE "TORCH_TARGET_VERSION=${_target_version}")
    target_link_libraries(${_target} PRIVATE "${VECADD_TORCH_CPU_LIBRARY}")
  endforeach()
  foreach(_target IN LISTS _targets)
    target_link_libraries(${_target} PRIVATE vecadd_kernels)
  endforeach()
  if(TARGET ${target})
    set_target_properties(${target} PROPERTIES
      OUTPUT_NAME vecadd_stable_ops
      EXPORT_NAME cpu_operators
      INSTALL_RPATH "$ORIGIN")
    set_target_properties(${schemas_target} PROPERTIES
      OUTPUT_NAME vecadd_stable_schemas
      EXPORT_NAME operator_schemas)
  endif()
  if(VECADD_WITH_CUDA)
    # The CUDA shims (the current stream) are declared only with USE_CUDA and live in torch_cuda.
    find_library(VECADD_TORCH_CUDA_LIBRARY torch_cuda
      PATHS "${VECADD_TORCH_LIBRARY_DIR}" NO_DEFAULT_PATH REQUIRED)
    set_target_properties(${cuda_target} PROPERTIES
      OUTPUT_NAME vecadd_stable_ops_cuda
      EXPORT_NAME cuda_operators
      LIBRARY_OUTPUT_DIRECTORY "${VECADD_CUDA_BUILD_DIR}"
      INSTALL_RPATH "$ORIGIN;$ORIGIN/..")
    target_compile_definitions(${cuda_target} PRIVATE USE_CUDA)
    target_link_libraries(${cuda_target} PRIVATE vecadd_cuda_kernels "${VECADD_TORCH_CUDA_LIBRARY}")
  endif()
  set(VECADD_STABLE_TORCH_MINIMUM "${_minimum}" PARENT_SCOPE)
endfunction()

# torch's full C++ API: the module vecadd._C with its lean entries and the native kernels (C++
# autograd node), registering the CPU kernels and, with CUDA, those of the CUDA library it
# links; it loads only under the torch series it was built against.
function(vecadd_add_native_operators target)
  vecadd_find_torch()
  vecadd_generate_operators_header(_operators_header)
  Python_add_library(${target} MODULE WITH_SOABI ${VECADD_BINDING_SOURCES}
    "${_operators_header}" ${VECADD_NATIVE_SOURCES} ${VECADD_NATIVE_ENTRY_SOURCES})
  set(_rpath "$ORIGIN/${CMAKE_INSTALL_LIBDIR}")
  if(VECADD_WITH_CUDA)
    list(APPEND _rpath "$ORIGIN/${CMAKE_INSTALL_LIBDIR}/${VECADD_CUDA_LIBRARY_DIR}")
  endif()
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME _C
    CXX_STANDARD ${VECADD_TORCH_CXX_STANDARD}
    CXX_STANDARD_REQUIRED ON
    CXX_EXTENSIONS OFF
    CXX_VISIBILITY_PRESET hidden
    INSTALL_RPATH "${_rpath}")
  target_include_directories(${target} PRIVATE "${PROJECT_SOURCE_DIR}/src/binding"
    "${VECADD_GENERATED_DIR}/binding")
  # torch's headers were written against the pybind11 copy torch ships: use it, not pip's.
  target_include_directories(${target} BEFORE PRIVATE "${TORCH_INSTALL_PREFIX}/include")
  # Link what the module uses, not all of TORCH_LIBRARIES (which pulls in nvrtc).
  target_link_libraries(${target} PRIVATE vecadd_kernels torch "${VECADD_TORCH_PYTHON_LIBRARY}")
  if(VECADD_WITH_CUDA)
    target_link_libraries(${target} PRIVATE vecadd_cuda_kernels)
  endif()
  target_compile_definitions(${target} PRIVATE TORCH_EXTENSION_NAME=_C)
  vecadd_use_torch_openmp(${target} "${TORCH_INSTALL_PREFIX}")
endfunction()
