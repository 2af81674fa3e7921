//===- SweepReport.cpp - The manifest's top level for one compile ---------===//

#include "fly/Compiler/SweepReport.h"

using namespace llvm;

namespace fly {

json::Object getSweepReport(StringRef tool, const CompileJob &job,
                            const CompileResult &result) {
  json::Object report{
      {"tool", tool},
      {"input", job.sourceName},
      {"target", job.chip},
      {"pipeline", job.pipeline},
      {"prefix", result.prefix},
      {"binary_pass", result.binaryPass},
      {"suffix", result.suffix},
      {"prefix_from_cache", result.prefixFromCache},
      {"phase1", result.prefixFromCache ? "from cache" : "compiled"},
      {"base_key", result.baseKey},
      {"cache_explanation", result.cacheExplanation},
      {"prefix_ms", result.prefixMs},
      {"replay_ms", result.replayMs},
      {"total_ms", result.totalMs},
      {"warnings", json::Array(result.warnings)},
      {"reproducers", json::Array(result.reproducers)},
  };
  json::Array fromCache;
  for (bool cached : result.variantFromCache)
    fromCache.push_back(cached);
  report["variant_from_cache"] = std::move(fromCache);
  return report;
}

} // namespace fly
