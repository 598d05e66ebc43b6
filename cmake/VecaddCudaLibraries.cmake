# vecadd's CUDA kernels live in a library per CUDA major, installed in lib/cudaN/ beside the
# stable torch operators that register them, with cuda_library.json (the vecadd version, CUDA
# toolkit and architecture list it was built with) and cuda_archs.txt (what its fatbinary
# holds). One build compiles the library of its own CUDA compiler; a wheel holds the libraries
# of other majors by building them alone (VECADD_CUDA_LIBRARY_ONLY, with that major's nvcc) and
# naming their install prefixes in VECADD_CUDA_LIBRARIES (docs/wheels.md).

# A build of the CUDA library alone needs a CUDA compiler, and only the stable operators can
# load beside another build's core.
function(vecadd_check_cuda_library_only)
  if(NOT VECADD_CUDA_LIBRARY_ONLY)
    return()
  endif()
  if(NOT VECADD_WITH_CUDA)
    message(FATAL_ERROR "vecadd: VECADD_CUDA_LIBRARY_ONLY=ON builds the CUDA library alone, but "
                        "CUDA is off for this build (see the message above); expected nvcc and, "
                        "with VECADD_PYTHON=ON, a CUDA build of torch")
  endif()
  if(VECADD_PYTHON AND NOT VECADD_TORCH_ABI STREQUAL "stable")
    message(FATAL_ERROR "vecadd: VECADD_CUDA_LIBRARY_ONLY=ON needs VECADD_TORCH_ABI=stable (now "
                        "'${VECADD_TORCH_ABI}'): a native build is one module for one torch")
  endif()
endfunction()

# Defines `target` (libvecadd_cuda.so, exported as vecadd::cuda) and sets VECADD_CUDA_MAJOR,
# VECADD_CUDA_LIBRARY_DIR (cudaN) and VECADD_CUDA_BUILD_DIR, where its files are built.
macro(vecadd_add_cuda_kernels target)
  string(REGEX MATCH "^[0-9]+" VECADD_CUDA_MAJOR "${VECADD_CUDA_VERSION}")
  set(VECADD_CUDA_LIBRARY_DIR "cuda${VECADD_CUDA_MAJOR}")
  set(VECADD_CUDA_BUILD_DIR "${CMAKE_CURRENT_BINARY_DIR}/${VECADD_CUDA_LIBRARY_DIR}")
  add_library(${target} SHARED src/kernels/add_cuda.cu src/kernels/launch.cu)
  if(VECADD_CUDA_RUNTIME STREQUAL "static")
    # A runtime of its own, hidden: its symbols must not stand in for torch's runtime.
    set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Static)
    target_link_libraries(${target} PRIVATE CUDA::cudart_static)
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  else()
    set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
    target_link_libraries(${target} PUBLIC CUDA::cudart)
  endif()
  add_library(vecadd::cuda ALIAS ${target})
  string(REPLACE ";" " " _vecadd_archs_text "${VECADD_CUDA_ARCHITECTURES}")
  # The longest step of a CUDA build: the log says which library and images it is compiling.
  message(STATUS "vecadd: the CUDA ${VECADD_CUDA_VERSION} library (lib/${VECADD_CUDA_LIBRARY_DIR}) "
                 "for architectures ${_vecadd_archs_text}")
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME vecadd_cuda
    EXPORT_NAME cuda
    LIBRARY_OUTPUT_DIRECTORY "${VECADD_CUDA_BUILD_DIR}"
    INSTALL_RPATH "$ORIGIN/.."
    CUDA_ARCHITECTURES "${VECADD_CUDA_ARCHITECTURES}"
    CUDA_STANDARD 17
    CUDA_EXTENSIONS OFF
    CXX_EXTENSIONS OFF)
  # vecadd::vecadd by name once installed: it is exported with the core, not with this library.
  target_link_libraries(${target}
    PUBLIC "$<BUILD_INTERFACE:vecadd_kernels>"
    INTERFACE "$<INSTALL_INTERFACE:vecadd::vecadd>")
  target_compile_definitions(${target}
    PUBLIC VECADD_WITH_CUDA=1
    PRIVATE "VECADD_CUDA_ARCHITECTURES_TEXT=\"${_vecadd_archs_text}\""
            "VECADD_CUDA_TOOLKIT_TEXT=\"${VECADD_CUDA_VERSION}\"")
  # nvcc compiles one architecture after another unless told to use every core.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>:--threads=0>)

  file(CONFIGURE OUTPUT "${VECADD_CUDA_BUILD_DIR}/cuda_library.json" CONTENT [[
{
  "vecadd_version": "@PROJECT_VERSION@",
  "cuda_version": "@VECADD_CUDA_VERSION@",
  "cuda_architectures": "@VECADD_CUDA_ARCHITECTURES@",
  "cuda_runtime": "@VECADD_CUDA_RUNTIME@"
}
]] @ONLY)
  # What the fatbinary really holds (sm_XX / compute_XX), read back after each link.
  add_custom_command(
    OUTPUT "${VECADD_CUDA_BUILD_DIR}/cuda_archs.txt"
    COMMAND Python::Interpreter "${PROJECT_SOURCE_DIR}/cmake/fatbin_archs.py"
            "$<TARGET_FILE:${target}>" --output "${VECADD_CUDA_BUILD_DIR}/cuda_archs.txt"
    DEPENDS ${target} "${PROJECT_SOURCE_DIR}/cmake/fatbin_archs.py"
    COMMENT "Listing the CUDA architectures embedded in the vecadd CUDA library"
    VERBATIM)
  add_custom_target(vecadd_cuda_archs ALL DEPENDS "${VECADD_CUDA_BUILD_DIR}/cuda_archs.txt")
