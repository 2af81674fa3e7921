# Stands in for an MLIR 21 tree's config (none is installed here): only what
# fly-snapshot's version check reads before it stops.
set(LLVM_VERSION_MAJOR 21)
set(LLVM_PACKAGE_VERSION 21.1.0)
set(MLIR_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
