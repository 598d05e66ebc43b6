# Prints what cmake/VecaddCudaArchitectures.cmake decides for a CUDA toolkit, so that checks
# derive architecture lists from the build's own table instead of parsing it.
#
#   cmake -DCUDA_VERSION=12.8 -P tools/release/cuda_architectures.cmake
#     supported=50;52;...;120      (what that toolkit can compile)
#     default=70-real;...;120      (the list a build gets when none is asked for)
#   cmake -P tools/release/cuda_architectures.cmake
#     toolkits=11.8;12.0;...       (the first toolkit of each row of the table)
cmake_minimum_required(VERSION 3.20)

include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/VecaddCudaArchitectures.cmake")

# message() in script mode writes to stderr; the results go to stdout for callers to read.
function(vecadd_print line)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "${line}")
endfunction()

if(DEFINED CUDA_VERSION)
  if(NOT CUDA_VERSION MATCHES "^[0-9]+\\.[0-9]+$")
    message(FATAL_ERROR
      "cuda_architectures.cmake: CUDA_VERSION='${CUDA_VERSION}' is not a toolkit version; "
      "expected MAJOR.MINOR, e.g. -DCUDA_VERSION=12.8")
  endif()
  vecadd_cuda_architecture_rules("${CUDA_VERSION}" _supported _default)
  vecadd_print("supported=${_supported}")
  vecadd_print("default=${_default}")
else()
  set(_toolkits "")
  foreach(_row IN LISTS VECADD_CUDA_ARCHITECTURE_TABLE)
    string(REPLACE "|" ";" _fields "${_row}")
    list(GET _fields 0 _first_version)
    list(APPEND _toolkits "${_first_version}")
  endforeach()
  vecadd_print("toolkits=${_toolkits}")
endif()
