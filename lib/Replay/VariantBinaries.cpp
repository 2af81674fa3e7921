//===- VariantBinaries.cpp - A variant's gpu.binary ops, typed ------------===//

#include "Support/LLVMCompat.h"
#include "fly/Replay/VariantResult.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;

namespace fly {

std::vector<VariantBinary> readBinaries(ModuleOp module) {
  std::vector<VariantBinary> binaries;
  for (auto binary : module.getOps<gpu::BinaryOp>())
    binaries.push_back({binary.getName().str(),
                        binary.getOffloadingHandlerAttr(),
                        binary.getObjectsAttr(), binary.getLoc()});
  return binaries;
}

gpu::BinaryOp createBinaryOp(OpBuilder &builder, Location loc,
                             const VariantBinary &binary) {
  return compat::createOp<gpu::BinaryOp>(
      builder, loc, binary.name, binary.offloadingHandler, binary.objects);
}

void printBinaries(llvm::raw_ostream &os,
                   llvm::ArrayRef<VariantBinary> binaries) {
  if (binaries.empty())
    return;
  // Printed inside a module, as the replay's ops print inside theirs.
  MLIRContext *context = binaries.front().objects.getContext();
  Location unknown = UnknownLoc::get(context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(unknown);
  OpBuilder builder = OpBuilder::atBlockEnd(module->getBody());
  for (const VariantBinary &binary : binaries) {
    Location loc = binary.loc ? Location(binary.loc) : unknown;
    createBinaryOp(builder, loc, binary)->print(os);
    os << '\n';
  }
}

std::string printBinaries(llvm::ArrayRef<VariantBinary> binaries) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printBinaries(os, binaries);
  return text;
}

void printBinaryIR(llvm::raw_ostream &os, const VariantResult &result) {
  if (!result.binaryIR.empty())
    os << result.binaryIR;
  else
    printBinaries(os, result.binaries);
}

std::string printBinaryIR(const VariantResult &result) {
  if (!result.binaryIR.empty())
    return result.binaryIR;
  return printBinaries(result.binaries);
}

void keepBinaryIR(VariantResult &result) {
  if (result.binaryIR.empty())
    result.binaryIR = printBinaries(result.binaries);
}

uint64_t hashObjects(llvm::ArrayRef<VariantObject> objects) {
  uint64_t hash = 0;
  for (const VariantObject &object : objects)
    hash = llvm::xxh3_64bits(object.gpuModule + '\0' + object.bytes) ^
           (hash * 0x9E3779B97F4A7C15ull);
  return hash;
}

void setBinaries(VariantResult &result, std::vector<VariantBinary> binaries) {
  result.binaries = std::move(binaries);
  result.objects = collectObjects(result.binaries);
  result.objectHash = hashObjects(result.objects);
}

void recordBinaries(VariantResult &result, ModuleOp module) {
  setBinaries(result, readBinaries(module));
}

} // namespace fly
