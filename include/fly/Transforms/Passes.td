//===- Passes.td - fly-snapshot passes ---------------------*- tablegen -*-===//

#ifndef FLY_TRANSFORMS_PASSES
#define FLY_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def FlySnapshot : Pass<"fly-snapshot", "::mlir::ModuleOp"> {
  let summary = "Checkpoint before gpu-module-to-binary and replay that pass "
                "once per backend hint set";
  let description = [{
    Place this pass immediately before `gpu-module-to-binary`, after the
    kernels are lowered to LLVM and their gpu.module carries a
    `#rocdl.target` or `#nvvm.target`. It checkpoints the module and, for each
    hint set, clones the gpu.modules into a nested `builtin.module` named
    `v<index>_<hints>` (attribute `fly.hints`), writes the hints onto the
    clone's kernels and target, verifies it and runs the binary pass on it
    through the parent pass manager, so `--mlir-print-ir-*`,
    `--mlir-print-ir-tree-dir`, `--mlir-timing` and crash reproducers cover
    every replay. Variants compile in parallel on the context's thread pool.
    The main module is left byte-identical, so the pipeline's own
    `gpu-module-to-binary` that follows runs as before.

    Hints (`hints="waves_per_eu=2,maxnreg=128;waves_per_eu=4"`, or a JSON list
    of objects in `hints-file`):
    - `waves_per_eu=N`: ROCDL `rocdl.waves_per_eu` on kernels (0: unset).
    - `maxnreg=N`: ROCDL passthrough `amdgpu-num-vgpr`; NVVM `nvvm.maxnreg`.
    - `O=0..3`: the target's optimisation level.
    - `fast_fp_math=0|1`, `unsafe_fp_math=0|1`: target flags (ROCDL `fast`,
      `unsafe-math`; NVVM `fast`, `ftz`).
    - `func.<attr>=<attribute>`, `passthrough.<attr>=<string>`,
      `target.<O|triple|chip|features|abi>=<value>`, `opts=<string>`
      (ptxas options: on #nvvm.target modules written into the target's
      `ptxas-cmd-options` flag, elsewhere appended to the binary pass's
      `opts`).

    With `out-dir`, each variant's gpu.binary (`.mlir`), its raw objects
    (`.hsaco`, `.cubin`, `.fatbin`, `.ptx`, `.s`) and one `manifest.json`
    (per-kernel register counts, spills, LDS, replay time, duplicates) are
    written there.

    Example:
    ```
    mlir-opt --load-pass-plugin=FlySnapshotPlugin.so --pass-pipeline=
      'builtin.module(..., fly-snapshot{hints="waves_per_eu=1;waves_per_eu=4"
       binary-pass="gpu-module-to-binary{toolkit=/opt/rocm}" out-dir=sweep},
       gpu-module-to-binary{toolkit=/opt/rocm})'
    ```
  }];
  let options = [
    Option<"hints", "hints", "std::string", /*default=*/[{""}],
           "Hint sets to replay: 'k=v,k=v;k=v' (';' separates sets, an "
           "empty set is the backend default)">,
    Option<"hintsFile", "hints-file", "std::string", /*default=*/[{""}],
           "JSON file with a list of hint-set objects, replayed after "
           "those of `hints`">,
    Option<"binaryPass", "binary-pass", "std::string",
           /*default=*/[{"gpu-module-to-binary"}],
           "The binary pass to replay, with its options, e.g. "
           "gpu-module-to-binary{format=isa toolkit=/usr/local/cuda}">,
    Option<"outDir", "out-dir", "std::string", /*default=*/[{""}],
           "Directory for per-variant objects and manifest.json">,
    Option<"snapshotFile", "snapshot-file", "std::string", /*default=*/[{""}],
           "Also write the checkpoint to this file (written atomically)">,
    Option<"snapshotFormat", "snapshot-format", "std::string",
           /*default=*/[{"bytecode"}],
           "Format of snapshot-file: bytecode or text">,
    Option<"maxParallel", "max-parallel", "unsigned", /*default=*/"0",
           "Variants compiled at once (0: the context's thread count); "
           "bounds the hinted copies alive at a time">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::ROCDL::ROCDLDialect"
  ];
}

#endif // FLY_TRANSFORMS_PASSES
