//===- Registration.h - What a context needs to run the split --*- C++ -*-===//

#ifndef FLY_COMPILER_REGISTRATION_H
#define FLY_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fly {

/// Registers every upstream dialect and extension plus the LLVM IR
/// translations, which gpu-module-to-binary needs to serialise ROCDL and
/// NVVM targets: what a context that runs arbitrary lowering pipelines and
/// the replays needs.
void registerCompilerDialects(mlir::DialectRegistry &registry);

} // namespace fly

#endif // FLY_COMPILER_REGISTRATION_H
