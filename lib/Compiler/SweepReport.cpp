//===- SweepReport.cpp - The manifest header of a split compile -----------===//

#include "Compiler/SweepReport.h"

using namespace llvm;

namespace fly {

SweepHeader getSweepHeader(StringRef tool, const CompileJob &job,
                           const CompileResult &result) {
  SweepHeader header;
  header.tool = tool.str();
  header.input = job.sourceName;
  header.target = job.chip;
  header.pipeline = job.pipeline;
  header.prefix = result.prefix;
  header.binaryPass = result.binaryPass;
  header.suffix = result.suffix;
  header.prefixFromCache = result.prefixFromCache;
  header.baseKey = result.baseKey;
  header.cacheExplanation = result.cacheExplanation;
  header.prefixMs = result.prefixMs;
  header.replayMs = result.replayMs;
  header.totalMs = result.totalMs;
  header.warnings = result.warnings;
  header.reproducers = result.reproducers;
  header.variantFromCache = result.variantFromCache;
  return header;
}

} // namespace fly
