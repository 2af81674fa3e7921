//===- CompileObserved.cpp - Whether LLVM's compile is watched ------------===//

#include "CompileObserved.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/CodeGen/TargetPassConfig.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/PrintPasses.h"
#include "llvm/Pass.h"
#include "llvm/Support/CommandLine.h"

namespace fly {

bool isObservingOptionName(llvm::StringRef name) {
  // MLIR's printing and checking options, and those of mlir-opt's main
  // (which have no prefix), act on MLIR, not on LLVM's passes; fly-tune's
  // time trace times LLVM's passes without changing or printing them.
  static constexpr llvm::StringRef kNotLlvms[] = {
      "verify-diagnostics", "verify-each", "verify-roundtrip",
      "dump-pass-pipeline", "time-trace",  "time-trace-granularity"};
  if (name.starts_with("mlir-") || name.starts_with("fly-") ||
      llvm::is_contained(kNotLlvms, name))
    return false;
  static constexpr llvm::StringRef kWords[] = {
      "print", "dump", "view", "verify", "stats", "debug", "trace"};
  llvm::SmallVector<llvm::StringRef> words;
  name.split(words, '-');
  return llvm::any_of(words, [](llvm::StringRef word) {
    return llvm::is_contained(kWords, word);
  });
}

bool isLlvmCompileObserved(const llvm::LLVMContext &context) {
  if (context.getDiagHandlerPtr()->isAnyRemarkEnabled() ||
      llvm::AreStatisticsEnabled() || llvm::TimePassesIsEnabled ||
      llvm::shouldPrintBeforeSomePass() || llvm::shouldPrintAfterSomePass() ||
      llvm::TargetPassConfig::hasLimitedCodeGenPipeline())
    return true;
  for (const auto &entry : llvm::cl::getRegisteredOptions())
    if (entry.second->getNumOccurrences() > 0 &&
        isObservingOptionName(entry.first))
      return true;
  return false;
}

} // namespace fly
