# FLY_SANITIZE: a list of sanitizers for fly's own targets (the library, the
# plugin, the C API, the tools, the unit tests and the C API test program),
# e.g. -DFLY_SANITIZE="address;undefined" or -DFLY_SANITIZE=thread.
# Debian's libLLVM.so / libMLIR.so are not instrumented: errors inside them
# are not seen, and code of ours called from them is checked as usual.
# scripts/sanitize.sh configures and tests such a build.
set(FLY_SANITIZE "" CACHE STRING
  "Sanitizers for fly's own targets, e.g. \"address;undefined\" or \"thread\"")

if(FLY_SANITIZE)
  if("thread" IN_LIST FLY_SANITIZE AND "address" IN_LIST FLY_SANITIZE)
    message(FATAL_ERROR "FLY_SANITIZE: thread and address do not combine")
  endif()
  list(JOIN FLY_SANITIZE "," _fly_sanitize_list)
  set(_fly_sanitize_flags -fsanitize=${_fly_sanitize_list}
      -fno-omit-frame-pointer -g)
  if("undefined" IN_LIST FLY_SANITIZE)
    # Abort on the first report. vptr (dynamic-type checks, mostly of
    # objects the uninstrumented LLVM/MLIR libraries create) is left out:
    # it has not been evaluated here (drop -fno-sanitize=vptr to try it).
    list(APPEND _fly_sanitize_flags -fno-sanitize-recover=undefined
         -fno-sanitize=vptr)
  endif()
  # Directory-wide, so every fly target added after this (lib, plugin,
  # tools, unittests, test/CAPI, bench) is built and linked with them;
  # imported LLVM/MLIR targets are unaffected.
  add_compile_options(${_fly_sanitize_flags})
  add_link_options(-fsanitize=${_fly_sanitize_list})
  message(STATUS "fly: building with -fsanitize=${_fly_sanitize_list}")
endif()
