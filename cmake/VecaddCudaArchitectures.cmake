# Which GPU architectures vecadd's CUDA kernels are compiled for: decided here, once.

# The one table of architecture rules. Each row: the first toolkit version it applies to
# | the real architectures that toolkit can compile | the default list for it (',' stands
# for ';' inside a row). Defaults hold SASS for each GPU generation the toolkit supports
# (SASS for X.0 also runs on X.y) and for the Grace-Hopper and Blackwell chips it names
# (GH200 90, GB200 100, GB300 103, RTX 50 120, GB10 121; docs/architectures.md), and PTX for
# the newest, so that the driver can JIT the kernels for GPUs newer than the toolkit.
set(VECADD_CUDA_ARCHITECTURE_TABLE
  "11.8|35,37,50,52,53,60,61,62,70,72,75,80,86,87,89,90|60-real,70-real,75-real,80-real,86-real,90"
  "12.0|50,52,53,60,61,62,70,72,75,80,86,87,89,90|60-real,70-real,75-real,80-real,86-real,89-real,90"
  "12.8|50,52,53,60,61,62,70,72,75,80,86,87,89,90,100,101,120|70-real,75-real,80-real,86-real,89-real,90-real,100-real,120"
  "12.9|50,52,53,60,61,62,70,72,75,80,86,87,89,90,100,101,103,120,121|70-real,75-real,80-real,86-real,89-real,90-real,100-real,103-real,120-real,121"
  "13.0|75,80,86,87,88,89,90,100,103,110,120,121|75-real,80-real,86-real,89-real,90-real,100-real,103-real,110-real,120-real,121"
  "13.5|75,80,86,87,88,89,90,100,103,107,110,120,121|75-real,80-real,86-real,89-real,90-real,100-real,103-real,110-real,120-real,121"
)

# The table row for a toolkit version: the last row whose first version is <= it.
function(vecadd_cuda_architecture_rules toolkit_version out_supported out_default)
  set(_supported "")
  set(_default "")
  foreach(_row IN LISTS VECADD_CUDA_ARCHITECTURE_TABLE)
    string(REPLACE "|" ";" _fields "${_row}")
    list(GET _fields 0 _first_version)
    if(toolkit_version VERSION_GREATER_EQUAL _first_version)
      list(GET _fields 1 _supported)
      list(GET _fields 2 _default)
    endif()
  endforeach()
  if(_supported STREQUAL "")
    message(FATAL_ERROR
      "vecadd: CUDA toolkit ${toolkit_version} is older than any this project supports "
      "(11.8 or newer is needed).")
  endif()
  string(REPLACE "," ";" _supported "${_supported}")
  string(REPLACE "," ";" _default "${_default}")
  set(${out_supported} "${_supported}" PARENT_SCOPE)
  set(${out_default} "${_default}" PARENT_SCOPE)
endfunction()

