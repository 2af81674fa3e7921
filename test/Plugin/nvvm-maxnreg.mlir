// maxnreg on sm_90: the hint becomes nvvm.maxnreg on the kernel, which the
// NVPTX backend prints as `.maxnreg N` and ptxas honours. With format=isa the
// PTX shows the directive; with format=bin the manifest reports the cubin's
// register count (read from its .nv.info section), which the hint caps.

// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir \
// RUN:   --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_90 O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm),reconcile-unrealized-casts,fly-snapshot{hints=\"maxnreg=32;maxnreg=128;\" binary-pass=\"gpu-module-to-binary{format=isa toolkit=%cuda_toolkit}\" out-dir=%t/isa})" \
// RUN:   -o /dev/null
// RUN: FileCheck %s --check-prefix=PTX32 --input-file=%t/isa/v0_maxnreg_32.kernels.sm_90.ptx
// RUN: FileCheck %s --check-prefix=PTX128 --input-file=%t/isa/v1_maxnreg_128.kernels.sm_90.ptx
// RUN: FileCheck %s --check-prefix=PTXDEFAULT --input-file=%t/isa/v2_default.kernels.sm_90.ptx

// PTX32:       .entry tile_matmul(
// PTX32:       .maxnreg 32
// PTX128:      .entry tile_matmul(
// PTX128:      .maxnreg 128
// PTXDEFAULT:  .entry tile_matmul(
// PTXDEFAULT-NOT: .maxnreg

// RUN: mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir \
// RUN:   --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_90 O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm),reconcile-unrealized-casts,fly-snapshot{hints=\"maxnreg=32;maxnreg=128;\" binary-pass=\"gpu-module-to-binary{format=bin toolkit=%cuda_toolkit}\" out-dir=%t/bin})" \
// RUN:   -o /dev/null
// RUN: %python %S/Inputs/summarize_manifest.py %t/bin/manifest.json \
// RUN:   --keys registers,frame_bytes | FileCheck %s --check-prefix=BIN

// BIN:         sweep tool=fly-snapshot variants=3
// 32 registers, the rest spilled to a stack frame.
// BIN-LABEL:   variant 0 v0_maxnreg_32 status=ok duplicate_of=null hints=maxnreg=32
// BIN-NEXT:      file v0_maxnreg_32.mlir ok
// BIN-NEXT:      file v0_maxnreg_32.kernels.sm_90.cubin ok elf
// BIN-NEXT:      kernel kernels/tile_matmul registers=32 frame_bytes={{[1-9][0-9]*}}
// BIN-LABEL:   variant 1 v1_maxnreg_128 status=ok duplicate_of=null hints=maxnreg=128
// BIN-NEXT:      file v1_maxnreg_128.mlir ok
// BIN-NEXT:      file v1_maxnreg_128.kernels.sm_90.cubin ok elf
// BIN-NEXT:      kernel kernels/tile_matmul registers=128 frame_bytes={{[0-9]+}}
// Unhinted: more than 128 registers (168 with CUDA 13), nothing spilled.
// BIN-LABEL:   variant 2 v2_default status=ok duplicate_of=null hints={{$}}
// BIN-NEXT:      file v2_default.mlir ok
// BIN-NEXT:      file v2_default.kernels.sm_90.cubin ok elf
// BIN-NEXT:      kernel kernels/tile_matmul registers={{1[3-9][0-9]|2[0-5][0-9]}} frame_bytes=0
// BIN-NOT:     unlisted file

// ptxas' own report for the unhinted PTX agrees that it needs more than 128.
// RUN: %cuda_toolkit/bin/ptxas -arch=sm_90 -O3 -v %t/isa/v2_default.kernels.sm_90.ptx \
// RUN:   -o %t/default.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTXAS: Used {{1[3-9][0-9]|2[0-5][0-9]}} registers
