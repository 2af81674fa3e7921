//===- BinaryOptsInstrumentation.h - opts= flags that deliver ---*- C++ -*-===//
//
// Right before a pipeline's own gpu-module-to-binary runs, writes the backend
// flags of its `opts=` that ROCDL serialization would ignore onto the
// gpu.modules as the equivalent IR hints (BackendOpts.h), with a remark per
// flag and a warning per flag that has no IR equivalent. fly-opt adds it so
// that a front end's command line (FlyDSL: `gpu-module-to-binary{format=
// fatbin opts="--amdgpu-waves-per-eu=4 --amdgpu-num-vgpr=64"}`) gets what it
// asked for. Add it before a ReplayInstrumentation: the replays then start
// from the hinted module and their own hint sets win.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_PIPELINE_BINARYOPTSINSTRUMENTATION_H
#define FLY_PIPELINE_BINARYOPTSINSTRUMENTATION_H

#include "mlir/Pass/PassInstrumentation.h"

namespace fly {

class BinaryOptsInstrumentation : public mlir::PassInstrumentation {
public:
  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
};

} // namespace fly

#endif // FLY_PIPELINE_BINARYOPTSINSTRUMENTATION_H
