//===- BackendOpts.cpp - What gpu-module-to-binary's opts= delivers -------===//

#include "fly/Hints/BackendOpts.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
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

/// ROCDL backend flags that LLVM reads as the kernel function attribute
/// `passthrough.<second>`: they become that hint.
static constexpr std::pair<StringRef, StringRef> kPassthroughFlags[] = {
    {"amdgpu-num-sgpr", "amdgpu-num-sgpr"},
    {"amdgpu-flat-work-group-size", "amdgpu-flat-work-group-size"},
    {"amdgpu-flat-workgroup-size", "amdgpu-flat-work-group-size"},
};

/// The hint key a ROCDL backend flag (without dashes or value) stands for,
/// given its value; "" if none.
static std::string hintForRocdlFlag(StringRef flag, StringRef value) {
  // A range of waves (`2,4`) is the function attribute, not waves_per_eu.
  if (flag == "amdgpu-waves-per-eu" && value.contains(','))
    return "passthrough.amdgpu-waves-per-eu";
  for (const HintSpec &spec : getHintSpecs())
    if (StringRef(spec.rocdlFlag).ltrim('-') == flag && !flag.empty())
      return spec.name;
  for (auto [name, attribute] : kPassthroughFlags)
    if (name == flag)
      return ("passthrough." + attribute).str();
  return "";
}

/// "--amdgpu-waves-per-eu, --amdgpu-num-vgpr, -O<n>, ...": the flags
/// hintForRocdlFlag maps.
static std::string listMappedRocdlFlags() {
  SmallVector<std::string> flags;
  for (const HintSpec &spec : getHintSpecs())
    if (*spec.rocdlFlag)
      flags.push_back(StringRef(spec.rocdlFlag) == "-O" ? "-O<n>"
                                                        : spec.rocdlFlag);
  for (auto [name, attribute] : kPassthroughFlags)
    if (name == attribute)
      flags.push_back(("--" + name).str());
  return llvm::join(flags, ", ");
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
           return isRocdlOnly(getTargetFamilies(gpuModule));
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
  if (opts.trim().empty() || !anyTargetOf(gpuModules, TargetFamily::ROCDL))
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
                     "fly knows no IR equivalent (flags it maps: " +
                     listMappedRocdlFlags() + ")"});
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
  for (const TypedHint &hint : base.hints())
    if (!hints.lookup(hint.key))
      llvm::cantFail(out.add(hint.key, hint.value.canonical()));
  return out;
}

std::vector<HintSet>
getCompiledHintSets(ArrayRef<HintSet> hintSets, StringRef opts,
                    ArrayRef<gpu::GPUModuleOp> gpuModules) {
  HintSet base = getBinaryOptsHints(opts, gpuModules);
  std::vector<HintSet> compiled;
  for (const HintSet &hints : hintSets) {
    // A flag in the set's own `opts` hint becomes a hint as the pass's
    // flags do; the set's other hints win over it, it over the pass's.
    HintSet own = hints;
    if (std::optional<StringRef> hintOpts = hints.lookup("opts")) {
      HintSet fromHint = getBinaryOptsHints(*hintOpts, gpuModules);
      if (!fromHint.empty())
        own = overlayHints(fromHint, hints);
    }
    compiled.push_back(base.empty() ? own : overlayHints(base, own));
  }
  return compiled;
}

} // namespace fly
