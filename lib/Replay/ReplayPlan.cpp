//===- ReplayPlan.cpp - What each hint set compiles to, decided once ------===//

#include "fly/Replay/ReplayPlan.h"

#include "Replay/VariantDedupe.h"
#include "Support/Environment.h"
#include "fly/Backend/AmdgpuLinker.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/BackendOpts.h"
#include "fly/Replay/Replay.h"
#include "fly/Replay/SharedIsa.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Support/BoundedJSON.h"
#include "fly/Support/FileName.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace llvm;

namespace fly {

std::vector<unsigned> ReplayPlan::distinct(ArrayRef<unsigned> indices) const {
  std::vector<unsigned> result;
  for (unsigned i : indices)
    if (!entries[i].sameAs)
      result.push_back(i);
  return result;
}

std::vector<unsigned> ReplayPlan::all() const {
  std::vector<unsigned> result(entries.size());
  for (unsigned i = 0; i < result.size(); ++i)
    result[i] = i;
  return result;
}

/// A missing toolkit would fail every variant with "lld invocation failed":
/// say what is missing, once, before compiling.
static LogicalResult verifyToolkit(const BinaryPassOptions &binaryPass,
                                   ArrayRef<gpu::GPUModuleOp> gpuModules,
                                   Location loc) {
  const std::string &toolkit = binaryPass.toolkitPath;
  if (toolkit.empty() || !linksObjects(binaryPass))
    return success();
  if (!anyTargetOf(gpuModules, TargetFamily::ROCDL))
    return success();
  // ld.lld runs in this process or as fly-tune (Backend/AmdgpuLinker.cpp);
  // the toolkit's is needed only once neither can.
  SmallVector<StringRef, 2> needed = {"amdgcn/bitcode"};
  if (amdgpuLinksNeedToolkitLdLld())
    needed.push_back("llvm/bin/ld.lld");
  for (StringRef part : needed) {
    SmallString<256> path(toolkit);
    sys::path::append(path, part);
    if (!sys::fs::exists(path))
      return emitError(loc)
             << "the ROCm toolkit '" << toolkit << "' has no " << part
             << ", which gpu-module-to-binary needs to link #rocdl.target "
                "objects; pass toolkit=<folder with amdgcn/bitcode> (the "
                "build makes one: build/rocm-toolkit)";
  }
  return success();
}

/// Object files are named by gpu.module (sanitised): two modules whose names
/// sanitise alike (@"a/b" and @"a_b-75860604") would write one file.
static LogicalResult
verifyDistinctFileNames(ArrayRef<gpu::GPUModuleOp> gpuModules) {
  StringMap<gpu::GPUModuleOp> byFileName;
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    auto [it, inserted] = byFileName.try_emplace(
        sanitizeFileNameComponent(gpuModule.getName()), gpuModule);
    if (inserted || it->second.getName() == gpuModule.getName())
      continue;
    InFlightDiagnostic diag = gpuModule.emitError()
                              << "gpu.module @\"" << gpuModule.getName()
                              << "\" and @\"" << it->second.getName()
                              << "\" would write their objects under one "
                                 "file name ('"
                              << it->getKey() << "'); rename one of them";
    diag.attachNote(it->second.getLoc()) << "the other gpu.module";
    return failure();
  }
  return success();
}

