// A hint set that changes nothing (waves_per_eu=0 leaves the attribute
// unset, like the empty set) compiles to the same objects as the default:
// the manifest marks it `duplicate_of` and the pass says so in a remark. A
// hint set the backend cannot compile (an unknown target triple) fails that
// variant only: its error is in the manifest, every other variant's files
// are still written, and the run fails.

// RUN: rm -rf %t && mkdir -p %t
// RUN: mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null -verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=0;;target.triple=bogus-unknown;O=0\" binary-pass=\"gpu-module-to-binary{format=isa}\"})"

// RUN: not mlir-opt --load-pass-plugin=%fly_plugin %s -o /dev/null 2>%t/stderr.txt \
// RUN:   --pass-pipeline="builtin.module(fly-snapshot{hints=\"waves_per_eu=0;;target.triple=bogus-unknown;O=0\" binary-pass=\"gpu-module-to-binary{format=isa}\" out-dir=%t/sweep jobs=4})"
// RUN: FileCheck %s --check-prefix=STDERR --input-file=%t/stderr.txt
// RUN: %python %S/Inputs/summarize_manifest.py %t/sweep/manifest.json | FileCheck %s

// STDERR: remark: fly-snapshot: variant 'v1_default' makes the same objects as variant 0 (copied, not compiled)
// STDERR: error: fly-snapshot: replay of variant 'v2_target_triple_bogus_unknown' (hints 'target.triple=bogus-unknown') failed

// CHECK:       sweep tool=fly-snapshot variants=4
// CHECK-LABEL: variant 0 v0_waves_per_eu_0 status=ok duplicate_of=null hints=waves_per_eu=0
// CHECK-NEXT:    file v0_waves_per_eu_0.mlir ok
// CHECK-NEXT:    file v0_waves_per_eu_0.kernels.gfx942.s ok
// CHECK-LABEL: variant 1 v1_default status=ok duplicate_of=0 hints={{$}}
// CHECK-NEXT:    file v1_default.mlir ok
// CHECK-NEXT:    file v1_default.kernels.gfx942.s ok
// CHECK-LABEL: variant 2 v2_target_triple_bogus_unknown status=failed duplicate_of=null hints=target.triple=bogus-unknown
// CHECK-NOT:     file
// CHECK-NEXT:    error {{.*}}Failed to lookup target for triple 'bogus-unknown'
// CHECK-LABEL: variant 3 v3_O_0 status=ok duplicate_of=null hints=O=0
// CHECK-NEXT:    file v3_O_0.mlir ok
// CHECK-NEXT:    file v3_O_0.kernels.gfx942.s ok
// CHECK-NOT:   unlisted file

// The duplicate really is byte-identical; the O=0 variant is not.
// RUN: cmp %t/sweep/v0_waves_per_eu_0.kernels.gfx942.s %t/sweep/v1_default.kernels.gfx942.s
// RUN: not cmp -s %t/sweep/v0_waves_per_eu_0.kernels.gfx942.s %t/sweep/v3_O_0.kernels.gfx942.s

// The manifest's JSON for the duplicate and the failure.
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t/sweep/manifest.json
// JSON:      "duplicate_of": 0,
// JSON:      "id": "v1_default",
// JSON:      "note": "objects identical to variant 0: this hint set had no effect",
// JSON:      "error": "{{.*}}Failed to lookup target for triple 'bogus-unknown'
// JSON:      "id": "v2_target_triple_bogus_unknown",
// JSON:      "status": "failed"

// expected-warning@+3 {{fly-snapshot: no out-dir= given: 4 variants will be compiled and discarded (give out-dir=<dir> to keep them)}}
// expected-remark@+2 {{fly-snapshot: variant 'v1_default' makes the same objects as variant 0 (copied, not compiled): this hint set had no effect}}
// expected-error@+1 {{fly-snapshot: replay of variant 'v2_target_triple_bogus_unknown' (hints 'target.triple=bogus-unknown') failed:}}
module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {
    llvm.func @k(%arg0: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %0 = rocdl.workitem.id.x : i32
      %1 = llvm.getelementptr %arg0[%0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      %2 = llvm.load %1 : !llvm.ptr<1> -> f32
      %3 = llvm.fadd %2, %2 : f32
      llvm.store %3, %1 : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
