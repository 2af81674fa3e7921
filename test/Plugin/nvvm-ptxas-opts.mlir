// The `opts` hint on an #nvvm.target module: upstream 22 appends the target's
// flags["ptxas-cmd-options"] to ptxas's command line, so the hint is written
// there (IR) rather than into the binary pass's `opts`. The hinted variant
// and the default then share one binary pass instance and one batch, and
// ptxas still obeys the option (here a register cap).

// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir \
// RUN:   --pass-pipeline="builtin.module(nvvm-attach-target{chip=sm_90 O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm),reconcile-unrealized-casts,fly-snapshot{hints=\"opts=--maxrregcount=40;\" binary-pass=\"gpu-module-to-binary{format=bin toolkit=%cuda_toolkit}\" out-dir=%t})" \
// RUN:   -o /dev/null
// RUN: %python %S/Inputs/summarize_manifest.py %t/manifest.json \
// RUN:   --keys registers | FileCheck %s --check-prefix=REGS
// RUN: FileCheck %s --check-prefix=OBJECT --input-file=%t/v0_opts___maxrregcount_40.mlir
// RUN: %python -c "import json; m = json.load(open('%t/manifest.json')); \
// RUN:   [print(v['id'], v['replayed_with'], v['binary_pass']) for v in m['variants']]" \
// RUN:   | FileCheck %s --check-prefix=BATCH

// REGS-LABEL:  variant 0 v0_opts___maxrregcount_40 status=ok
// REGS:          kernel kernels/tile_matmul registers=40
// REGS-LABEL:  variant 1 v1_default status=ok
// REGS:          kernel kernels/tile_matmul registers={{1[3-9][0-9]|2[0-5][0-9]}}

// OBJECT: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", flags = {"ptxas-cmd-options" = ["--maxrregcount=40"]}>

// One batch of two, and the pass's own `opts` untouched.
// BATCH:      v0_opts___maxrregcount_40 2 gpu-module-to-binary{format=bin  opts= section= toolkit=
// BATCH-NEXT: v1_default 2 gpu-module-to-binary{format=bin  opts= section= toolkit=
