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
    of objects in `hints-file`): every hint, its values and what it writes
    on ROCDL and NVVM are in the "Hints" table at the end of this document,
    generated from the hint registry (`fly-hint-doc`; README.md holds the
    same table).

    With no hints the pass only checks its placement (and writes
    `snapshot-file`), and says so in a warning. `FLY_DUMP_IR=1` writes the
    checkpoint and each variant's gpu.binary to `FLY_DUMP_DIR`.

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
           "empty set is the backend default) or a product "
           "'k=v1,v2 x k=v1,v2'">,
    Option<"hintsFile", "hints-file", "std::string", /*default=*/[{""}],
           "JSON file with a list of hint-set objects (or an object of "
           "lists: their product), replayed after "
           "those of `hints`">,
    Option<"binaryPass", "binary-pass", "std::string",
           /*default=*/[{"gpu-module-to-binary"}],
           "The binary pass to replay, with its options, e.g. "
           "gpu-module-to-binary{format=isa toolkit=/usr/local/cuda} "
           "(default: the pipeline's next pass when --pass-pipeline shows "
           "it, else gpu-module-to-binary with its defaults)">,
    Option<"outDir", "out-dir", "std::string", /*default=*/[{""}],
           "Directory for per-variant objects and manifest.json">,
    Option<"snapshotFile", "snapshot-file", "std::string", /*default=*/[{""}],
           "Also write the checkpoint to this file (written atomically)">,
    Option<"snapshotFormat", "snapshot-format", "std::string",
           /*default=*/[{"bytecode"}],
           "Format of snapshot-file: bytecode or text">,
    Option<"jobs", "jobs", "unsigned", /*default=*/"0",
           "Variants compiled at once (default 0: the context's thread "
           "count); bounds the hinted copies alive at a time">,
    Option<"variantTimeout", "variant-timeout", "unsigned",
           /*default=*/"::fly::getDefaultVariantTimeout()",
           "Seconds one variant may compile before it fails naming the "
           "limit, 0 = none (default: FLY_VARIANT_TIMEOUT, else 600); "
           "in-process replays enforce it on the ptxas they run">,
    Option<"reuseIsa", "reuse-isa", "bool", /*default=*/"true",
           "Compile the ISA once for variants that share it (NVVM: hints "
           "that only differ in maxnreg or ptxas options) and finish each "
           "with fly-assemble-isa; the objects are byte-identical (default "
           "true, as in fly-tune and fly-opt)">,
    Option<"executor", "executor", "std::string", /*default=*/[{"batch"}],
           "Where variants compile: batch (side by side on the context's "
           "thread pool, fastest) or isolated (each alone under crash "
           "recovery, so a backend crash or LLVM fatal error fails only its "
           "variant instead of ending mlir-opt; one variant at a time, as "
           "replays inside a pass share its module). fly-tune, the C API and "
           "Python also have process (child processes)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::ROCDL::ROCDLDialect"
  ];
}

def FlyAssembleIsa : Pass<"fly-assemble-isa", ""> {
  let summary = "Finish gpu.modules whose ISA was compiled earlier into the "
                "gpu.binary that gpu-module-to-binary would make";
  let description = [{
    The second half of `gpu-module-to-binary{format=bin|fatbin}`, for
    gpu.modules that carry their ISA already: attribute `fly.isa`, one
    `#gpu.object<..., assembly>` per target, in target order (made by
    `gpu-module-to-binary{format=isa}`). Each is finished the way upstream's
    serializer finishes its own ISA: NVVM runs ptxas (and for `fatbin`
    fatbinary) with the same command lines, ROCDL assembles the ISA and links
    it with lld (in this process); the objects are then created through the
    target attribute, so they (bytes, kernel metadata) equal those of a plain
    `gpu-module-to-binary` on the same module, and each gpu.module becomes a
    `gpu.binary` op in its place.

    fly-snapshot's replays use it with `reuse-isa`: variants whose hints do
    not change the ISA (NVVM `maxnreg`, ptxas options) share one ISA compile
    and run only this pass each.
  }];
  let options = [
    Option<"compilationTarget", "format", "std::string", [{"fatbin"}],
           "The object format: bin (binary) or fatbin (fatbinary)">,
    Option<"toolkitPath", "toolkit", "std::string", [{""}],
           "The CUDA or ROCm toolkit, as for gpu-module-to-binary">,
    Option<"cmdOptions", "opts", "std::string", [{""}],
           "Command-line options for ptxas, as for gpu-module-to-binary">,
    Option<"elfSection", "section", "std::string", [{""}],
           "ELF section the objects go in, as for gpu-module-to-binary">,
    Option<"toolTimeout", "tool-timeout", "unsigned", "0",
           "Seconds ptxas and fatbinary may run before they are killed and "
           "the gpu.module fails (0 = no limit)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FlyModuleToBinary : Pass<"fly-module-to-binary", ""> {
  let summary = "gpu-module-to-binary that hands each target's LLVM IR and "
                "ISA to its caller";
  let description = [{
    Upstream's `gpu-module-to-binary` (same options, same serialization, same
    objects, each gpu.module replaced by a `gpu.binary` in its place) built by
    fly-snapshot's replays under `FLY_DUMP_IR` with a C++ capture: each
    target's optimised LLVM IR (`gpu::TargetOptions`'s
    `optimizedLlvmIRCallback`) and ISA (`isaCallback`) are kept for the
    variant's `.ll` and `.s` dumps, so nothing compiles twice to get them.
    On `#rocdl.target`, whose serializer forwards no callbacks in LLVM 22, it
    serializes with a copy of upstream's ROCDL serializer that does. Run by
    name, it has no capture and is `gpu-module-to-binary`.
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", [{""}],
           "Toolkit path, as for gpu-module-to-binary">,
    ListOption<"linkFiles", "l", "std::string",
               "Extra files to link to, as for gpu-module-to-binary">,
    Option<"cmdOptions", "opts", "std::string", [{""}],
           "Command line options to pass to the tools, as for "
           "gpu-module-to-binary">,
    Option<"compilationTarget", "format", "std::string", [{"fatbin"}],
           "The target representation of the compilation process, as for "
           "gpu-module-to-binary">,
    Option<"elfSection", "section", "std::string", [{""}],
           "ELF section where binary is to be located, as for "
           "gpu-module-to-binary">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // FLY_TRANSFORMS_PASSES
