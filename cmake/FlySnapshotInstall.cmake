# `cmake --install build --prefix P` lays out a relocatable package:
#   include/fly, include/fly-c     headers (+ the generated Passes.h.inc)
#   lib/libFlySnapshot.a           the library, for C++ embedders
#   lib/libFlySnapshotCAPI.so      the C API (ctypes-loadable)
#   lib/FlySnapshotPlugin.so       the mlir-opt plugin
#   bin/fly-opt, bin/fly-tune      the tools
#   share/fly-snapshot/            examples, rocm-toolkit (symlinks)
#   lib/cmake/FlySnapshot/         find_package(FlySnapshot CONFIG)
#   lib/python3/site-packages/fly_snapshot   the Python package (python/)
# and, only with `--component llvm-dir`, an LLVM-dir layout for front ends
# that run `<dir>/bin/mlir-opt` (FlyDSL's FLYDSL_COMPILE_LLVM_DIR):
#   bin/mlir-opt -> fly-opt
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FLY_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/FlySnapshot)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/fly ${PROJECT_SOURCE_DIR}/include/fly-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT FlySnapshotDevelopment
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(FILES ${PROJECT_BINARY_DIR}/include/fly/Transforms/Passes.h.inc
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/fly/Transforms
  COMPONENT FlySnapshotDevelopment)

install(TARGETS FlySnapshot FlySnapshotCAPI
  EXPORT FlySnapshotTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS FlySnapshotPlugin LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS fly-opt fly-tune RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Not part of a plain install: an mlir-opt in e.g. /usr/local/bin would
# shadow LLVM's.
install(CODE "file(CREATE_LINK fly-opt
  \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/mlir-opt\" SYMBOLIC)
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/mlir-opt -> fly-opt\")"
  COMPONENT llvm-dir EXCLUDE_FROM_ALL)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/
  DESTINATION ${CMAKE_INSTALL_DATADIR}/fly-snapshot/examples
  USE_SOURCE_PERMISSIONS)
# fly-tune looks for the toolkit here (FLY_INSTALL_TOOLKIT_DIR). The folder
# holds absolute symlinks into the system's ROCm device libraries and ld.lld;
# install(DIRECTORY) copies them as links.
if(FLY_ROCM_TOOLKIT AND EXISTS ${FLY_ROCM_TOOLKIT})
  install(DIRECTORY ${FLY_ROCM_TOOLKIT}/
    DESTINATION ${CMAKE_INSTALL_DATADIR}/fly-snapshot/rocm-toolkit
    USE_SOURCE_PERMISSIONS)
endif()

install(EXPORT FlySnapshotTargets
  NAMESPACE FlySnapshot::
  FILE FlySnapshotTargets.cmake
  DESTINATION ${FLY_INSTALL_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/FlySnapshotConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/FlySnapshotConfig.cmake
  INSTALL_DESTINATION ${FLY_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/FlySnapshotConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/FlySnapshotConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/FlySnapshotConfigVersion.cmake
  DESTINATION ${FLY_INSTALL_CMAKE_DIR})

# Installed binaries keep finding Debian's libMLIR / libLLVM (outside the
# default search path) and the C API next to them.
set_target_properties(FlySnapshotCAPI FlySnapshotPlugin fly-opt fly-tune
  PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
