// REQUIRES: rocdl-toolkit
// Without binary-pass= fly-snapshot replays the pipeline's next pass with
// its options (here its toolkit: the default binary pass has none, and every
// variant would fail to link); a binary-pass= that differs from the next
// pass is a warning. FLY_DUMP_IR=1 dumps the checkpoint and each variant.

// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{lower} = rocdl-attach-target{chip=gfx942 O=3},gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset=gfx942}),reconcile-unrealized-casts

// RUN: env FLY_DUMP_IR=1 FLY_DUMP_DIR=%t/dump mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(%{lower},fly-snapshot{hints=\"waves_per_eu=4;maxnreg=64\" out-dir=%t/next},gpu-module-to-binary{toolkit=%rocm_toolkit})" 2> %t/next.err
// RUN: FileCheck %s --check-prefix=NEXT --allow-empty < %t/next.err
// NEXT-NOT: warning
// NEXT-NOT: error
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/next/manifest.json
// MANIFEST-LABEL: "binary_pass": "gpu-module-to-binary{format=fatbin {{.*}}toolkit={{.+}}}"
// MANIFEST: "tool": "fly-snapshot"
// MANIFEST: "status": "ok"
// MANIFEST: "status": "ok"
// RUN: ls %t/dump | FileCheck %s --check-prefix=DUMP
// DUMP: 00_fly-snapshot_checkpoint.mlir
// DUMP: 01_v0_waves_per_eu_4_gpu-module-to-binary.mlir
// DUMP: 02_v1_maxnreg_64_gpu-module-to-binary.mlir

// RUN: mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(%{lower},fly-snapshot{hints=\"waves_per_eu=4\" binary-pass=\"gpu-module-to-binary{format=isa toolkit=%rocm_toolkit}\"},gpu-module-to-binary{toolkit=%rocm_toolkit})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DIFFER
// DIFFER: tile_matmul.mlir:6:1: warning: fly-snapshot: binary-pass 'gpu-module-to-binary{format=isa {{.*}}' differs from the pipeline's next pass 'gpu-module-to-binary{format=fatbin {{.*}}': the variants are not compiled as the pipeline's own gpu-module-to-binary

// The passes are compared as typed options: another spelling of the same
// pass (options reordered, a format's long name) is no difference.
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(%{lower},fly-snapshot{hints=\"waves_per_eu=4\" out-dir=%t/same binary-pass=\"gpu-module-to-binary{toolkit=%rocm_toolkit format=fatbinary}\"},gpu-module-to-binary{format=fatbin toolkit=%rocm_toolkit})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SAME --allow-empty
// SAME-NOT: differs
// RUN: FileCheck %s --check-prefix=SAME-MANIFEST < %t/same/manifest.json
// SAME-MANIFEST-LABEL: "binary_pass": "gpu-module-to-binary{format=fatbinary {{.*}}toolkit={{.+}}}"
// SAME-MANIFEST: "status": "ok"

// A failing variant: the whole cause, indented under the error.
// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %fly_src/examples/tile_matmul.mlir -o /dev/null \
// RUN:   --pass-pipeline="builtin.module(%{lower},fly-snapshot{hints=\"target.triple=nonsense-unknown-none\"},gpu-module-to-binary{toolkit=%rocm_toolkit})" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CAUSE
// CAUSE: error: fly-snapshot: replay of variant 'v0_target_triple_nonsense_unknown_none' (hints 'target.triple=nonsense-unknown-none') failed:
// CAUSE-NEXT: {{^    }}{{.*}}Failed to lookup target for triple 'nonsense-unknown-none'
