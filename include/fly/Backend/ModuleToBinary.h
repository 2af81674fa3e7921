//===- ModuleToBinary.h - fly-module-to-binary ------------------*- C++ -*-===//
//
// fly-module-to-binary is upstream's gpu-module-to-binary
// (mlir/lib/Dialect/GPU/Transforms/ModuleToBinary.cpp) built with a capture:
// every target's serialization hands its optimised LLVM IR and its ISA to
// the capture through gpu::TargetOptions' callbacks, attributed to (the op
// the pass ran on, gpu.module, target index). FLY_DUMP_IR's `.ll` and `.s`
// come from there instead of two more compiles per variant.
//
// What each serializer gives in LLVM 22 (checked against libMLIR 22.1.8):
//   format   | NVVM (upstream serializer) | ROCDL (CapturingRocdlSerializer)
//   offload  | .ll                        | .ll
//   isa      | .ll, .s (PTX)              | .ll, .s (the object itself)
//   bin      | .ll, .s (PTX, before ptxas) | .ll, .s (before assembling)
//   fatbin   | .ll, .s (PTX, before ptxas) | .ll, .s (before assembling)
// Upstream's ROCDL serializer forwards none of the callbacks (LLVM 22's
// SerializeGPUModuleBase does not pass them to ModuleToObject), so ROCDL
// targets are serialized with a copy of it that does (ModuleToBinary.cpp).
// Other targets give what their serializer forwards.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_BACKEND_MODULETOBINARY_H
#define FLY_BACKEND_MODULETOBINARY_H

#include "fly/Backend/IntermediateCapture.h"
#include "fly/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <optional>

namespace fly {

/// The format option as gpu-module-to-binary reads it (ModuleToBinary.cpp:
/// offloading|llvm, assembly|isa, binary|bin, fatbinary|fatbin).
std::optional<mlir::gpu::CompilationTarget>
parseBinaryFormat(llvm::StringRef format);

/// fly-module-to-binary with `options`, capturing into `capture` (null:
/// nothing is captured and it is gpu-module-to-binary). An LLVM error
/// diagnostic, fatal error or crash in a target's serializer fails that
/// gpu.module with a located error instead of ending the process.
/// `asUpstream`: the pass names itself gpu-module-to-binary
/// (GpuModuleToBinaryPass), so that a replay's IR dumps, timings and
/// instrumentations name the pass the user wrote.
std::unique_ptr<mlir::Pass>
createFlyModuleToBinary(const FlyModuleToBinaryOptions &options,
                        std::shared_ptr<IntermediateCapture> capture,
                        bool asUpstream = false);

/// What upstream's moduleSerializer (ModuleToBinary.cpp) does around each
/// target's object: takes one object per target of `gpuModule` from
/// `makeObject` (null: it failed and said why), then puts a gpu.binary with
/// them and the module's offloading handler in the gpu.module's place.
mlir::LogicalResult replaceWithBinary(
    mlir::gpu::GPUModuleOp gpuModule,
    llvm::function_ref<mlir::Attribute(unsigned index,
                                       mlir::gpu::TargetAttrInterface target)>
        makeObject);

} // namespace fly

#endif // FLY_BACKEND_MODULETOBINARY_H
