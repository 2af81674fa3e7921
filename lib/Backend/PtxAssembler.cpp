//===- PtxAssembler.cpp - PTX to cubin/fatbin as upstream does it ---------===//
//
// Mirrors mlir/lib/Target/LLVM/NVVM/Target.cpp (LLVM 22) step by step; any
// difference in arguments would show up as different bytes, which
// test/Plugin/reuse-isa-identical.mlir compares.
//
//===----------------------------------------------------------------------===//

#include "Backend/PtxAssembler.h"
#include "Support/ChildProcess.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace llvm;

namespace fly {

namespace {
using TempFile = std::pair<SmallString<128>, FileRemover>;
} // namespace

std::optional<std::string> findCudaTool(StringRef tool, StringRef toolkit) {
  SmallString<256> path;
  if (!toolkit.empty()) {
    path = toolkit;
    sys::path::append(path, "bin", tool);
    if (sys::fs::can_execute(path))
      return path.str().str();
  }
  if (std::optional<std::string> found =
          sys::Process::FindInEnvPath("PATH", tool))
    return found;
  if (StringRef cuda = NVVM::getCUDAToolkitPath(); !cuda.empty()) {
    path = cuda;
    sys::path::append(path, "bin", tool);
    if (sys::fs::can_execute(path))
      return path.str().str();
  }
  return std::nullopt;
}

static std::optional<std::string> findTool(StringRef tool, StringRef toolkit,
                                           Location loc) {
  if (std::optional<std::string> found = findCudaTool(tool, toolkit))
    return found;
  emitError(loc) << "Couldn't find the `" << tool
                 << "` binary. Please specify the toolkit path, add the "
                    "compiler to $PATH, or set one of the environment "
                    "variables in `NVVM::getCUDAToolkitPath()`.";
  return std::nullopt;
}

static std::optional<TempFile> createTemp(StringRef name, StringRef suffix,
                                          Location loc) {
  SmallString<128> filename;
  if (std::error_code ec =
          sys::fs::createTemporaryFile(name, suffix, filename)) {
    emitError(loc) << "Couldn't create the temp file: `" << filename
                   << "`, error message: " << ec.message();
    return std::nullopt;
  }
  return TempFile(filename, FileRemover(filename.c_str()));
}

FailureOr<SmallVector<char, 0>> assemblePtx(StringRef ptx,
                                            NVVM::NVVMTargetAttr target,
                                            const gpu::TargetOptions &options,
                                            StringRef moduleName, Location loc,
                                            unsigned timeoutSeconds) {
  llvm::TimeTraceScope step("ptxas", moduleName);
  bool createFatbin =
      options.getCompilationTarget() == gpu::CompilationTarget::Fatbin;
  std::optional<std::string> ptxas =
      findTool("ptxas", options.getToolkitPath(), loc);
  if (!ptxas)
    return failure();
  std::optional<std::string> fatbinary;
  if (createFatbin &&
      !(fatbinary = findTool("fatbinary", options.getToolkitPath(), loc)))
    return failure();

  std::string basename = formatv("mlir-{0}-{1}-{2}", moduleName,
                                 target.getTriple(), target.getChip());
  std::optional<TempFile> ptxFile = createTemp(basename, "ptx", loc);
  std::optional<TempFile> logFile = createTemp(basename, "log", loc);
  std::optional<TempFile> binaryFile = createTemp(basename, "bin", loc);
  if (!ptxFile || !logFile || !binaryFile)
    return failure();
  TempFile cubinFile;
  if (createFatbin) {
    std::string name = (ptxFile->first + ".cubin").str();
    cubinFile = TempFile(name, FileRemover(name));
  } else {
    cubinFile.first = binaryFile->first;
  }
  {
    std::error_code ec;
    raw_fd_ostream os(ptxFile->first, ec);
    if (ec)
      return emitError(loc) << "Couldn't open the file: `" << ptxFile->first
                            << "`, error message: " << ec.message();
    os << ptx;
    os.close();
    if (os.has_error())
      return emitError(loc) << "An error occurred while writing the PTX to: `"
                            << ptxFile->first << "`.";
  }

  std::optional<StringRef> redirects[] = {std::nullopt, logFile->first,
                                          logFile->first};
  std::pair<BumpPtrAllocator, SmallVector<const char *>> cmdOpts =
      options.tokenizeCmdOptions();
  std::string optLevel = std::to_string(target.getO());
  SmallVector<StringRef, 12> ptxasArgs({"ptxas", "-arch", target.getChip(),
                                        ptxFile->first, "-o", cubinFile.first,
                                        "--opt-level", optLevel});
  bool useFatbin32 = false;
  for (const char *arg : cmdOpts.second) {
    // Upstream: every `opts` token goes to ptxas except -32 (fatbinary's).
    if (StringRef(arg) != "-32")
      ptxasArgs.push_back(arg);
    else
      useFatbin32 = true;
  }
  if (target.hasCmdOptions())
    for (mlir::Attribute option :
         cast<ArrayAttr>(target.getCmdOptions()->getValue()))
      if (auto text = dyn_cast<StringAttr>(option))
        ptxasArgs.push_back(text.getValue());

  StringRef chip = target.getChip();
  chip.consume_front("sm_"), chip.consume_front("compute_");
  std::string cubinArg =
      formatv("--image3=kind=elf,sm={0},file={1}", chip, cubinFile.first);
  std::string ptxArg =
      formatv("--image3=kind=ptx,sm={0},file={1}", chip, ptxFile->first);
  SmallVector<StringRef, 6> fatbinArgs({"fatbinary",
                                        useFatbin32 ? "-32" : "-64", cubinArg,
                                        ptxArg, "--create", binaryFile->first});

  std::string message;
  auto toolFailed = [&](StringRef tool) -> LogicalResult {
    if (!message.empty())
      return emitError(loc) << tool << " invocation failed: " << message;
    ErrorOr<std::unique_ptr<MemoryBuffer>> log =
        MemoryBuffer::getFile(logFile->first);
    if (log)
      return emitError(loc) << tool << " invocation failed. Log:\n"
                            << (*log)->getBuffer();
    return emitError(loc) << tool << " invocation failed.";
  };
  // A child with a time limit of its own (ChildProcess.h): a hung ptxas ends
  // with its variant, and whatever it started with it.
  auto run = [&](StringRef tool, ArrayRef<StringRef> args) {
    ChildExit exit = runChildProcess(tool, args, redirects, timeoutSeconds);
    if (exit.timedOut)
      message = formatv("ran past the variant timeout of {0} s and was killed",
                        timeoutSeconds)
                    .str();
    else if (!exit.startError.empty() || exit.signal)
      message = exit.describe();
    return exit.succeeded();
  };
  if (!run(*ptxas, ptxasArgs))
    return toolFailed("`ptxas`");
  message.clear();
  if (createFatbin && !run(*fatbinary, fatbinArgs))
    return toolFailed("`fatbinary`");

  ErrorOr<std::unique_ptr<MemoryBuffer>> binary =
      MemoryBuffer::getFile(binaryFile->first);
  if (!binary)
    return emitError(loc) << "Couldn't open the file: `" << binaryFile->first
                          << "`, error message: "
                          << binary.getError().message();
  StringRef bytes = (*binary)->getBuffer();
  return SmallVector<char, 0>(bytes.begin(), bytes.end());
}

} // namespace fly