FailureOr<ReplayPlan> buildReplayPlan(ModuleOp preBinary,
                                      const BinaryPassOptions &binaryPass,
                                      ArrayRef<HintSet> hintSets,
                                      const ReplayPlanOptions &options) {
  SmallVector<gpu::GPUModuleOp> gpuModules = getTargetedGpuModules(preBinary);
  // What each variant compiles with: its hint set over the backend flags of
  // the binary pass's opts= that ROCDL would drop (BackendOpts.h). Entries
  // keep the user's hint sets; replay() overlays them the same way.
  std::vector<HintSet> compiled =
      getCompiledHintSets(hintSets, binaryPass.cmdOptions, gpuModules);
  // Every hint set is checked before anything compiles, and only here: a
  // typo in the last of 200 hint sets must not cost 199 compiles first.
  for (const HintSet &hints : compiled)
    for (gpu::GPUModuleOp gpuModule : gpuModules)
      if (failed(verifyHintsApply(gpuModule, hints)))
        return failure();
  if (failed(verifyToolkit(binaryPass, gpuModules, preBinary.getLoc())) ||
      failed(verifyDistinctFileNames(gpuModules)))
    return failure();

  ReplayPlan plan;
  plan.binaryPass = binaryPass;
  plan.captureIntermediates = options.captureIntermediates;
  plan.variantTimeoutSeconds = options.variantTimeoutSeconds;
  plan.reuseIsa = options.reuseIsa && linksObjects(binaryPass);
  // Kernels that differ only in a default the backend reads as absent make
  // the same objects, but not the same LLVM IR: not for the offload format
  // (bitcode), nor where dumps, IR printing or other instrumentation would
  // show a copy's run as the variant it copies.
  bool sameObjects = parseBinaryFormat(binaryPass.compilationTarget) !=
                         gpu::CompilationTarget::Offload &&
                     !options.captureIntermediates &&
                     !options.replaysInstrumented &&
                     getEnvFlag("FLY_DEDUPE_DEFAULTS").value_or(true);
  SmallVector<std::optional<unsigned>> sameAs = findDuplicateVariants(
      preBinary, compiled,
      sameObjects ? HintedFingerprint::SameObjects : HintedFingerprint::Exact);
  // The effective pass per distinct `opts`, and the shared-ISA groups.
  StringMap<std::string> effectiveOf;
  std::vector<std::pair<SharedIsaKey, unsigned>> isaGroups;
  for (auto [i, hints] : llvm::enumerate(hintSets)) {
    PlanEntry entry;
    entry.index = options.labels.empty() ? i : options.labels[i];
    entry.id = getVariantId(entry.index, hints);
    entry.hints = hints;
    entry.extraOpts = getBinaryOptsHint(hints, gpuModules);
    // An option that does nothing here is said, once per variant.
    if (std::optional<StringRef> opts = hints.lookup("opts")) {
      auto rocdl = llvm::find_if(gpuModules, [](gpu::GPUModuleOp gpuModule) {
        return llvm::is_contained(getTargetFamilies(gpuModule),
                                  TargetFamily::ROCDL);
      });
      if (rocdl != gpuModules.end() &&
          getBinaryOptsHints(*opts, gpuModules).empty())
        emitWarning(rocdl->getLoc()) << "variant " << entry.id << ": "
                                     << getIgnoredRocdlOptsWarning(*opts);
      else if (rocdl != gpuModules.end())
        for (const BinaryOptsMessage &message :
             describeBinaryOpts(*opts, gpuModules))
          (message.isWarning ? emitWarning(rocdl->getLoc())
                             : emitRemark(rocdl->getLoc()))
              << "variant " << entry.id << ": hint 'opts=" << *opts
              << "': " << message.text;
    }
    auto [it, inserted] = effectiveOf.try_emplace(entry.extraOpts);
    if (inserted)
      it->second = printBinaryPass(withExtraOpts(binaryPass, entry.extraOpts));
    entry.binaryPass = it->second;
    if (sameAs[i]) {
      entry.sameAs = *sameAs[i];
    } else if (plan.reuseIsa) {
      std::optional<SharedIsaKey> key =
          getSharedIsaKey(gpuModules, compiled[i], entry.extraOpts);
      // A capturing replay keeps the LLVM IR and ISA of the shared compile:
      // only where that compile is the variant's own (normalising changes
      // nothing: ROCDL) may it share; NVVM's has sentinel maxnreg.
      if (key && options.captureIntermediates &&
          key->second != fingerprintHinted(gpuModules, compiled[i],
                                           HintedFingerprint::Exact))
        key.reset();
      if (key) {
        auto group = llvm::find_if(
            isaGroups, [&](const auto &g) { return g.first == *key; });
        if (group == isaGroups.end())
          group =
              isaGroups.insert(isaGroups.end(), {std::move(*key), unsigned(i)});
        entry.isaGroup = group->second;
      }
    }
    plan.entries.push_back(std::move(entry));
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

json::Value toJSON(const PlanEntry &entry) {
  json::Object object{{"index", entry.index},
                      {"id", entry.id},
                      {"hints", entry.hints.canonical()},
                      {"extra_opts", entry.extraOpts},
                      {"binary_pass", entry.binaryPass},
                      {"cache_key", entry.cacheKey}};
  if (entry.sameAs)
    object["same_as"] = *entry.sameAs;
  if (entry.isaGroup)
    object["isa_group"] = *entry.isaGroup;
  return object;
}

bool fromJSON(const json::Value &value, PlanEntry &entry, json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string hints;
  if (!mapper || !mapper.map("index", entry.index) ||
      !mapper.map("id", entry.id) || !mapper.map("hints", hints) ||
      !mapper.map("extra_opts", entry.extraOpts) ||
      !mapper.map("binary_pass", entry.binaryPass) ||
      !mapper.mapOptional("same_as", entry.sameAs) ||
      !mapper.mapOptional("isa_group", entry.isaGroup) ||
      !mapper.mapOptional("cache_key", entry.cacheKey))
    return false;
  // The canonical form always parses back to the same hint set.
  Expected<HintSet> parsed = HintSet::parse(hints);
  if (!parsed) {
    path.field("hints").report("not a hint set");
    consumeError(parsed.takeError());
    return false;
  }
  entry.hints = std::move(*parsed);
  return true;
}

json::Value toJSON(const ReplayPlan &plan) {
  return json::Object{{"format", "fly-replay-plan-1"},
                      {"binary_pass", fly::toJSON(plan.binaryPass)},
                      {"reuse_isa", plan.reuseIsa},
                      {"capture_intermediates", plan.captureIntermediates},
                      {"variant_timeout", plan.variantTimeoutSeconds},
                      {"entries", plan.entries}};
}

bool fromJSON(const json::Value &value, ReplayPlan &plan, json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::string format;
  if (!mapper || !mapper.map("format", format))
    return false;
  if (format != "fly-replay-plan-1") {
    path.field("format").report("unknown plan format");
    return false;
  }
  // BinaryPassOptions is upstream's struct: no ADL into fly for mapper.map.
  const json::Object *object = value.getAsObject();
  const json::Value *binaryPass = object->get("binary_pass");
  if (!binaryPass) {
    path.field("binary_pass").report("missing value");
    return false;
  }
  if (!fromJSON(*binaryPass, plan.binaryPass, path.field("binary_pass")) ||
      !mapper.map("reuse_isa", plan.reuseIsa) ||
      !mapper.mapOptional("capture_intermediates", plan.captureIntermediates) ||
      !mapper.mapOptional("variant_timeout", plan.variantTimeoutSeconds) ||
      !mapper.map("entries", plan.entries))
    return false;
  // References must point backwards: a plan names no entry it lacks.
  json::Path entriesPath = path.field("entries");
  for (auto [i, entry] : llvm::enumerate(plan.entries)) {
    json::Path at = entriesPath.index(i);
    if ((entry.sameAs && *entry.sameAs >= i) ||
        (entry.isaGroup && *entry.isaGroup > i)) {
      at.report("refers to a later entry");
      return false;
    }
  }
  return true;
}

Expected<ReplayPlan> parseReplayPlan(StringRef text) {
  Expected<json::Value> value = parseJSONBounded(text, "");
  if (!value)
    return value.takeError();
  ReplayPlan plan;
  json::Path::Root root("plan");
  if (!fromJSON(*value, plan, root))
    return root.getError();
  return plan;
}

Expected<std::vector<unsigned>> parseEntryList(StringRef spec, size_t size) {
  std::vector<unsigned> indices;
  auto bad = [&](const Twine &why) {
    return createStringError(inconvertibleErrorCode(),
                             "entry list '" + spec + "': " + why);
  };
  SmallVector<StringRef> parts;
  spec.split(parts, ',', -1, /*KeepEmpty=*/false);
  if (parts.empty())
    return bad("no entries");
  for (StringRef part : parts) {
    auto [first, last] = part.trim().split('-');
    unsigned from, to;
    if (first.getAsInteger(10, from))
      return bad("'" + part + "' is not an index or a range a-b");
    to = from;
    if (!last.empty() && last.getAsInteger(10, to))
      return bad("'" + part + "' is not an index or a range a-b");
    if (to < from || to >= size)
      return bad("'" + part + "' is outside the plan's " + Twine(size) +
                 " entries");
    for (unsigned i = from; i <= to; ++i)
      indices.push_back(i);
  }
  return indices;
}

std::string formatEntryList(ArrayRef<unsigned> indices) {
  std::string text;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
      ++j;
    if (!text.empty())
      text += ',';
    text += std::to_string(indices[i]);
    if (j > i)
      text += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return text;
}

} // namespace fly
