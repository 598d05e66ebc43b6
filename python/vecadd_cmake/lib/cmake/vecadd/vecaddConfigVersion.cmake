# Forwards find_package(vecadd X.Y) to the version check of vecadd's package config.
include("${CMAKE_CURRENT_LIST_DIR}/../../../../vecadd/lib/cmake/vecadd/vecaddConfigVersion.cmake")
