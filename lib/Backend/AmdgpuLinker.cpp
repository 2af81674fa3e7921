//===- AmdgpuLinker.cpp - In-process ld.lld for AMDGPU code objects -------===//
//
// Mirrors mlir::ROCDL::linkObjectCode (mlir/lib/Target/LLVM/ROCDL/Target.cpp):
// the object goes to a temporary "*.o", ld.lld runs as
//   ld.lld -shared <in.o> -o <out.hsaco>
// and the code object is read back from the temporary "*.hsaco". Only the
// ld.lld step differs: lld::lldMain in this process instead of a child.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/AmdgpuLinker.h"
#include "Support/LLVMCompat.h"

#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "lld/Common/Driver.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CrashRecoveryContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
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

bool isInProcessAmdgpuLinkerAvailable() {
  std::lock_guard<std::mutex> lock(lldMutex());
  return lldCanRunAgain;
}

FailureOr<SmallVector<char, 0>>
linkAmdgpuObject(ArrayRef<char> objectCode, StringRef fallbackToolkitPath,
                 function_ref<InFlightDiagnostic()> emitError) {
  {
    std::lock_guard<std::mutex> lock(lldMutex());
    if (!lldCanRunAgain)
      return ROCDL::linkObjectCode(objectCode, fallbackToolkitPath, emitError);
  }

  // The same temporary files as ROCDL::linkObjectCode; lld reads its inputs
  // from and writes its output to the file system.
  int objectFd = -1;
  SmallString<128> objectPath;
  if (llvm::sys::fs::createTemporaryFile("kernel%%", "o", objectFd, objectPath))
    return emitError()
           << "failed to create a temporary file for dumping the ISA binary";
  llvm::FileRemover removeObject(objectPath);
  {
    llvm::raw_fd_ostream os(objectFd, /*shouldClose=*/true);
    os << StringRef(objectCode.data(), objectCode.size());
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      return emitError() << "failed to write the ISA binary to " << objectPath
                         << ": " << message;
    }
  }

  SmallString<128> hsacoPath;
  if (llvm::sys::fs::createTemporaryFile("kernel", "hsaco", hsacoPath))
    return emitError()
           << "failed to create a temporary file for the HSA code object";
  llvm::FileRemover removeHsaco(hsacoPath);

  // lld turns a fatal error into a return only inside a CrashRecoveryContext
  // that can longjmp; without Enable() it would exit the process.
  static std::once_flag enableCrashRecovery;
  std::call_once(enableCrashRecovery,
                 [] { llvm::CrashRecoveryContext::Enable(); });

  const char *args[] = {"ld.lld", "-shared", objectPath.c_str(), "-o",
                        hsacoPath.c_str()};
  std::string lldStdout, lldStderr;
  lld::Result result{/*retCode=*/1, /*canRunAgain=*/false};
  bool ranInProcess = false;
  {
    llvm::raw_string_ostream stdoutOS(lldStdout), stderrOS(lldStderr);
    std::lock_guard<std::mutex> lock(lldMutex());
    // Another thread's link may have used up lld while this one waited.
    if (lldCanRunAgain) {
      result =
          lld::lldMain(args, stdoutOS, stderrOS, {{lld::Gnu, &lld::elf::link}});
      ranInProcess = true;
      if (!result.canRunAgain)
        lldCanRunAgain = false;
    }
  }
  if (!ranInProcess)
    return ROCDL::linkObjectCode(objectCode, fallbackToolkitPath, emitError);

  StringRef out = StringRef(lldStdout).trim();
  StringRef err = StringRef(lldStderr).trim();
  if (result.retCode != 0) {
    InFlightDiagnostic diag = emitError();
    diag << "in-process ld.lld failed (exit code " << result.retCode << ")";
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
