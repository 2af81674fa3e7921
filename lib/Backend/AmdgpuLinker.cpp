//===- AmdgpuLinker.cpp - In-process ld.lld for AMDGPU code objects -------===//
//
// Mirrors mlir::ROCDL::linkObjectCode (mlir/lib/Target/LLVM/ROCDL/Target.cpp):
// the object goes to a temporary "*.o", ld.lld runs as
//   ld.lld -shared <in.o> -o <out.hsaco>
// and the code object is read back from the temporary "*.hsaco". The ld.lld
// step differs: lld::lldMain in this process, or, while another thread holds
// lld, in a child: fly-tune started as "ld.lld" (runLinker); and two options
// that do not change the output make each link cheaper.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/AmdgpuLinker.h"
#include "Support/Environment.h"
#include "Support/LLVMCompat.h"
#include "fly/Support/InstallLocation.h"

#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "lld/Common/Driver.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <string>

LLD_HAS_DRIVER(elf)

using namespace mlir;
using llvm::SmallString;
using llvm::StringRef;

namespace fly {

namespace {
/// lld keeps its context in globals (lld::CommonLinkerContext): one link at a
/// time in the whole process.
std::mutex &lldMutex() {
  static std::mutex mutex;
  return mutex;
}

/// Guarded by lldMutex(). Cleared when lldMain says canRunAgain == false.
bool lldCanRunAgain = true;
} // namespace

/// Where a link runs: FLY_AMDGPU_LINK=in-process (default: wait for lld),
/// auto (in a child while another link holds lld) or child (always). On the
/// H200 at 16 threads, auto gained no wall time and cost 5-24 % more CPU at
/// N=64 (bench/h200-n-le-p): the default waits.
enum class LinkPlace { InProcess, Auto, Child };

static LinkPlace getLinkPlace() {
  static const LinkPlace place = [] {
    std::optional<std::string> value =
        llvm::sys::Process::GetEnv("FLY_AMDGPU_LINK");
    if (!value || value->empty() || *value == "in-process")
      return LinkPlace::InProcess;
    if (*value == "auto")
      return LinkPlace::Auto;
    if (*value == "child")
      return LinkPlace::Child;
    warnOnce("FLY_AMDGPU_LINK",
             "FLY_AMDGPU_LINK='" + *value +
                 "' is not in-process, auto or child; using in-process");
    return LinkPlace::InProcess;
  }();
  return place;
}

/// The program a child link runs: fly-tune installed beside this code ("" if
/// none; links then wait for lld in this process).
static const std::string &getChildLinker() {
  static const std::string linker = findChildTool("fly-tune");
  return linker;
}

bool isLinkerInvocation(StringRef argv0) {
  return llvm::sys::path::filename(argv0) == "ld.lld";
}

int runLinker(int argc, const char **argv) {
  lld::Result result =
      lld::lldMain(llvm::ArrayRef(argv, argc), llvm::outs(), llvm::errs(),
                   {{lld::Gnu, &lld::elf::link}});
  llvm::outs().flush();
  llvm::errs().flush();
  return result.retCode;
}

bool isInProcessAmdgpuLinkerAvailable() {
  std::lock_guard<std::mutex> lock(lldMutex());
  return lldCanRunAgain;
}

bool amdgpuLinksNeedToolkitLdLld() {
  return !isInProcessAmdgpuLinkerAvailable() && getChildLinker().empty();
}

namespace {
/// What one ld.lld run said.
struct LinkRun {
  int retCode = 1;
  std::string output;
};
} // namespace

/// `args` by fly-tune as "ld.lld" in a child process; nullopt (after
/// emitError) when it could not run at all.
static std::optional<LinkRun>
linkInChild(const std::string &linker, ArrayRef<const char *> args,
            function_ref<InFlightDiagnostic()> emitError) {
  SmallString<128> outputPath;
  if (llvm::sys::fs::createTemporaryFile("kernel-lld", "txt", outputPath)) {
    emitError() << "failed to create a temporary file for ld.lld's output";
    return std::nullopt;
  }
  llvm::FileRemover removeOutput(outputPath);
  SmallVector<StringRef> argv(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {StringRef(""), outputPath.str(),
                                          outputPath.str()};
  std::string message;
  bool failedToRun = false;
  // A link of one kernel takes milliseconds: the bound only keeps a stuck
  // child from holding the compile forever.
  constexpr unsigned linkSecondsLimit = 300;
  LinkRun run;
  run.retCode = llvm::sys::ExecuteAndWait(
      linker, argv, /*Env=*/std::nullopt, redirects, linkSecondsLimit,
      /*MemoryLimit=*/0, &message, &failedToRun);
  if (failedToRun || run.retCode < 0) {
    emitError() << "ld.lld (" << linker << " as ld.lld) did not finish"
                << (message.empty() ? "" : ": ") << message;
    return std::nullopt;
  }
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> output =
          llvm::MemoryBuffer::getFile(outputPath, /*IsText=*/true))
    run.output = (*output)->getBuffer().str();
  return run;
}

FailureOr<SmallVector<char, 0>>
linkAmdgpuObject(ArrayRef<char> objectCode, StringRef fallbackToolkitPath,
                 function_ref<InFlightDiagnostic()> emitError) {
  LinkPlace place = getLinkPlace();
  const std::string &childLinker = getChildLinker();
  // Also where lld cannot run again here: the wheel has no ld.lld of its own.
  bool childAllowed = !childLinker.empty();
  {
    std::lock_guard<std::mutex> lock(lldMutex());
    if (!lldCanRunAgain && !childAllowed)
      return ROCDL::linkObjectCode(objectCode, fallbackToolkitPath, emitError);
  }

  // lld reads its input from and writes its output to the file system. Both
  // go into a directory of their own: the output does not exist before the
  // link, so lld neither starts a thread to unlink it (unlinkAsync) nor
  // needs a name others cannot guess.
  SmallString<128> linkDir;
  if (llvm::sys::fs::createUniqueDirectory("fly-link", linkDir))
    return emitError() << "failed to create a temporary directory for the link";
  SmallString<128> objectPath(linkDir), hsacoPath(linkDir);
  llvm::sys::path::append(objectPath, "kernel.o");
  llvm::sys::path::append(hsacoPath, "kernel.hsaco");
  llvm::scope_exit removeLinkDir([&] {
    llvm::sys::fs::remove(objectPath);
    llvm::sys::fs::remove(hsacoPath);
    llvm::sys::fs::remove(linkDir);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
    if (!ec) {
      os << StringRef(objectCode.data(), objectCode.size());
      os.close();
      ec = os.error();
      os.clear_error();
    }
    if (ec)
      return emitError() << "failed to write the ISA binary to " << objectPath
                         << ": " << ec.message();
  }

  // ROCDL::linkObjectCode's "ld.lld -shared in.o -o out.hsaco", plus two
  // options that change how lld works, not what it writes (the objects stay
  // byte-identical; test/Tools compare them with cmp): one thread, as one
  // kernel's link is far too small to share out, and the output written
  // from memory, not through an mmap whose munmap interrupts every thread
  // of a process compiling other variants.
  const char *args[] = {
      "ld.lld",          "-shared",     objectPath.c_str(),     "-o",
      hsacoPath.c_str(), "--threads=1", "--no-mmap-output-file"};
  LinkRun run;
  std::string lldStdout, lldStderr;
  bool inProcess = false;
  {
    // Variants that finish together queue on lld one link after another; a
    // child costs a process start instead of the links ahead.
    std::unique_lock<std::mutex> lock(lldMutex(), std::defer_lock);
    if (!childAllowed || place == LinkPlace::InProcess)
      lock.lock();
    else if (place == LinkPlace::Auto)
      (void)lock.try_lock();
    // Another thread's link may have used up lld while this one waited.
    inProcess = lock.owns_lock() && lldCanRunAgain;
    if (inProcess) {
      // lld turns a fatal error into a return only inside a
      // CrashRecoveryContext that can longjmp; without Enable() it would exit
      // the process.
      static std::once_flag enableCrashRecovery;
      std::call_once(enableCrashRecovery,
                     [] { llvm::CrashRecoveryContext::Enable(); });
      llvm::raw_string_ostream stdoutOS(lldStdout), stderrOS(lldStderr);
      lld::Result result =
          lld::lldMain(args, stdoutOS, stderrOS, {{lld::Gnu, &lld::elf::link}});
      if (!result.canRunAgain)
        lldCanRunAgain = false;
      run.retCode = result.retCode;
    } else {
      if (lock.owns_lock())
        lock.unlock();
      if (!childAllowed)
        return ROCDL::linkObjectCode(objectCode, fallbackToolkitPath,
                                     emitError);
      std::optional<LinkRun> child = linkInChild(childLinker, args, emitError);
      if (!child)
        return failure();
      run = std::move(*child);
      lldStderr = std::move(run.output);
    }
  }

  StringRef out = StringRef(lldStdout).trim();
  StringRef err = StringRef(lldStderr).trim();
  if (run.retCode != 0) {
    InFlightDiagnostic diag = emitError();
    diag << (inProcess ? "in-process ld.lld" : "ld.lld")
         << " failed (exit code " << run.retCode << ")";
    if (!err.empty())
      diag << ": " << err;
    if (!out.empty())
      diag << (err.empty() ? ": " : "\n") << out;
    return diag;
  }
  // A spawned ld.lld prints its warnings on the inherited stderr; so do we.
  if (!err.empty() || !out.empty()) {
    llvm::errs() << lldStderr << lldStdout;
    llvm::errs().flush();
  }

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> hsaco =
      llvm::MemoryBuffer::getFile(hsacoPath, /*IsText=*/false);
  if (!hsaco)
    return emitError()
           << "failed to read the HSA code object from the temp file";
  StringRef buffer = (*hsaco)->getBuffer();
  return SmallVector<char, 0>(buffer.begin(), buffer.end());
}

} // namespace fly

// lld's ELF driver calls llvm::cl::ResetAllOptionOccurrences() on every link
// (then parses its -mllvm options), putting every cl option of the process
// back to its default: options a tool parsed (--mlir-print-ir-*, fly-tune's
// own, and required ones, whose re-check then exits the process) and options
// other threads' code generation reads at that moment. Every program that
// links FlySnapshot is linked with --wrap for that symbol (lib/CMakeLists.txt),
// which sends lld's call here: a link leaves the process's options alone.
extern "C" void __wrap__ZN4llvm2cl25ResetAllOptionOccurrencesEv() {}
