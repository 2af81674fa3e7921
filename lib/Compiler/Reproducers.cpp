//===- Reproducers.cpp - What reproduces a failing variant ----------------===//

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Executor/Executor.h"
#include "fly/Pipeline/StageDumper.h"
#include "fly/Snapshot/Snapshot.h"
#include "fly/Support/InstallLocation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using llvm::StringRef;

namespace fly {

/// `text` as one single-quoted shell word.
static std::string shellQuote(StringRef text) {
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The script embeds nothing that comes from the input: the pipeline (whose
// options are the user's text) sits in a file beside it and reaches fly-opt
// through "$(cat ...)", which the shell does not evaluate again. fly-opt is
// the one installed beside the running tool (a build tree's bin/ is seldom on
// PATH), FLY_OPT overriding it.
static std::string reproduceScript() {
  std::string flyOpt = findChildTool("fly-opt");
  return "#!/bin/sh\n"
         "# Reruns the failing replay of this variant with fly-opt: the "
         "snapshot,\n"
         "# the hint set (hints.json) and the pipeline (pipeline.txt) are "
         "beside\n"
         "# this script; error.txt holds the error it gave.\n"
         "cd \"$(dirname \"$0\")\" || exit 1\n"
         "FLY_OPT=${FLY_OPT:-" +
         shellQuote(flyOpt.empty() ? "fly-opt" : flyOpt) +
         "}\n"
         "exec \"$FLY_OPT\" snapshot.mlirbc --pass-pipeline=\"$(cat "
         "pipeline.txt)\" "
         "-o /dev/null\n";
}

void SplitCompiler::writeReproducers(ModuleOp preBinary,
                                     CompileResult &result) {
  if (options.reproducerDir.empty())
    return;
  for (const VariantResult &variant : result.variants) {
    if (variant.succeeded())
      continue;
    // Variant ids are labels made of [A-Za-z0-9_.] (HintSet::label).
    llvm::SmallString<256> dir(options.reproducerDir);
    llvm::sys::path::append(dir, "repro", variant.id);
    if (llvm::sys::fs::create_directories(dir))
      continue;
    auto path = [&](StringRef name) {
      llvm::SmallString<256> p(dir);
      llvm::sys::path::append(p, name);
      return std::string(p);
    };
    if (dumper && dumper->getDirectory() == options.reproducerDir)
      dumper->recordFile("repro/" + variant.id + "/snapshot.mlirbc");
    if (failed(writeSnapshot(preBinary, path("snapshot.mlirbc"),
                             SnapshotFormat::Bytecode)))
      continue;
    llvm::json::Object hints = variant.hints.toJSON();
    std::string pipeline =
        "builtin.module(fly-snapshot{hints-file=hints.json binary-pass={" +
        result.binaryPass + "}})";
    bool written = true;
    for (auto [name, text] :
         {std::pair<StringRef, std::string>{
              "hints.json",
              llvm::formatv("{0}\n", llvm::json::Value(
                                         llvm::json::Array{std::move(hints)}))
                  .str()},
          {"pipeline.txt", pipeline + "\n"},
          {"reproduce.sh", reproduceScript()},
          {"error.txt", variant.error}}) {
      // In the dump directory the next run removes them with the dumps.
      if (dumper && dumper->getDirectory() == options.reproducerDir)
        dumper->recordFile(
            (llvm::Twine("repro/") + variant.id + "/" + name).str());
      if (llvm::Error err =
              llvm::writeToOutput(path(name), [&](llvm::raw_ostream &os) {
                os << text;
                return llvm::Error::success();
              })) {
        llvm::consumeError(std::move(err));
        written = false;
      }
    }
    llvm::sys::fs::setPermissions(
        path("reproduce.sh"), llvm::sys::fs::all_read | llvm::sys::fs::all_exe |
                                  llvm::sys::fs::owner_write);
    if (written)
      result.reproducers.push_back(std::string(dir));
  }
}

} // namespace fly
