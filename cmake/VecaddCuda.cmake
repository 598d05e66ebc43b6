# Turns CUDA on or off for vecadd (option VECADD_CUDA = AUTO, ON or OFF) and fixes the
# architecture list before the CUDA language is enabled.

include(VecaddCudaArchitectures)

# The toolkit release ("13.0") of a CUDA compiler, read from its --version banner.
function(vecadd_cuda_compiler_version compiler out_var)
  execute_process(
    COMMAND "${compiler}" --version
    OUTPUT_VARIABLE _banner
    ERROR_VARIABLE _banner
    RESULT_VARIABLE _status)
  if(NOT _status EQUAL 0 OR NOT _banner MATCHES "release ([0-9]+\\.[0-9]+)")
    message(FATAL_ERROR "vecadd: could not read the CUDA version from '${compiler} --version':\n${_banner}")
  endif()
  set(${out_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# Sets VECADD_WITH_CUDA, VECADD_CUDA_VERSION and VECADD_CUDA_ARCHITECTURES. A macro because
# enable_language() must run at directory scope. `torch_has_cuda` is FALSE when the torch
# being built against is a CPU-only build (its CUDA kernels could not be registered).
macro(vecadd_setup_cuda torch_has_cuda)
  set(VECADD_WITH_CUDA OFF)
  set(VECADD_CUDA_VERSION "")
  set(VECADD_CUDA_ARCHITECTURES "")
  set(_vecadd_cuda_why_not "")
  if(VECADD_CUDA STREQUAL "OFF")
    set(_vecadd_cuda_why_not "VECADD_CUDA=OFF")
  else()
    include(CheckLanguage)
    check_language(CUDA)
    if(NOT CMAKE_CUDA_COMPILER)
      set(_vecadd_cuda_why_not "no CUDA compiler (nvcc) was found")
    elseif(NOT EXISTS "${CMAKE_CUDA_COMPILER}")
      set(_vecadd_cuda_why_not "the CUDA compiler '${CMAKE_CUDA_COMPILER}' does not exist")
    elseif(NOT ${torch_has_cuda})
      set(_vecadd_cuda_why_not "the torch being built against is a CPU-only build")
    endif()
  endif()

  if(_vecadd_cuda_why_not STREQUAL "")
    vecadd_cuda_compiler_version("${CMAKE_CUDA_COMPILER}" VECADD_CUDA_VERSION)
    resolve_cuda_architectures("${VECADD_CUDA_VERSION}" VECADD_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "${VECADD_CUDA_ARCHITECTURES}")
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(VECADD_WITH_CUDA ON)
    message(STATUS "vecadd: building with CUDA ${VECADD_CUDA_VERSION} (${CMAKE_CUDA_COMPILER})")
  elseif(VECADD_CUDA STREQUAL "ON")
    message(FATAL_ERROR
      "vecadd: VECADD_CUDA=ON, but ${_vecadd_cuda_why_not}. Put nvcc on PATH or set "
      "CUDACXX / CMAKE_CUDA_COMPILER to it, build against a CUDA build of torch, or "
      "configure with -DVECADD_CUDA=OFF for a CPU-only build.")
  else()
    message(STATUS "vecadd: building CPU-only: ${_vecadd_cuda_why_not}")
  endif()
endmacro()
