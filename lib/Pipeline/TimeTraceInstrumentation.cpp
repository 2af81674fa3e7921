//===- TimeTraceInstrumentation.cpp - Pass runs in the time trace ---------===//

#include "fly/Pipeline/TimeTraceInstrumentation.h"
#include "fly/Support/TimeTrace.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

#include "llvm/Support/TimeProfiler.h"

using namespace mlir;

namespace fly {

void TimeTraceInstrumentation::runBeforePass(Pass *pass, Operation *op) {
  enterTimeTraceThread();
  llvm::timeTraceProfilerBegin(
      pass->getArgument().empty() ? pass->getName() : pass->getArgument(), [&] {
        std::string detail = op->getName().getStringRef().str();
        if (auto name =
                op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
          detail += " @" + name.getValue().str();
        return detail;
      });
}

void TimeTraceInstrumentation::runAfterPass(Pass *, Operation *) {
  llvm::timeTraceProfilerEnd();
  leaveTimeTraceThread();
}

void TimeTraceInstrumentation::runAfterPassFailed(Pass *pass, Operation *op) {
  runAfterPass(pass, op);
}

} // namespace fly