endmacro()

# Installs this build's CUDA library into lib/cudaN with its description, its stable operators
# (when built) and its CMake targets (lib/cmake/vecadd/cudaN).
function(vecadd_install_cuda_library kernels operators)
  set(_destination "${CMAKE_INSTALL_LIBDIR}/${VECADD_CUDA_LIBRARY_DIR}")
  install(TARGETS ${kernels} EXPORT vecaddCudaTargets
    LIBRARY DESTINATION "${_destination}"
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  if(TARGET ${operators})
    install(TARGETS ${operators} EXPORT vecaddCudaTargets LIBRARY DESTINATION "${_destination}")
  endif()
  install(FILES "${VECADD_CUDA_BUILD_DIR}/cuda_library.json"
                "${VECADD_CUDA_BUILD_DIR}/cuda_archs.txt"
    DESTINATION "${_destination}")
  install(EXPORT vecaddCudaTargets NAMESPACE vecadd::
    DESTINATION "${VECADD_INSTALL_CMAKEDIR}/${VECADD_CUDA_LIBRARY_DIR}")
endfunction()

# Installs the CUDA libraries that VECADD_CUDA_LIBRARY_ONLY builds put under each prefix of
# `prefixes`, after checking that each comes from this vecadd version and adds a CUDA major.
function(vecadd_install_cuda_libraries_built_elsewhere prefixes)
  set(_majors "${VECADD_CUDA_MAJOR}")
  foreach(_prefix IN LISTS prefixes)
    file(GLOB _descriptions "${_prefix}/${CMAKE_INSTALL_LIBDIR}/cuda*/cuda_library.json")
    if(NOT _descriptions)
      message(FATAL_ERROR "vecadd: VECADD_CUDA_LIBRARIES names '${_prefix}', which holds no "
                          "${CMAKE_INSTALL_LIBDIR}/cudaN/cuda_library.json; expected the install "
                          "prefix of a build with VECADD_CUDA_LIBRARY_ONLY=ON")
    endif()
    foreach(_description IN LISTS _descriptions)
      get_filename_component(_directory "${_description}" DIRECTORY)
      get_filename_component(_name "${_directory}" NAME)
      file(READ "${_description}" _json)
      string(JSON _built_version GET "${_json}" vecadd_version)
      string(JSON _cuda GET "${_json}" cuda_version)
      string(JSON _archs GET "${_json}" cuda_architectures)
      string(REPLACE ";" " " _archs "${_archs}")
      string(REGEX MATCH "^[0-9]+" _major "${_cuda}")
      if(NOT _built_version STREQUAL PROJECT_VERSION)
        message(FATAL_ERROR "vecadd: the CUDA ${_cuda} library in '${_directory}' was built from "
                            "vecadd ${_built_version}; expected ${PROJECT_VERSION}, this build's")
      endif()
      if(_major IN_LIST _majors)
        message(FATAL_ERROR "vecadd: the CUDA ${_cuda} library in '${_directory}' is a second "
                            "library for CUDA ${_major}; expected one per CUDA major")
      endif()
      list(APPEND _majors "${_major}")
      install(DIRECTORY "${_directory}/" DESTINATION "${CMAKE_INSTALL_LIBDIR}/${_name}"
        USE_SOURCE_PERMISSIONS)
      install(DIRECTORY "${_prefix}/${CMAKE_INSTALL_LIBDIR}/cmake/vecadd/${_name}/"
        DESTINATION "${VECADD_INSTALL_CMAKEDIR}/${_name}")
      message(STATUS "vecadd: the wheel also holds the CUDA ${_cuda} library (lib/${_name}) for "
                     "architectures ${_archs}, built alone in ${_directory}")
    endforeach()
  endforeach()
endfunction()
