//===- BackendOpts.cpp - What gpu-module-to-binary's opts= delivers -------===//

#include "fly/Hints/BackendOpts.h"
#include "fly/Support/LLVMCompat.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/StringSaver.h"

using namespace mlir;
using llvm::StringRef;

namespace fly {

SmallVector<std::string> tokenizeBinaryOpts(StringRef opts) {
  llvm::BumpPtrAllocator allocator;
  llvm::StringSaver saver(allocator);
  SmallVector<const char *> tokens;
  llvm::cl::TokenizeGNUCommandLine(opts, saver, tokens);
  return llvm::to_vector(llvm::map_range(
      tokens, [](const char *token) { return std::string(token); }));
}

/// The hint key a ROCDL backend flag (without dashes or value) stands for,
/// given its value; "" if none.
static std::string hintForRocdlFlag(StringRef flag, StringRef value) {
  if (flag == "amdgpu-waves-per-eu")
    return value.contains(',') ? "passthrough.amdgpu-waves-per-eu"
                               : "waves_per_eu";
  return llvm::StringSwitch<std::string>(flag)
      .Case("amdgpu-num-vgpr", "maxnreg")
      .Case("amdgpu-num-sgpr", "passthrough.amdgpu-num-sgpr")
      .Cases({"amdgpu-flat-work-group-size", "amdgpu-flat-workgroup-size"},
             "passthrough.amdgpu-flat-work-group-size")
      .Case("O", "O")
      .Case("mcpu", "target.chip")
      .Case("mattr", "target.features")
      .Default("");
}

SmallVector<RocdlOptsToken> classifyRocdlOpts(StringRef opts) {
  SmallVector<std::string> tokens = tokenizeBinaryOpts(opts);
  SmallVector<RocdlOptsToken> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    StringRef token = tokens[i];
    StringRef flag = token;
    if (!flag.consume_front("--"))
      flag.consume_front("-");
    RocdlOptsToken classified{token.str(), RocdlOptsToken::Kind::NoIREquivalent,
                              "", ""};
    auto [name, value] = flag.split('=');
    bool hasValue = flag.contains('=');
    // -O3: the level is glued on.
    if (!hasValue && name.size() == 2 && name[0] == 'O' &&
        llvm::isDigit(name[1])) {
      value = name.drop_front();
      name = "O";
      hasValue = true;
    }
    std::string key =
        token.starts_with("-") ? hintForRocdlFlag(name, value) : std::string();
    // `--amdgpu-num-vgpr 64`: the value is the next token.
    if (!key.empty() && !hasValue && i + 1 < tokens.size() &&
        !StringRef(tokens[i + 1]).starts_with("-")) {
      value = tokens[++i];
      classified.text += " " + tokens[i];
      key = hintForRocdlFlag(name, value);
      hasValue = true;
    }
    if (!key.empty() && hasValue && !value.empty()) {
      // Values are checked like any hint's.
      HintSet probe;
      if (llvm::Error err = probe.add(key, value)) {
        llvm::consumeError(std::move(err));
      } else {
        classified.kind = RocdlOptsToken::Kind::Hint;
        classified.hintKey = key;
        classified.hintValue = probe.lookup(key)->str();
      }
    }
    out.push_back(std::move(classified));
  }
  return out;
}

static bool allRocdlOnly(ArrayRef<gpu::GPUModuleOp> gpuModules) {
  return !gpuModules.empty() &&
         llvm::all_of(gpuModules, [](gpu::GPUModuleOp gpuModule) {
           SmallVector<TargetFamily> families = getTargetFamilies(gpuModule);
           return !families.empty() &&
                  llvm::all_of(families, [](TargetFamily f) {
                    return f == TargetFamily::ROCDL;
                  });
         });
}

static bool anyRocdl(ArrayRef<gpu::GPUModuleOp> gpuModules) {
  return llvm::any_of(gpuModules, [](gpu::GPUModuleOp gpuModule) {
    return llvm::is_contained(getTargetFamilies(gpuModule),
                              TargetFamily::ROCDL);
  });
}

HintSet getBinaryOptsHints(StringRef opts,
                           ArrayRef<gpu::GPUModuleOp> gpuModules) {
  HintSet hints;
  if (opts.trim().empty() || !allRocdlOnly(gpuModules))
    return hints;
  // The last occurrence of a flag wins.
  std::vector<std::pair<std::string, std::string>> last;
  for (const RocdlOptsToken &token : classifyRocdlOpts(opts)) {
    if (token.kind != RocdlOptsToken::Kind::Hint)
      continue;
    auto it = llvm::find_if(
        last, [&](const auto &entry) { return entry.first == token.hintKey; });
    if (it != last.end())
      it->second = token.hintValue;
    else
      last.emplace_back(token.hintKey, token.hintValue);
  }
  for (const auto &[key, value] : last)
    llvm::cantFail(hints.add(key, value));
  return hints;
}

SmallVector<BinaryOptsMessage>
describeBinaryOpts(StringRef opts, ArrayRef<gpu::GPUModuleOp> gpuModules) {
  SmallVector<BinaryOptsMessage> messages;
  if (opts.trim().empty() || !anyRocdl(gpuModules))
    return messages;
  if (!allRocdlOnly(gpuModules)) {
    messages.push_back(
        {true, ("gpu-module-to-binary opts='" + opts +
                "': upstream ROCDL serialization ignores opts, and fly turns "
                "backend flags into IR hints only when every gpu.module "
                "targets ROCDL alone")
                   .str()});
    return messages;
  }
  for (const RocdlOptsToken &token : classifyRocdlOpts(opts)) {
    if (token.kind == RocdlOptsToken::Kind::Hint)
      messages.push_back({false, "gpu-module-to-binary opts flag '" +
                                     token.text +
                                     "' is ignored by ROCDL serialization; "
                                     "fly applies it as the hint " +
                                     token.hintKey + "=" + token.hintValue});
    else
      messages.push_back(
          {true, "gpu-module-to-binary opts flag '" + token.text +
                     "' has no effect: ROCDL serialization ignores opts and "
                     "fly knows no IR equivalent (flags it maps: "
                     "--amdgpu-waves-per-eu, --amdgpu-num-vgpr, "
                     "--amdgpu-num-sgpr, --amdgpu-flat-work-group-size, "
                     "-O<n>, -mcpu, -mattr)"});
  }
  return messages;
}

void diagnoseBinaryOpts(StringRef opts, ArrayRef<gpu::GPUModuleOp> gpuModules,
                        Location loc) {
  for (const BinaryOptsMessage &message : describeBinaryOpts(opts, gpuModules))
    if (message.isWarning)
      emitWarning(loc) << message.text;
    else
      emitRemark(loc) << message.text;
}

HintSet overlayHints(const HintSet &base, const HintSet &hints) {
  HintSet out = hints;
  for (const auto &[key, value] : base.entries())
    if (!hints.lookup(key))
      llvm::cantFail(out.add(key, value));
  return out;
}

std::vector<HintSet>
getCompiledHintSets(ArrayRef<HintSet> hintSets, StringRef opts,
                    ArrayRef<gpu::GPUModuleOp> gpuModules) {
  HintSet base = getBinaryOptsHints(opts, gpuModules);
  std::vector<HintSet> compiled;
  for (const HintSet &hints : hintSets)
    compiled.push_back(base.empty() ? hints : overlayHints(base, hints));
  return compiled;
}

} // namespace fly
