//===- PrefixStage.cpp - Phase 1: the prefix once, or from the cache ------===//

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Pipeline/StageDumper.h"
#include "fly/Snapshot/Snapshot.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassRegistry.h"

#include <chrono>

using namespace mlir;
using llvm::StringRef;

namespace fly {

using Clock = std::chrono::steady_clock;
static double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// The cached pre-binary module names its source file by this placeholder, set
// back to the current run's name on load: the key covers the source text but
// not its name, so renamed copies of one input share an entry (a hit) and
// still report errors at their own file. Locations naming other files (an
// explicit loc("...") in the text) are part of the text and stay as they are.
static constexpr llvm::StringLiteral kCachedSourceName = "<fly-cached-source>";

static void renameSourceFile(Operation *root, StringRef from, StringRef to) {
  MLIRContext *context = root->getContext();
  StringAttr fromName = StringAttr::get(context, from);
  StringAttr toName = StringAttr::get(context, to);
  AttrTypeReplacer replacer;
  replacer.addReplacement(
      [&](FileLineColRange loc) -> std::optional<Attribute> {
        if (loc.getFilename() != fromName)
          return std::nullopt;
        return FileLineColRange::get(toName, loc.getStartLine(),
                                     loc.getStartColumn(), loc.getEndLine(),
                                     loc.getEndColumn());
      });
  replacer.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/true,
                                        /*replaceTypes=*/false);
}

OwningOpRef<ModuleOp> SplitCompiler::runOrLoadPrefix(const CompileJob &job,
                                                     CompileResult &result,
                                                     CacheKey &baseKey) {
  Location loc = FileLineColLoc::get(&context, job.sourceName, 0, 0);
  // The keys hash the whole source: not worth it for a cache that is off.
  if (cache.enabled()) {
    baseKey = makeBaseKey(job.source, result.prefix, job.chip, commandLineKey);
    result.baseKey = baseKey.digest();
  }
  OwningOpRef<ModuleOp> preBinary;
  auto runPrefix = [&]() -> std::optional<std::string> {
    say(job, "phase 1: running the prefix pipeline once");
    Clock::time_point prefixStart = Clock::now();
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
        job.source, ParserConfig(&context), job.sourceName);
    if (!module)
      return std::nullopt;
    if (dumper && dumper->select(*module))
      dumper->write("origin", *module);
    OpPassManager prefix("builtin.module");
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(result.prefix, prefix, os))) {
      emitError(loc) << "cannot parse pipeline '" << result.prefix
                     << "': " << error;
      return std::nullopt;
    }
    if (failed(runPipeline(prefix, *module, /*dump=*/true)) ||
        failed(verifyCheckpointPosition(*module, "the split compiler")))
      return std::nullopt;
    result.prefixMs = msSince(prefixStart);
    std::string bytecode;
    if (cache.enabled()) {
      renameSourceFile(*module, job.sourceName, kCachedSourceName);
      llvm::raw_string_ostream os(bytecode);
      LogicalResult written = writeBytecodeToFile(*module, os);
      renameSourceFile(*module, kCachedSourceName, job.sourceName);
      if (failed(written))
        return std::nullopt;
    }
    preBinary = std::move(module);
    return bytecode;
  };
  if (!cache.enabled()) {
    runPrefix();
    return preBinary;
  }

  // One slot per input (not per chip): a changed --target then explains
  // itself as "changed: chip".
  std::string slot = job.sourceName;
  std::string explanation = cache.explainMiss(slot, baseKey);
  bool hit = false;
  std::optional<std::string> payload =
      cache.getOrCompute("prebinary", baseKey, runPrefix, hit);
  if (!hit) {
    result.cacheExplanation = explanation;
  } else {
    Clock::time_point loadStart = Clock::now();
    // Verified before use: a snapshot that does not verify is rebuilt.
    std::string problems;
    {
      ScopedDiagnosticHandler quiet(&context, [&](Diagnostic &diag) {
        problems += diag.str() + "; ";
        return success();
      });
      preBinary = readSnapshotBuffer(*payload, "fly-cache:prebinary", &context);
    }
    if (preBinary) {
      renameSourceFile(*preBinary, kCachedSourceName, job.sourceName);
      result.prefixFromCache = true;
      result.prefixMs = msSince(loadStart);
      say(job, "phase 1: pre-binary module loaded from cache");
      if (dumper) {
        if (OwningOpRef<ModuleOp> origin = parseSourceString<ModuleOp>(
                job.source, ParserConfig(&context), job.sourceName);
            origin && dumper->select(*origin))
          dumper->write("origin", *origin);
        std::string text = "// Phase 1 was not run: this pre-binary module "
                           "came from the compile cache (base key " +
                           result.baseKey + ").\n";
        llvm::raw_string_ostream os(text);
        preBinary->print(os);
        dumper->write("prebinary_from_cache", text);
      }
    } else {
      result.warnings.push_back("cached pre-binary module failed "
                                "verification (" +
                                problems + "); rebuilding it");
      payload = runPrefix();
      if (payload)
        cache.store("prebinary", baseKey, *payload);
    }
  }
  if (preBinary)
    cache.recordSlot(slot, baseKey);
  return preBinary;
}

} // namespace fly
