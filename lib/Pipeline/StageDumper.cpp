//===- StageDumper.cpp - Numbered per-stage IR dumps (dump_ir) ------------===//

#include "fly/Pipeline/StageDumper.h"

#include "fly/Support/SafeFile.h"

#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace llvm;

namespace fly {

StageDumper::StageDumper(std::string directory)
    : directory(std::move(directory)) {
  sys::fs::create_directories(this->directory);
}

std::optional<std::string> StageDumper::directoryFromEnvironment() {
  std::optional<std::string> enabled = sys::Process::GetEnv("FLY_DUMP_IR");
  if (!enabled || enabled->empty() || *enabled == "0")
    return std::nullopt;
  return sys::Process::GetEnv("FLY_DUMP_DIR").value_or("fly_dump");
}

static std::string sanitize(StringRef stage) {
  std::string out;
  for (char c : stage) {
    if (isAlnum(c) || c == '-' || c == '_' || c == '.')
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  return out.substr(0, 80);
}

std::string StageDumper::write(StringRef stage, StringRef text,
                               StringRef extension) {
  std::string name =
      formatv("{0:2}_{1}{2}", counter++, sanitize(stage), extension).str();
  SmallString<256> path(directory);
  sys::path::append(path, name);
  // No partial dump under the final name, and a full disk is a warning.
  if (Error err = writeFileAtomically(path, text))
    errs() << "fly: warning: cannot write IR dump '" << path
           << "': " << toString(std::move(err)) << "\n";
  return name;
}

std::string StageDumper::write(StringRef stage, Operation *op) {
  std::string text;
  raw_string_ostream os(text);
  op->print(os);
  return write(stage, text);
}

namespace {
class DumpInstrumentation : public PassInstrumentation {
public:
  DumpInstrumentation(StageDumper &dumper, Operation *root)
      : dumper(dumper), root(root) {}

  void runAfterPass(Pass *pass, Operation *op) override {
    if (op != root)
      return;
    std::string stage = pass->getArgument().str();
    if (stage.empty()) {
      // A nested pass manager: name it by its textual pipeline.
      raw_string_ostream os(stage);
      pass->printAsTextualPipeline(os);
    }
    dumper.write(stage, op);
  }

private:
  StageDumper &dumper;
  Operation *root;
};
} // namespace

std::unique_ptr<PassInstrumentation> StageDumper::instrument(Operation *root) {
  return std::make_unique<DumpInstrumentation>(*this, root);
}

} // namespace fly
