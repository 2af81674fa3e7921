//===- ModuleIsa.h - The ISA fly-module-to-binary makes of a module -------===//

#ifndef FLY_UNITTESTS_MODULEISA_H
#define FLY_UNITTESTS_MODULEISA_H

#include "fly/Backend/ModuleToBinary.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintSet.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace fly {

/// Runs fly-module-to-binary{format=isa} on `module`.
inline mlir::LogicalResult runModuleToIsa(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  FlyModuleToBinaryOptions options;
  options.compilationTarget = "isa";
  pm.addPass(createFlyModuleToBinary(options, nullptr));
  return pm.run(module);
}

/// Runs fly-module-to-binary{format=isa} on `module` and returns the ISA of
/// each gpu.binary it made, in order.
inline std::vector<std::string> compileToIsa(mlir::ModuleOp module) {
  EXPECT_TRUE(mlir::succeeded(runModuleToIsa(module)));
  std::vector<std::string> isa;
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    isa.push_back(mlir::cast<mlir::gpu::ObjectAttr>(binary.getObjectsAttr()[0])
                      .getObject()
                      .getValue()
                      .str());
  return isa;
}

/// `gpuModule` (MLIR text with one gpu.module) as one copy of the
/// gpu.module per hint set of `sets`, its hints applied, in order.
inline mlir::OwningOpRef<mlir::ModuleOp>
makeHintedCopies(mlir::MLIRContext &context, llvm::StringRef gpuModule,
                 llvm::StringRef sets) {
  llvm::Expected<std::vector<HintSet>> hintSets = parseHintSets(sets);
  EXPECT_TRUE(bool(hintSets));
  if (!hintSets)
    return {};
  mlir::OwningOpRef<mlir::ModuleOp> source =
      mlir::parseSourceString<mlir::ModuleOp>(gpuModule, &context);
  EXPECT_TRUE(bool(source));
  if (!source)
    return {};
  auto base = *source->getOps<mlir::gpu::GPUModuleOp>().begin();
  mlir::OpBuilder b(&context);
  b.setInsertionPointToEnd(source->getBody());
  for (auto [index, hints] : llvm::enumerate(*hintSets)) {
    auto clone = mlir::cast<mlir::gpu::GPUModuleOp>(b.clone(*base));
    clone.setSymName(("v" + std::to_string(index)).c_str());
    EXPECT_TRUE(mlir::succeeded(applyHints(clone, hints))) << hints.canonical();
  }
  base.erase();
  return source;
}

/// The ISA of `gpuModule` under each hint set of `sets`
/// (makeHintedCopies), in one run of fly-module-to-binary{format=isa}, in
/// order.
inline std::vector<std::string> compileHintSetsToIsa(mlir::MLIRContext &context,
                                                     llvm::StringRef gpuModule,
                                                     llvm::StringRef sets) {
  mlir::OwningOpRef<mlir::ModuleOp> source =
      makeHintedCopies(context, gpuModule, sets);
  if (!source)
    return {};
  size_t copies = llvm::range_size(source->getOps<mlir::gpu::GPUModuleOp>());
  std::vector<std::string> isa = compileToIsa(*source);
  EXPECT_EQ(isa.size(), copies);
  return isa;
}

} // namespace fly

#endif // FLY_UNITTESTS_MODULEISA_H
