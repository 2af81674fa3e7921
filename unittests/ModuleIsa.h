//===- ModuleIsa.h - The ISA fly-module-to-binary makes of a module -------===//

#ifndef FLY_UNITTESTS_MODULEISA_H
#define FLY_UNITTESTS_MODULEISA_H

#include "fly/Backend/ModuleToBinary.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace fly {

/// Runs fly-module-to-binary{format=isa} on `module` and returns the ISA of
/// each gpu.binary it made, in order.
inline std::vector<std::string> compileToIsa(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  FlyModuleToBinaryOptions options;
  options.compilationTarget = "isa";
  pm.addPass(createFlyModuleToBinary(options, nullptr));
  EXPECT_TRUE(mlir::succeeded(pm.run(module)));
  std::vector<std::string> isa;
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    isa.push_back(mlir::cast<mlir::gpu::ObjectAttr>(binary.getObjectsAttr()[0])
                      .getObject()
                      .getValue()
                      .str());
  return isa;
}

} // namespace fly

#endif // FLY_UNITTESTS_MODULEISA_H
