# Finds the torch that the build's Python imports, without letting torch's CMake config
# decide vecadd's CUDA architectures or flags.

# What the torch being built against is: sets VECADD_TORCH_VERSION, VECADD_TORCH_CUDA (its
# CUDA version, empty for a CPU-only build), VECADD_TORCH_CMAKE_PREFIX and the directories of
# its headers and libraries (VECADD_TORCH_INCLUDE_DIR, VECADD_TORCH_LIBRARY_DIR). Asked of the
# Python interpreter's torch, or read from the files of the torch package at VECADD_TORCH_ROOT
# where that interpreter cannot import it (a CUDA library built in another system's root).
function(vecadd_query_torch python)
  if(VECADD_TORCH_ROOT)
    vecadd_read_torch_files("${VECADD_TORCH_ROOT}" _root)
    set(_answer "${_root_VERSION}|${_root_CUDA}|${VECADD_TORCH_ROOT}/share/cmake|${VECADD_TORCH_ROOT}/include|${VECADD_TORCH_ROOT}/lib")
  else()
    execute_process(
      COMMAND "${python}" -c
        "import os, sys, torch; root = os.path.dirname(torch.__file__); sys.stdout.write('|'.join([torch.__version__, torch.version.cuda or '', torch.utils.cmake_prefix_path, os.path.join(root, 'include'), os.path.join(root, 'lib')]))"
      OUTPUT_VARIABLE _answer
      ERROR_VARIABLE _error
      RESULT_VARIABLE _status)
    if(NOT _status EQUAL 0)
      message(FATAL_ERROR
        "vecadd: '${python}' cannot import torch, which the Python module is built against. "
        "Install torch first (pip install torch), then build without build isolation "
        "(pip install --no-build-isolation .).\n${_error}")
    endif()
  endif()
  string(REPLACE "|" ";" _fields "${_answer}")
  list(GET _fields 0 _version)
  list(GET _fields 1 _cuda)
  list(GET _fields 2 _prefix)
  list(GET _fields 3 _include)
  list(GET _fields 4 _library)
  set(VECADD_TORCH_VERSION "${_version}" PARENT_SCOPE)
  set(VECADD_TORCH_CUDA "${_cuda}" PARENT_SCOPE)
  set(VECADD_TORCH_CMAKE_PREFIX "${_prefix}" PARENT_SCOPE)
  set(VECADD_TORCH_INCLUDE_DIR "${_include}" PARENT_SCOPE)
  set(VECADD_TORCH_LIBRARY_DIR "${_library}" PARENT_SCOPE)
endfunction()

# A CUDA torch's CMake config needs a whole CUDA toolkit (its libraries, nvcc's OpenMP probes)
# even where vecadd builds without CUDA; that build needs only torch's CPU headers and
# libraries, so it imports them as the target `torch` itself.
macro(vecadd_import_torch_without_cuda)
  get_filename_component(TORCH_INSTALL_PREFIX "${VECADD_TORCH_INCLUDE_DIR}" DIRECTORY)
  add_library(torch INTERFACE IMPORTED)
  set_target_properties(torch PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
    "${VECADD_TORCH_INCLUDE_DIR};${VECADD_TORCH_INCLUDE_DIR}/torch/csrc/api/include")
  foreach(_vecadd_torch_library IN ITEMS torch torch_cpu c10)
    find_library(VECADD_TORCH_${_vecadd_torch_library}_LIBRARY ${_vecadd_torch_library}
      PATHS "${VECADD_TORCH_LIBRARY_DIR}" NO_DEFAULT_PATH REQUIRED)
    target_link_libraries(torch INTERFACE "${VECADD_TORCH_${_vecadd_torch_library}_LIBRARY}")
  endforeach()
  # The C++ standard torch's headers need, as its own config states it.
  vecadd_read_torch_files("${TORCH_INSTALL_PREFIX}" _vecadd_torch)
  set(VECADD_TORCH_CXX_STANDARD ${_vecadd_torch_CXX_STANDARD})
  message(STATUS "vecadd: torch ${VECADD_TORCH_VERSION} is a CUDA ${VECADD_TORCH_CUDA} build; "
                 "built without CUDA, vecadd links its CPU libraries only")
endmacro()

