//===- Snapshot.cpp - The checkpoint before gpu-module-to-binary ----------===//

#include "fly/Snapshot/Snapshot.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace llvm;

namespace fly {

std::optional<SnapshotFormat> parseSnapshotFormat(StringRef name) {
  if (name == "bytecode")
    return SnapshotFormat::Bytecode;
  if (name == "text")
    return SnapshotFormat::Text;
  return std::nullopt;
}

SmallVector<gpu::GPUModuleOp> getTargetedGpuModules(ModuleOp module) {
  SmallVector<gpu::GPUModuleOp> modules;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
    if (ArrayAttr targets = gpuModule.getTargetsAttr();
        targets && !targets.empty())
      modules.push_back(gpuModule);
  return modules;
}

LogicalResult verifyCheckpointPosition(ModuleOp module, StringRef who) {
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(module);
  bool anyGpuModule = !module.getOps<gpu::GPUModuleOp>().empty();
  // Three different mistakes, three different messages: after the binary
  // pass, nothing GPU at all, before the target is attached.
  if (!anyGpuModule) {
    bool isPass = who == "fly-snapshot";
    auto binaries = module.getOps<gpu::BinaryOp>();
    if (!binaries.empty()) {
      gpu::BinaryOp first = *binaries.begin();
      if (isPass)
        return emitError(first.getLoc())
               << "fly-snapshot runs after gpu-module-to-binary: @"
               << first.getName()
               << " is already a gpu.binary; place fly-snapshot immediately "
                  "before gpu-module-to-binary, not after it";
      return emitError(first.getLoc())
             << who << ": @" << first.getName()
             << " is already a gpu.binary (the input was compiled past "
                "gpu-module-to-binary); give the module before that pass";
    }
    return emitError(module.getLoc())
           << who
           << (isPass ? " found no gpu.module: this module has no GPU "
                        "kernel to compile, so there is nothing to replay"
                      : ": the module has no gpu.module, so there is no GPU "
                        "kernel to compile (kernels live in a gpu.module "
                        "with gpu.func ops)");
  }
  if (gpuModules.empty()) {
    InFlightDiagnostic diag =
        emitError(module.getLoc())
        << who
        << " found no gpu.module with a target attribute (#rocdl.target or "
           "#nvvm.target); place it after the target is attached "
           "(rocdl-attach-target / nvvm-attach-target) and the kernels are "
           "lowered to LLVM, immediately before gpu-module-to-binary";
    for (auto untargeted : module.getOps<gpu::GPUModuleOp>())
      diag.attachNote(untargeted.getLoc()) << "this gpu.module has no target";
    return failure();
  }
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    for (auto func : gpuModule.getOps<gpu::GPUFuncOp>())
      return emitError(func.getLoc())
             << "kernel @" << func.getName() << " is still a gpu.func: " << who
             << " must run after the GPU-to-LLVM lowering "
                "(convert-gpu-to-rocdl / convert-gpu-to-nvvm), immediately "
                "before gpu-module-to-binary";
    if (gpuModule.getOps<LLVM::LLVMFuncOp>().empty())
      return emitError(gpuModule.getLoc())
             << "gpu.module @" << gpuModule.getName()
             << " has no llvm.func: " << who
             << " must run after the kernels are lowered to LLVM, "
                "immediately before gpu-module-to-binary";
  }
  return success();
}

LogicalResult writeSnapshot(ModuleOp module, StringRef path,
                            SnapshotFormat format) {
  // writeToOutput writes to a temporary beside `path` and renames it over
  // `path` only once everything is written.
  Error err = writeToOutput(path, [&](raw_ostream &os) -> Error {
    if (format == SnapshotFormat::Text) {
      module->print(os);
      return Error::success();
    }
    if (failed(writeBytecodeToFile(module, os)))
      return createStringError(inconvertibleErrorCode(),
                               "bytecode writer failed");
    return Error::success();
  });
  if (err)
    return emitError(module.getLoc()) << "cannot write snapshot '" << path
                                      << "': " << toString(std::move(err));
  return success();
}

static OwningOpRef<ModuleOp> parseSnapshot(std::unique_ptr<MemoryBuffer> buffer,
                                           MLIRContext *context) {
  StringRef name = buffer->getBufferIdentifier();
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  // Parsing verifies the module; the position check makes sure it is a
  // snapshot and not some other MLIR file.
  ParserConfig config(context, /*verifyAfterParse=*/true);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module) {
    emitError(FileLineColLoc::get(context, name, 0, 0))
        << "snapshot '" << name
        << "' is not a valid MLIR module (truncated, corrupt, or written by "
           "another MLIR version)";
    return nullptr;
  }
  if (failed(verifyCheckpointPosition(*module, "snapshot")))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> readSnapshotBuffer(StringRef buffer, StringRef name,
                                         MLIRContext *context) {
  // The text lexer needs a null-terminated buffer: parse a copy.
  return parseSnapshot(MemoryBuffer::getMemBufferCopy(buffer, name), context);
}

} // namespace fly
