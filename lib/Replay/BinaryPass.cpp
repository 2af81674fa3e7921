//===- BinaryPass.cpp - gpu-module-to-binary's options, typed -------------===//

#include "fly/Replay/BinaryPass.h"
#include "Support/LLVMCompat.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassOptions.h"

using namespace mlir;
using namespace llvm;

namespace fly {

namespace {
/// The options gpu-module-to-binary declares (GPU/Transforms/Passes.td),
/// with the same names and defaults, so MLIR's option parser reads them.
struct BinaryPassTextOptions
    : public PassPipelineOptions<BinaryPassTextOptions> {
  Option<std::string> toolkitPath{*this, "toolkit", cl::init("")};
  ListOption<std::string> linkFiles{*this, "l"};
  Option<std::string> cmdOptions{*this, "opts", cl::init("")};
  Option<std::string> compilationTarget{*this, "format", cl::init("fatbin")};
  Option<std::string> elfSection{*this, "section", cl::init("")};
};
} // namespace

bool linksObjects(const BinaryPassOptions &options) {
  std::optional<gpu::CompilationTarget> format =
      parseBinaryFormat(options.compilationTarget);
  return format == gpu::CompilationTarget::Binary ||
         format == gpu::CompilationTarget::Fatbin;
}

FailureOr<BinaryPassOptions> parseBinaryPass(StringRef text, Location loc) {
  StringRef pass = text.trim();
  // A pass option's value may keep the braces that quoted it
  // (`binary-pass={gpu-module-to-binary{...}}`, as reproduce.sh passes it).
  if (pass.starts_with("{") && pass.ends_with("}"))
    pass = pass.drop_front().drop_back().trim();
  // Accept the anchored spelling too; replays add their own anchor.
  if (pass.consume_front("builtin.module(")) {
    if (!pass.consume_back(")"))
      return emitError(loc) << "unbalanced binary pass '" << text << "'";
    pass = pass.trim();
  }
  StringRef name = pass.take_until([](char c) { return c == '{'; }).trim();
  StringRef body = pass.drop_front(name.size()).trim();
  if (name != "gpu-module-to-binary" ||
      (!body.empty() && (!body.consume_front("{") || !body.consume_back("}"))))
    return emitError(loc) << "binary pass must be exactly one "
                             "gpu-module-to-binary (with its options), got '"
                          << text << "'";
  BinaryPassTextOptions parsed;
  std::string error;
  raw_string_ostream os(error);
  if (failed(parsed.parseFromString(body, os)))
    return emitError(loc) << "cannot parse binary pass '" << text
                          << "': " << StringRef(error).trim();
  BinaryPassOptions options;
  options.toolkitPath = parsed.toolkitPath;
  options.linkFiles.assign(parsed.linkFiles.begin(), parsed.linkFiles.end());
  options.cmdOptions = parsed.cmdOptions;
  options.compilationTarget = parsed.compilationTarget;
  options.elfSection = parsed.elfSection;
  if (!parseBinaryFormat(options.compilationTarget))
    return emitError(loc) << "unknown format '" << options.compilationTarget
                          << "' in '" << text
                          << "'; gpu-module-to-binary accepts offloading "
                             "(llvm), assembly (isa), binary (bin), fatbinary "
                             "(fatbin)";
  return options;
}

FailureOr<BinaryPassOptions> readBinaryPassOptions(Pass &pass, Location loc) {
  std::string printed;
  raw_string_ostream os(printed);
  pass.printAsTextualPipeline(os);
  return parseBinaryPass(printed, loc);
}

bool isSameBinaryPass(const BinaryPassOptions &a, const BinaryPassOptions &b) {
  return a.toolkitPath == b.toolkitPath && a.linkFiles == b.linkFiles &&
         a.cmdOptions == b.cmdOptions &&
         parseBinaryFormat(a.compilationTarget) ==
             parseBinaryFormat(b.compilationTarget) &&
         a.elfSection == b.elfSection;
}

std::string printBinaryPass(const BinaryPassOptions &options) {
  std::string text;
  raw_string_ostream os(text);
  createGpuModuleToBinaryPass(options)->printAsTextualPipeline(os);
  return text;
}

BinaryPassOptions withExtraOpts(BinaryPassOptions options,
                                StringRef extraOpts) {
  if (!extraOpts.empty())
    options.cmdOptions = options.cmdOptions.empty()
                             ? extraOpts.str()
                             : options.cmdOptions + " " + extraOpts.str();
  return options;
}

json::Value toJSON(const BinaryPassOptions &options) {
  return json::Object{{"toolkit", options.toolkitPath},
                      {"l", json::Array(options.linkFiles)},
                      {"opts", options.cmdOptions},
                      {"format", options.compilationTarget},
                      {"section", options.elfSection}};
}

bool fromJSON(const json::Value &value, BinaryPassOptions &options,
              json::Path path) {
  json::ObjectMapper mapper(value, path);
  std::vector<std::string> linkFiles;
  if (!mapper || !mapper.map("toolkit", options.toolkitPath) ||
      !mapper.map("l", linkFiles) || !mapper.map("opts", options.cmdOptions) ||
      !mapper.map("format", options.compilationTarget) ||
      !mapper.map("section", options.elfSection))
    return false;
  options.linkFiles.assign(linkFiles.begin(), linkFiles.end());
  if (!parseBinaryFormat(options.compilationTarget)) {
    path.field("format").report("unknown format");
    return false;
  }
  return true;
}

} // namespace fly
