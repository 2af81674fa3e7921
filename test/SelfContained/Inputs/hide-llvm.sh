#!/bin/sh
# Runs "$@" where no LLVM or MLIR shared library can be loaded: an empty
# tmpfs over /usr/lib/llvm-22 and /dev/null over every libLLVM*/libMLIR*
# file of the system library folder. Only inside a private mount namespace
# (unshare -m), so that the rest of the machine keeps its LLVM.
set -eu
if [ "$(readlink /proc/self/ns/mnt)" = "$(readlink /proc/1/ns/mnt)" ]; then
  echo "hide-llvm.sh: not in a private mount namespace; run it under unshare -m" >&2
  exit 2
fi
mount -t tmpfs -o size=1m,mode=0755 fly-hidden-llvm /usr/lib/llvm-22
for lib in /usr/lib/x86_64-linux-gnu/libLLVM* /usr/lib/x86_64-linux-gnu/libMLIR*; do
  if [ -f "$lib" ] && [ ! -L "$lib" ]; then
    mount --bind /dev/null "$lib"
  fi
done
exec "$@"