# find_package(Torch) appends its own -gencode flags to CMAKE_CUDA_FLAGS and resets
# CMAKE_CUDA_ARCHITECTURES; both are put back, so that VECADD_CUDA_ARCHITECTURES rules.
macro(vecadd_find_torch)
  list(APPEND CMAKE_PREFIX_PATH "${VECADD_TORCH_CMAKE_PREFIX}")
  set(_vecadd_saved_cuda_flags "${CMAKE_CUDA_FLAGS}")
  set(_vecadd_saved_cuda_architectures "${CMAKE_CUDA_ARCHITECTURES}")
  set(_vecadd_saved_env_arch_list "$ENV{TORCH_CUDA_ARCH_LIST}")
  if(VECADD_WITH_CUDA)
    # torch's legacy CUDA lookup guesses the toolkit from nvcc's PATH entry; tell it.
    if(NOT DEFINED CUDA_TOOLKIT_ROOT_DIR)
      get_filename_component(CUDA_TOOLKIT_ROOT_DIR "${CUDAToolkit_BIN_DIR}" DIRECTORY)
    endif()
    # torch otherwise probes the GPU (or falls back to archs nvcc may reject) for flags
    # that are dropped below anyway.
    set(ENV{TORCH_CUDA_ARCH_LIST} "9.0")
  endif()
  if(NOT VECADD_WITH_CUDA AND VECADD_TORCH_CUDA)
    vecadd_import_torch_without_cuda()
  else()
    find_package(Torch REQUIRED CONFIG)
    get_target_property(VECADD_TORCH_CXX_STANDARD torch CXX_STANDARD)
  endif()
  set(ENV{TORCH_CUDA_ARCH_LIST} "${_vecadd_saved_env_arch_list}")
  set(CMAKE_CUDA_FLAGS "${_vecadd_saved_cuda_flags}")
  set(CMAKE_CUDA_ARCHITECTURES "${_vecadd_saved_cuda_architectures}")
  if(VECADD_WITH_CUDA)
    message(STATUS "vecadd: torch's CUDA architecture flags are discarded; "
                   "vecadd compiles for ${VECADD_CUDA_ARCHITECTURES}")
  endif()
  find_library(VECADD_TORCH_PYTHON_LIBRARY torch_python
    PATHS "${TORCH_INSTALL_PREFIX}/lib" NO_DEFAULT_PATH REQUIRED)
  if(NOT VECADD_TORCH_CXX_STANDARD)
    set(VECADD_TORCH_CXX_STANDARD 17)
  endif()
endmacro()

# at::parallel_for is inline: with an OpenMP build of torch it runs on one thread unless
# the calling code is compiled with OpenMP too. Compile `target` with the compiler's OpenMP
# and link it to the runtime of the torch package at `torch_root`, so that both share one thread
# pool; with no such runtime (or one this compiler cannot call), leave the target single-threaded.
function(vecadd_use_torch_openmp target torch_root)
  file(STRINGS "${torch_root}/include/ATen/Config.h" _openmp_build
    REGEX "^#define AT_PARALLEL_OPENMP 1")
  if(NOT _openmp_build)
    return()
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(_patterns "libgomp*.so*")  # GCC's code calls GOMP_*, which only libgomp provides
  else()
    set(_patterns "libomp*.so*" "libomp*.dylib" "libiomp5*")
  endif()
  list(TRANSFORM _patterns PREPEND "${torch_root}/lib/")
  file(GLOB _runtimes ${_patterns})
  find_package(OpenMP COMPONENTS CXX QUIET)
  if(NOT _runtimes OR NOT OpenMP_CXX_FOUND)
    message(STATUS "vecadd: ${target}'s CPU kernels run on one thread (no OpenMP runtime of "
                   "torch's that ${CMAKE_CXX_COMPILER_ID} can use)")
    return()
  endif()
  list(GET _runtimes 0 _runtime)
  separate_arguments(_flags NATIVE_COMMAND "${OpenMP_CXX_FLAGS}")
  target_compile_options(${target} PRIVATE ${_flags})
  target_link_libraries(${target} PRIVATE "${_runtime}")
endfunction()

# What the files of the torch package at `root` say of it, as <prefix>_VERSION ("2.14.0+cu130"),
# <prefix>_SERIES ("2.14"), <prefix>_CUDA (its CUDA version, empty for a CPU-only build),
# <prefix>_CXX_STANDARD (the standard its headers need, as its CMake config states it: 17, or 20
# from torch 2.13 on) and <prefix>_CXX11_ABI (1 where its libraries use libstdc++'s C++11 ABI,
# read from the names libc10.so exports).
function(vecadd_read_torch_files root prefix)
  if(NOT EXISTS "${root}/version.py")
    message(FATAL_ERROR "vecadd: '${root}' holds no version.py; expected the folder of a torch "
                        "package (torch.__file__'s)")
  endif()
  file(STRINGS "${root}/version.py" _version REGEX "^__version__ = ")
  file(STRINGS "${root}/version.py" _cuda REGEX "^cuda[^=]*= ")
  string(REGEX REPLACE "^[^']*'([^']*)'.*$" "\\1" _version "${_version}")
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _series "${_version}")
  if(_cuda MATCHES "'([0-9.]+)'")
    set(_cuda "${CMAKE_MATCH_1}")
  else()
    set(_cuda "")
  endif()
  set(_standard 17)
  if(EXISTS "${root}/share/cmake/Torch/TorchConfig.cmake")
    file(READ "${root}/share/cmake/Torch/TorchConfig.cmake" _config)
    if(_config MATCHES "cxx_std_20|CXX_STANDARD 20")
      set(_standard 20)
    endif()
  endif()
  set(_cxx11_abi 0)
  file(GLOB _c10 "${root}/lib/libc10.so" "${root}/lib/libc10.dylib")
  if(_c10)
    file(STRINGS "${_c10}" _cxx11 REGEX "__cxx11" LIMIT_COUNT 1)
    if(_cxx11)
      set(_cxx11_abi 1)
    endif()
  endif()
  set(${prefix}_VERSION "${_version}" PARENT_SCOPE)
  set(${prefix}_SERIES "${_series}" PARENT_SCOPE)
  set(${prefix}_CUDA "${_cuda}" PARENT_SCOPE)
  set(${prefix}_CXX_STANDARD "${_standard}" PARENT_SCOPE)
  set(${prefix}_CXX11_ABI "${_cxx11_abi}" PARENT_SCOPE)
endfunction()
