//===- TimeTraceInstrumentation.h - Pass runs in the time trace -*- C++ -*-===//
//
// Each pass run as a span of the time trace (fly/Support/TimeTrace.h) on the
// thread that runs it, named by the pass's argument, detailed by the
// operation it runs on: phase 1's passes on the kernel's thread, each
// replay's binary pass on the variant's. Adds nothing to the output and
// changes nothing that compiles (unlike --mlir-timing, it does not make the
// replays instrumented: copies stay copies).
//
//===----------------------------------------------------------------------===//

#ifndef FLY_PIPELINE_TIMETRACEINSTRUMENTATION_H
#define FLY_PIPELINE_TIMETRACEINSTRUMENTATION_H

#include "mlir/Pass/PassInstrumentation.h"

namespace fly {

class TimeTraceInstrumentation : public mlir::PassInstrumentation {
public:
  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override;
};

} // namespace fly

#endif // FLY_PIPELINE_TIMETRACEINSTRUMENTATION_H
