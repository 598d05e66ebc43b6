# Forwards find_package(vecadd CONFIG) to vecadd's package config (vecadd_cmake/__init__.py says why).
include("${CMAKE_CURRENT_LIST_DIR}/../../../../vecadd/lib/cmake/vecadd/vecaddConfig.cmake")
