//===- SplitPipeline.cpp - Split a pipeline at gpu-module-to-binary -------===//

#include "fly/Pipeline/SplitPipeline.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace llvm;

namespace fly {

static constexpr StringLiteral kBinaryPass = "gpu-module-to-binary";

StringRef stripModuleAnchor(StringRef pipeline) {
  StringRef text = pipeline.trim();
  StringRef inner = text;
  if (inner.consume_front("builtin.module(") && inner.consume_back(")"))
    return inner.trim();
  return text;
}

static std::string printPass(Pass &pass) {
  std::string text;
  raw_string_ostream os(text);
  pass.printAsTextualPipeline(os);
  return text;
}

/// Whether `pass` is the binary pass or nests one. A pass that nests others
/// (upstream's OpToOpPassAdaptor, which has no argument and no public
/// header) is readable only as its printed `anchor(passes)`, which parses
/// back into that pass manager; parsed pipelines give each anchor its own.
static bool containsBinaryPass(Pass &pass) {
  if (pass.getArgument() == kBinaryPass)
    return true;
  if (!pass.getArgument().empty())
    return false;
  std::string ignored;
  raw_string_ostream os(ignored);
  FailureOr<OpPassManager> nested = parsePassPipeline(printPass(pass), os);
  return succeeded(nested) &&
         llvm::any_of(nested->getPasses(),
                      [](Pass &inner) { return containsBinaryPass(inner); });
}

Expected<SplitPipeline> splitAtBinaryPass(StringRef pipeline) {
  auto fail = [](const Twine &msg) {
    return createStringError(inconvertibleErrorCode(), msg);
  };
  OpPassManager pm("builtin.module");
  std::string parseError;
  raw_string_ostream errStream(parseError);
  if (failed(parsePassPipeline(stripModuleAnchor(pipeline), pm, errStream)))
    return fail("cannot parse pipeline: " + parseError);

  // Registered pipelines are already expanded into `pm`.
  SmallVector<std::string> prefix, suffix, binaries, nested;
  for (Pass &pass : pm.getPasses()) {
    std::string text = printPass(pass);
    if (pass.getArgument() == kBinaryPass) {
      binaries.push_back(text);
      continue;
    }
    if (containsBinaryPass(pass)) {
      nested.push_back(text);
      continue;
    }
    (binaries.empty() ? prefix : suffix).push_back(text);
  }
  if (!nested.empty())
    return fail("gpu-module-to-binary must run on the top-level module, but "
                "it is nested in '" +
                nested.front() + "'");
  if (binaries.empty())
    return fail("the pipeline has no gpu-module-to-binary, so there is "
                "nothing to replay per hint set (passes: " +
                join(prefix, ",") + ")");
  if (binaries.size() > 1)
    return fail("the pipeline has " + Twine(binaries.size()) +
                " gpu-module-to-binary passes (" + join(binaries, ", ") +
                "); exactly one is needed to split it");
  return SplitPipeline{join(prefix, ","), binaries.front(), join(suffix, ",")};
}

} // namespace fly
