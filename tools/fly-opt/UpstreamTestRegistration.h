//===- UpstreamTestRegistration.h - mlir-opt's tests ------------*- C++ -*-===//

#ifndef FLY_OPT_UPSTREAMTESTREGISTRATION_H
#define FLY_OPT_UPSTREAMTESTREGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fly {

/// Registers upstream's test passes, as stock mlir-opt does.
void registerUpstreamTestPasses();

/// Adds upstream's test dialects and transform dialect test extensions, as
/// stock mlir-opt does.
void registerUpstreamTestDialects(mlir::DialectRegistry &registry);

} // namespace fly

#endif // FLY_OPT_UPSTREAMTESTREGISTRATION_H
