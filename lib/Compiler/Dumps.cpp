//===- Dumps.cpp - Per-variant debugging artefacts (FLY_DUMP_IR) ----------===//

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Pipeline/StageDumper.h"

using namespace mlir;

namespace fly {

bool SplitCompiler::capturesIntermediates() const {
  return dumper && dumper->isActive();
}

void SplitCompiler::dumpVariants(const CompileResult &result) {
  if (!capturesIntermediates())
    return;
  for (const VariantResult &variant : result.variants) {
    if (!variant.succeeded())
      continue;
    dumper->write(variant.id + "_gpu-module-to-binary", printBinaryIR(variant));
    // LLVM IR and ISA as the variant's own replay handed them over
    // (fly-module-to-binary; Backend/ModuleToBinary.h says which formats
    // give which).
    for (const TargetIntermediates &seen : variant.intermediates)
      if (!seen.llvmIR.empty())
        dumper->write(variant.id + "." + seen.gpuModule, seen.llvmIR, ".ll");
    for (const TargetIntermediates &seen : variant.intermediates)
      if (!seen.isa.empty())
        dumper->write(variant.id + "." + seen.gpuModule, seen.isa, ".s");
  }
}

} // namespace fly
