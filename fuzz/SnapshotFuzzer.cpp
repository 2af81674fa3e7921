//===- SnapshotFuzzer.cpp - libFuzzer target for snapshot loading ---------===//
//
// readSnapshotBuffer is how a level-1 cache entry (MLIR bytecode) and a
// `snapshot-file=` are read back: parse (text or bytecode, by magic),
// verify, then check the module is at the checkpoint position. This target
// feeds it arbitrary bytes in a context with the dialects a snapshot uses
// (builtin, gpu, llvm, rocdl, nvvm, plus the ROCDL/NVVM target-attribute
// models so valid snapshots verify). Diagnostics are swallowed.
//
// Note: MLIR's parser and verifier live in Debian's uninstrumented
// libMLIR.so, so libFuzzer gets coverage feedback only from fly's own code
// (Snapshot.cpp); the MLIR side is fuzzed by mutation of the seeds without
// coverage guidance, and memory errors inside libMLIR.so are only seen when
// they crash (SEGV) or touch memory ASan tracks (heap allocations are
// intercepted process-wide, so overflows into redzones are not detected in
// uninstrumented code, but double frees and frees of bad pointers are).
//
//===----------------------------------------------------------------------===//

#include "fly/Snapshot/Snapshot.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

using namespace mlir;

namespace {
/// One context, recreated now and then: attributes and types parsed from
/// random input are uniqued in it forever, so a long run would otherwise
/// grow without bound and trip libFuzzer's RSS limit.
struct FuzzContext {
  std::unique_ptr<MLIRContext> context;
  unsigned uses = 0;

  MLIRContext &get() {
    if (!context || ++uses > 20000) {
      DialectRegistry registry;
      registry.insert<gpu::GPUDialect, LLVM::LLVMDialect, ROCDL::ROCDLDialect,
                      NVVM::NVVMDialect>();
      ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
      NVVM::registerNVVMTargetInterfaceExternalModels(registry);
      context = std::make_unique<MLIRContext>(registry,
                                              MLIRContext::Threading::DISABLED);
      context->loadAllAvailableDialects();
      uses = 0;
    }
    return *context;
  }
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FuzzContext fuzzContext;
  MLIRContext &context = fuzzContext.get();
  ScopedDiagnosticHandler swallow(&context,
                                  [](Diagnostic &) { return success(); });
  llvm::StringRef buffer(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      fly::readSnapshotBuffer(buffer, "fuzz-input", &context);
  // A module that loads must be at the checkpoint position: the reader's
  // contract is "verified snapshot or null".
  if (module && fly::getTargetedGpuModules(*module).empty())
    std::abort();
  return 0;
}