# TORCH_CUDA_ARCH_LIST syntax ("8.0 8.6+PTX 9.0a", ';' or ' ' separated) -> CMake syntax.
function(vecadd_torch_arch_list_to_cmake torch_list out_var)
  string(REPLACE " " ";" _entries "${torch_list}")
  set(_result "")
  foreach(_entry IN LISTS _entries)
    if(_entry STREQUAL "")
      continue()
    endif()
    if(NOT _entry MATCHES "^([0-9]+)\\.([0-9]+)([af]?)(\\+PTX)?$")
      message(FATAL_ERROR
        "vecadd: TORCH_CUDA_ARCH_LIST entry '${_entry}' is not understood; expected entries "
        "like '8.0', '8.6+PTX' or '9.0a' separated by spaces or ';'.")
    endif()
    set(_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
    if(CMAKE_MATCH_4)
      list(APPEND _result "${_arch}")
    else()
      list(APPEND _result "${_arch}-real")
    endif()
  endforeach()
  if(_result STREQUAL "")
    message(FATAL_ERROR "vecadd: TORCH_CUDA_ARCH_LIST is set but names no architecture.")
  endif()
  set(${out_var} "${_result}" PARENT_SCOPE)
endfunction()

# Stops configure when an entry of `arch_list` cannot be built by this toolkit.
function(vecadd_check_cuda_architectures arch_list toolkit_version supported)
  string(REPLACE ";" " " _supported_text "${supported}")
  set(_help
    "CUDA toolkit ${toolkit_version} (${CMAKE_CUDA_COMPILER}) builds these architectures: "
    "${_supported_text}; each may carry the suffix 'a' (from 90) or 'f' (from 100, CUDA 12.9+) "
    "and '-real' (SASS only) or '-virtual' (PTX only); 'native', 'all' and 'all-major' are "
    "accepted as well.")
  foreach(_entry IN LISTS arch_list)
    if(_entry MATCHES "^(native|all|all-major)$")
      continue()
    endif()
    if(NOT _entry MATCHES "^([0-9]+)([af]?)(-real|-virtual)?$")
      message(FATAL_ERROR "vecadd: CUDA architecture '${_entry}' is not valid. " ${_help})
    endif()
    set(_number "${CMAKE_MATCH_1}")
    set(_suffix "${CMAKE_MATCH_2}")
    set(_reason "")
    if(NOT _number IN_LIST supported)
      set(_reason "this toolkit cannot compile for ${_number}")
    elseif(_suffix STREQUAL "a" AND _number LESS 90)
      set(_reason "arch-specific 'a' variants exist from 90 on")
    elseif(_suffix STREQUAL "f" AND (_number LESS 100 OR toolkit_version VERSION_LESS 12.9))
      set(_reason "family 'f' variants exist from 100 on, with CUDA 12.9 or newer")
    endif()
    if(_reason)
      message(FATAL_ERROR
        "vecadd: CUDA architecture '${_entry}' cannot be built (${_reason}). " ${_help})
    endif()
  endforeach()
endfunction()

# Decides the architecture list from, in order: CMAKE_CUDA_ARCHITECTURES (CMake syntax, used
# as given), TORCH_CUDA_ARCH_LIST (CMake or environment variable, torch syntax), or the
# table's default for this toolkit; validates it and stores it in `out_var`.
# torch's own CMake config would overwrite CMAKE_CUDA_ARCHITECTURES, so callers keep the
# result and set it on their targets themselves.
function(resolve_cuda_architectures toolkit_version out_var)
  vecadd_cuda_architecture_rules("${toolkit_version}" _supported _default)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "")
    set(_archs "${CMAKE_CUDA_ARCHITECTURES}")
    set(_source "CMAKE_CUDA_ARCHITECTURES")
  elseif(DEFINED TORCH_CUDA_ARCH_LIST AND NOT "${TORCH_CUDA_ARCH_LIST}" STREQUAL "")
    vecadd_torch_arch_list_to_cmake("${TORCH_CUDA_ARCH_LIST}" _archs)
    set(_source "TORCH_CUDA_ARCH_LIST='${TORCH_CUDA_ARCH_LIST}'")
  elseif(NOT "$ENV{TORCH_CUDA_ARCH_LIST}" STREQUAL "")
    vecadd_torch_arch_list_to_cmake("$ENV{TORCH_CUDA_ARCH_LIST}" _archs)
    set(_source "environment TORCH_CUDA_ARCH_LIST='$ENV{TORCH_CUDA_ARCH_LIST}'")
  else()
    set(_archs "${_default}")
    set(_source "the default for CUDA ${toolkit_version}")
  endif()
  vecadd_check_cuda_architectures("${_archs}" "${toolkit_version}" "${_supported}")
  message(STATUS "vecadd: CUDA architectures ${_archs} (from ${_source})")
  set(${out_var} "${_archs}" PARENT_SCOPE)
endfunction()
