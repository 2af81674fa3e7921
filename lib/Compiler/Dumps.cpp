//===- Dumps.cpp - Per-variant debugging artefacts (FLY_DUMP_IR) ----------===//

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Pipeline/StageDumper.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

using namespace mlir;
using llvm::StringRef;

namespace fly {

void SplitCompiler::dumpVariants(ModuleOp preBinary,
                                 const CompileResult &result) {
  if (!dumper)
    return;
  for (const VariantResult &variant : result.variants) {
    if (!variant.succeeded())
      continue;
    dumper->write(variant.id + "_gpu-module-to-binary", variant.binaryIR);
    // LLVM IR and ISA: the variant's binary pass once more with that format.
    for (auto [format, extension] :
         {std::pair<StringRef, StringRef>{"llvm", ".ll"},
          std::pair<StringRef, StringRef>{"isa", ".s"}}) {
      BinaryPassOptions artefactPass = result.plan.binaryPass;
      artefactPass.compilationTarget = format.str();
      FailureOr<ReplayPlan> plan =
          buildReplayPlan(preBinary, artefactPass, {variant.hints}, {});
      if (failed(plan))
        continue;
      ReplayOptions replay;
      replay.maxParallel = 1;
      FailureOr<std::vector<VariantResult>> artefact = replayPlanned(
          preBinary, *plan, plan->all(), replay, /*nestInSource=*/false,
          [&](OpPassManager &pipeline, ModuleOp container) {
            return runPipeline(pipeline, container, false);
          });
      if (failed(artefact) || !artefact->front().succeeded())
        continue;
      for (const VariantObject &object : artefact->front().objects) {
        std::string text = object.bytes;
        if (format == "llvm") {
          llvm::LLVMContext llvmContext;
          auto module = llvm::parseBitcodeFile(
              llvm::MemoryBufferRef(object.bytes, "offload"), llvmContext);
          if (!module) {
            llvm::consumeError(module.takeError());
            continue;
          }
          text.clear();
          llvm::raw_string_ostream os(text);
          (*module)->print(os, nullptr);
        }
        dumper->write(variant.id + "." + object.gpuModule, text, extension);
      }
    }
  }
}

} // namespace fly
