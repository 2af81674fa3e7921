//===- StageDumper.cpp - Numbered per-stage IR dumps (dump_ir) ------------===//

#include "fly/Pipeline/StageDumper.h"
#include "Support/Environment.h"

#include "fly/Support/SafeFile.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <set>

using namespace mlir;
using namespace llvm;

namespace fly {

/// The record of the files the last run wrote in a dump directory.
static constexpr StringLiteral kRecordName = ".fly-dump";

static std::mutex recordMutex;

/// Removes what the last run listed in `directory`'s record, then empties
/// the record. Only relative names without ".." that are regular files
/// (not symbolic links) are removed: nothing the tool did not write goes,
/// and nothing outside the directory. Once per directory and process: the
/// dumpers of one run (fly-opt's and its pass's) share the directory.
static void removeLastRun(StringRef directory) {
  static llvm::StringSet<> cleared;
  SmallString<256> real;
  if (sys::fs::real_path(directory, real))
    real = directory;
  std::lock_guard<std::mutex> lock(recordMutex);
  if (!cleared.insert(real).second)
    return;
  SmallString<256> record(directory);
  sys::path::append(record, kRecordName);
  if (Expected<std::string> text = readRegularFileText(
          record, /*maxBytes=*/16 << 20, FinalSymlink::Refuse)) {
    SmallVector<StringRef> names;
    StringRef(*text).split(names, '\n', -1, /*KeepEmpty=*/false);
    std::set<std::string> parents;
    for (StringRef name : names) {
      if (sys::path::is_absolute(name) ||
          is_contained(make_range(sys::path::begin(name), sys::path::end(name)),
                       ".."))
        continue;
      SmallString<256> path(directory);
      sys::path::append(path, name);
      sys::fs::file_status status;
      if (sys::fs::status(path, status, /*Follow=*/false) ||
          status.type() != sys::fs::file_type::regular_file)
        continue;
      sys::fs::remove(path);
      for (StringRef parent = sys::path::parent_path(name); !parent.empty();
           parent = sys::path::parent_path(parent))
        parents.insert(parent.str());
    }
    // Deepest first; a directory that still holds anything stays.
    std::vector<std::string> dirs(parents.begin(), parents.end());
    llvm::sort(dirs, [](const std::string &a, const std::string &b) {
      return a.size() > b.size();
    });
    for (const std::string &dir : dirs) {
      SmallString<256> path(directory);
      sys::path::append(path, dir);
      sys::fs::remove(path, /*IgnoreNonExisting=*/true);
    }
  } else {
    consumeError(text.takeError());
  }
  sys::fs::remove(record);
}

StageDumper::StageDumper(std::string directory)
    : directory(std::move(directory)) {
  sys::fs::create_directories(this->directory);
  removeLastRun(this->directory);
}

void StageDumper::recordFile(StringRef relative) {
  SmallString<256> record(directory);
  sys::path::append(record, kRecordName);
  std::lock_guard<std::mutex> lock(recordMutex);
  std::error_code ec;
  raw_fd_ostream os(record, ec, sys::fs::OF_Append | sys::fs::OF_Text);
  if (!ec)
    os << relative << "\n";
}

std::optional<std::string> StageDumper::directoryFromEnvironment() {
  if (!getEnvFlag("FLY_DUMP_IR").value_or(false))
    return std::nullopt;
  return sys::Process::GetEnv("FLY_DUMP_DIR").value_or("fly_dump");
}

std::string StageDumper::kernelFilterFromEnvironment() {
  return sys::Process::GetEnv("FLY_DUMP_KERNEL").value_or("");
}

bool StageDumper::select(Operation *module) {
  bool match = kernelFilter.empty();
  module->walk([&](Operation *op) {
    if (match)
      return WalkResult::interrupt();
    auto symbol =
        op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (symbol && symbol.getValue() == kernelFilter &&
        isa<gpu::GPUFuncOp, LLVM::LLVMFuncOp>(op) &&
        op->getParentOfType<gpu::GPUModuleOp>())
      match = true;
    return WalkResult::advance();
  });
  active = match;
  return match;
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
  if (!active)
    return "";
  std::string name =
      formatv("{0:2}_{1}{2}", counter++, sanitize(stage), extension).str();
  SmallString<256> path(directory);
  sys::path::append(path, name);
  // No partial dump under the final name, and a full disk is a warning.
  recordFile(name);
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

  /// With no root given (fly-opt: the module is parsed later), the first
  /// top-level op a pass runs on is the root, dumped first as "origin".
  void runBeforePass(Pass *pass, Operation *op) override {
    if (root || op->getParentOp())
      return;
    root = op;
    if (dumper.select(op))
      dumper.write("origin", op);
  }

  void runAfterPass(Pass *pass, Operation *op) override {
    if (op != root || !dumper.isActive())
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
