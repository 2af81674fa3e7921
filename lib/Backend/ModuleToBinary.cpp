//===- ModuleToBinary.cpp - The fly-module-to-binary pass -----------------===//
//
// Mirrors upstream's GpuModuleToBinaryPass deliberately: runOnOperation and
// moduleSerializer of mlir/lib/Dialect/GPU/Transforms/ModuleToBinary.cpp
// (LLVM 22), with the same TargetOptions construction plus the two
// callbacks, built once per target so that what they receive is attributed
// to its target. The ROCDL serializer is AMDGPUSerializer of
// mlir/lib/Target/LLVM/ROCDL/Target.cpp (LLVM 22) forwarding the callbacks.
// Its run() is ModuleToObject::run of mlir/lib/Target/LLVM/ModuleToObject.cpp
// (LLVM 22) with optimizeModule through fly::optimizeSharingRocdl
// (RocdlSharedOpt.h), and its TargetMachine is lent by the pool
// (TargetMachinePool.h), so getOrCreateTargetMachine's users
// (setDataLayoutAndTriple, optimizeModule, ROCDL's moduleToObjectImpl) are
// mirrored too. The objects are byte-identical to upstream's
// (test/Tools/fly-tune-dump-ir*.test, rocdl-shared-opt.test and
// rocdl-target-machine-reuse.test compare them with `cmp`).
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/ModuleToBinary.h"
#include "Support/FatalErrors.h"
#include "Support/LLVMCompat.h"
#include "fly/Backend/RocdlSharedCodegen.h"
#include "fly/Backend/RocdlSharedOpt.h"
#include "fly/Backend/TargetMachinePool.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/TimeProfiler.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace fly {
#define GEN_PASS_DEF_FLYMODULETOBINARY
#include "fly/Transforms/Passes.h.inc"
} // namespace fly

using namespace mlir;
using llvm::SmallVector;
using llvm::StringRef;

namespace fly {

std::optional<gpu::CompilationTarget> parseBinaryFormat(StringRef format) {
  return llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(format)
      .Cases({"offloading", "llvm"}, gpu::CompilationTarget::Offload)
      .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
      .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
      .Cases({"fatbinary", "fatbin"}, gpu::CompilationTarget::Fatbin)
      .Default(std::nullopt);
}

void IntermediateCapture::add(Operation *root, StringRef gpuModule,
                              unsigned targetIndex, Kind kind, StringRef text) {
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<TargetIntermediates> &list = captured[root].intermediates;
  auto it = llvm::find_if(list, [&](const TargetIntermediates &entry) {
    return entry.gpuModule == gpuModule && entry.targetIndex == targetIndex;
  });
  if (it == list.end()) {
    it = list.insert(list.end(), TargetIntermediates());
    it->gpuModule = gpuModule.str();
    it->targetIndex = targetIndex;
  }
  (kind == Kind::LlvmIR ? it->llvmIR : it->isa) = text.str();
}

void IntermediateCapture::addContinued(Operation *root) {
  std::lock_guard<std::mutex> lock(mutex);
  ++captured[root].codegenContinued;
}

CapturedReplay IntermediateCapture::take(Operation *root) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = captured.find(root);
  if (it == captured.end())
    return {};
  CapturedReplay seen = std::move(it->second);
  captured.erase(it);
  return seen;
}

LogicalResult replaceWithBinary(
    gpu::GPUModuleOp gpuModule,
    llvm::function_ref<Attribute(unsigned, gpu::TargetAttrInterface)>
        makeObject) {
  // Fail if there are no target attributes (upstream's words).
  if (!gpuModule.getTargetsAttr())
    return gpuModule.emitError("the module has no target attributes");
  SmallVector<Attribute> objects;
  for (auto [index, attr] : llvm::enumerate(gpuModule.getTargetsAttr())) {
    auto target = dyn_cast<gpu::TargetAttrInterface>(attr);
    if (!target)
      return gpuModule.emitError()
             << "the target attribute " << attr
             << " does not implement gpu::TargetAttrInterface";
    Attribute object = makeObject(index, target);
    if (!object)
      return failure();
    objects.push_back(object);
  }
  auto handler = dyn_cast_or_null<gpu::OffloadingLLVMTranslationAttrInterface>(
      gpuModule.getOffloadingHandlerAttr());
  OpBuilder builder(gpuModule->getContext());
  builder.setInsertionPointAfter(gpuModule);
  compat::createOp<gpu::BinaryOp>(builder, gpuModule.getLoc(),
                                  gpuModule.getName(), handler,
                                  builder.getArrayAttr(objects));
  gpuModule->erase();
  return success();
}

} // namespace fly

namespace {
/// Upstream's AMDGPUSerializer (LLVM 22, anonymous in ROCDL/Target.cpp), the
/// same SerializeGPUModuleBase steps, with what LLVM 22 leaves out: the
/// TargetOptions' LLVM IR callbacks reach ModuleToObject::run, and the ISA
/// goes to isaCallback as NVVM's serializer hands over its PTX.
class CapturingRocdlSerializer : public ROCDL::SerializeGPUModuleBase {
public:
  CapturingRocdlSerializer(Operation &module, ROCDL::ROCDLTargetAttr target,
                           const gpu::TargetOptions &targetOptions)
      : SerializeGPUModuleBase(module, target, targetOptions),
        targetOptions(targetOptions) {
    initialLlvmIRCallback = targetOptions.getInitialLlvmIRCallback();
    linkedLlvmIRCallback = targetOptions.getLinkedLlvmIRCallback();
    optimizedLlvmIRCallback = targetOptions.getOptimizedLlvmIRCallback();
    isaCallback = targetOptions.getISACallback();
  }

  /// ModuleToObject::run (LLVM 22), step for step, except that the
  /// optimisation may be one done for an earlier variant
  /// (optimizeSharingRocdl). Not while the optimised IR is captured: the
  /// shared module's attributes need not print as the variant's would.
  std::optional<SmallVector<char, 0>> run() override {
    if (optimizedLlvmIRCallback || !fly::isRocdlSharedOptEnabled())
      return SerializeGPUModuleBase::run();
    // Translate the module to LLVM IR. Both owned by the serializer: a
    // shared code generation may keep them (codegenSharingRocdl).
    llvmContext = std::make_unique<llvm::LLVMContext>();
    std::optional<llvm::TimeTraceScope> step(std::in_place,
                                             "Translate to LLVM IR");
    llvmModule = translateToLLVMIR(*llvmContext);
    if (!llvmModule) {
      getOperation().emitError() << "Failed creating the llvm::Module.";
      return std::nullopt;
    }
    setDataLayoutAndTriple(*llvmModule);

    if (initialLlvmIRCallback)
      initialLlvmIRCallback(*llvmModule);

    // Link bitcode files.
    step.emplace("Link device libraries");
    handleModulePreLink(*llvmModule);
    {
      auto libs = loadBitcodeFiles(*llvmModule);
      if (!libs)
        return std::nullopt;
      if (!libs->empty())
        if (failed(linkFiles(*llvmModule, std::move(*libs))))
          return std::nullopt;
      handleModulePostLink(*llvmModule);
    }

    if (linkedLlvmIRCallback)
      linkedLlvmIRCallback(*llvmModule);

    // Optimize the module. An invalid level and a missing target machine
    // fail in optimizeModule, as upstream's; a shared result skips it, so
    // its setOptLevel is made here too.
    auto optimize = [&](llvm::Module &module) {
      return optimizeModule(module, optLevel);
    };
    step.emplace("Optimise LLVM IR");
    FailureOr<llvm::TargetMachine *> targetMachine = failure();
    if (optLevel >= 0 && optLevel <= 3) {
      if (llvm::TargetMachine *lent = lentMachine(llvmModule.get()))
        targetMachine = lent;
      else
        targetMachine = getOrCreateTargetMachine();
    }
    if (failed(targetMachine)) {
      if (failed(optimize(*llvmModule)))
        return std::nullopt;
    } else {
      (*targetMachine)
          ->setOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));
      std::string targetKey = (triple + "\n" + chip + "\n" + features + "\n" +
                               llvm::Twine(optLevel))
                                  .str();
      if (failed(fly::optimizeSharingRocdl(llvmModule, targetKey, optimize,
                                           &sharing)))
        return std::nullopt;
    }

    step.reset();
    // Return the serialized object.
    FailureOr<SmallVector<char, 0>> object = moduleToObject(*llvmModule);
    if (failed(object))
      return std::nullopt;
    return std::move(*object);
  }

  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &llvmModule) override {
    FailureOr<SmallVector<char, 0>> object = objectOf(llvmModule);
    // format=isa: the object is the ISA (compileToBinary is not reached).
    if (succeeded(object) && isaCallback &&
        targetOptions.getCompilationTarget() ==
            gpu::CompilationTarget::Assembly)
      isaCallback(StringRef(object->data(), object->size()));
    return object;
  }

  /// The serialization returned an object and LLVM reported no error: its
  /// machine may serve a later one.
  void keepMachine() {
    if (lent && keepable)
      lent->keep();
  }

  /// Whether the ISA continued another variant's kept code generation.
  bool continuedSharedCodegen() const { return continuedCodegen; }

protected:
  FailureOr<SmallVector<char, 0>>
  compileToBinary(StringRef serializedISA) override {
    if (isaCallback)
      isaCallback(serializedISA);
    llvm::TimeTraceScope step("Assemble and link");
    return SerializeGPUModuleBase::compileToBinary(serializedISA);
  }

  /// ModuleToObject::setDataLayoutAndTriple (LLVM 22) on the lent machine.
  void setDataLayoutAndTriple(llvm::Module &module) override {
    llvm::TargetMachine *machine = lentMachine(nullptr);
    if (!machine)
      return SerializeGPUModuleBase::setDataLayoutAndTriple(module);
    module.setDataLayout(machine->createDataLayout());
    module.setTargetTriple(machine->getTargetTriple());
  }

  /// ModuleToObject::optimizeModule (LLVM 22) on the lent machine.
  LogicalResult optimizeModule(llvm::Module &module, int level) override {
    llvm::TargetMachine *machine =
        level < 0 || level > 3 ? nullptr : lentMachine(&module);
    if (!machine)
      return SerializeGPUModuleBase::optimizeModule(module, level);
    machine->setOptLevel(static_cast<llvm::CodeGenOptLevel>(level));
    auto transformer =
        makeOptimizingTransformer(level, /*sizeLevel=*/0, machine);
    if (llvm::Error error = transformer(&module)) {
      InFlightDiagnostic mlirError = getOperation().emitError();
      llvm::handleAllErrors(
          std::move(error), [&mlirError](const llvm::ErrorInfoBase &ei) {
            mlirError << "Could not optimize LLVM IR: " << ei.message() << "\n";
          });
      return mlirError;
    }
    return success();
  }

private:
  /// SerializeGPUModuleBase::moduleToObjectImpl (LLVM 22) on the lent
  /// machine (its LLVM_DEBUG prints are left out: LLVM is a release build).
  FailureOr<SmallVector<char, 0>> objectOf(llvm::Module &module) {
    llvm::TargetMachine *machine =
        targetOptions.getCompilationTarget() == gpu::CompilationTarget::Offload
            ? nullptr
            : lentMachine(&module);
    if (!machine)
      return moduleToObjectImpl(targetOptions, module);
    FailureOr<SmallString<0>> serializedISA = failure();
    // Kept by a shared code generation, `module`, its context and the
    // machine are no longer this serializer's.
    std::optional<llvm::TimeTraceScope> step(std::in_place, "Code generation");
    std::optional<fly::RocdlSharedIsa> shared;
    if (llvmModule.get() == &module)
      shared = fly::codegenSharingRocdl(sharing, llvmContext, llvmModule, lent);
    if (shared)
      serializedISA = std::move(shared->isa);
    bool verify =
        fly::getRocdlSharedCodegenMode() == fly::RocdlSharedCodegenMode::Verify;
    continuedCodegen = shared && shared->continued && !verify;
    if (shared && shared->continued && verify) {
      FailureOr<SmallString<0>> whole = translateModuleToISA(
          module, *machine, [&]() { return getOperation().emitError(); });
      // One write: variants on other threads say the same.
      std::string line =
          ("fly: shared code generation of " +
           SymbolTable::getSymbolName(&getOperation()).getValue() + ": ISA " +
           (succeeded(whole) && *whole == *serializedISA ? "equal"
                                                         : "differs") +
           "\n")
              .str();
      llvm::errs() << line;
      serializedISA = std::move(whole);
    } else if (failed(serializedISA)) {
      serializedISA = translateModuleToISA(
          module, *machine, [&]() { return getOperation().emitError(); });
    }
    step.reset();
    if (failed(serializedISA))
      return getOperation().emitError()
             << "failed translating the module to ISA";
    if (targetOptions.getCompilationTarget() ==
        gpu::CompilationTarget::Assembly)
      return SmallVector<char, 0>(serializedISA->begin(), serializedISA->end());
    if (getToolkitPath().empty())
      return getOperation().emitError()
             << "invalid ROCm path, please set a valid path";
    return compileToBinary(*serializedISA);
  }

  /// The machine this serialization compiles with, lent on first use; null:
  /// upstream's own (reuse off, or a target that upstream's call reports).
  /// `module`, once there is one, decides whether a kept machine may serve
  /// it; if not, a new machine does and is not kept.
  llvm::TargetMachine *lentMachine(const llvm::Module *module) {
    if (!reuseMachines)
      return nullptr;
    if (!lent)
      lent.emplace(fly::lendTargetMachine(triple, chip, features));
    if (module && !fly::canKeptTargetMachineServe(*module)) {
      if (*lent && keepable && !lent->isNew() && !servedModule) {
        // Untouched but for a data layout: back to the pool.
        lent->keep();
        lent.reset();
        lent.emplace(fly::lendTargetMachine(triple, chip, features,
                                            /*onlyNew=*/true));
      }
      keepable = false;
    }
    if (module)
      servedModule = true;
    return lent->get();
  }

  gpu::TargetOptions targetOptions;
  /// Whether the optimised module is a shared one plus this variant's
  /// register hints (its code generation may then continue a kept cut).
  fly::RocdlSharing sharing;
  /// What run() translates to and compiles (the module destroyed first).
  std::unique_ptr<llvm::LLVMContext> llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  bool reuseMachines = fly::isTargetMachineReuseEnabled();
  std::optional<fly::LentTargetMachine> lent;
  bool keepable = true;
  bool servedModule = false;
  bool continuedCodegen = false;
};

/// Keeps the error diagnostics of the LLVMContext a serializer compiles in
/// (AMDGPU's "can't parse second integer attribute", ...): LLVM's default
/// handler prints them and calls exit(1), which ends every variant of a
/// sweep and the process that embeds fly. Other severities print as before.
class LLVMErrorKeeper final : public llvm::DiagnosticHandler {
public:
  explicit LLVMErrorKeeper(std::string &errors) : errors(errors) {}
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    if (info.getSeverity() != llvm::DS_Error)
      return false;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    errors += (errors.empty() ? "" : "; ") + text;
    return true;
  }

private:
  std::string &errors;
};

struct ModuleToBinaryPass
    : fly::impl::FlyModuleToBinaryBase<ModuleToBinaryPass> {
  using FlyModuleToBinaryBase::FlyModuleToBinaryBase;
  ModuleToBinaryPass(const fly::FlyModuleToBinaryOptions &options,
                     std::shared_ptr<fly::IntermediateCapture> capture,
                     bool asUpstream)
      : FlyModuleToBinaryBase(options), capture(std::move(capture)),
        asUpstream(asUpstream) {}

  StringRef getName() const override {
    return asUpstream ? "GpuModuleToBinaryPass"
                      : FlyModuleToBinaryBase::getName();
  }
  StringRef getArgument() const override {
    return asUpstream ? "gpu-module-to-binary"
                      : FlyModuleToBinaryBase::getArgument();
  }

  void runOnOperation() override;

private:
  std::shared_ptr<fly::IntermediateCapture> capture;
  bool asUpstream = false;
};
} // namespace

/// What ROCDLTargetAttrImpl::serializeToObject does, with our serializer.
/// Its TargetMachine goes back to the pool only if it returned an object
/// and `llvmErrors` is still empty.
/// `continued`: whether its ISA continued another variant's kept code
/// generation.
static std::optional<SmallVector<char, 0>>
serializeRocdl(gpu::GPUModuleOp gpuModule, ROCDL::ROCDLTargetAttr target,
               const gpu::TargetOptions &options, const std::string &llvmErrors,
               bool &continued) {
  CapturingRocdlSerializer serializer(*gpuModule, target, options);
  serializer.init();
  std::optional<SmallVector<char, 0>> object = serializer.run();
  if (object && llvmErrors.empty())
    serializer.keepMachine();
  continued = object && serializer.continuedSharedCodegen();
  return object;
}

void ModuleToBinaryPass::runOnOperation() {
  // From here to the TargetOptions: upstream's runOnOperation.
  std::optional<gpu::CompilationTarget> targetFormat =
      fly::parseBinaryFormat(compilationTarget);
  if (!targetFormat) {
    getOperation()->emitError() << "Invalid format specified.";
    return signalPassFailure();
  }

  // Lazy symbol table builder callback.
  std::optional<SymbolTable> parentTable;
  auto lazyTableBuilder = [&]() -> SymbolTable * {
    // Build the table if it has not been built.
    if (!parentTable) {
      Operation *table = SymbolTable::getNearestSymbolTable(getOperation());
      // It's up to the target attribute to determine if failing to find a
      // symbol table is an error.
      if (!table)
        return nullptr;
      parentTable = SymbolTable(table);
    }
    return &parentTable.value();
  };
  SmallVector<Attribute> librariesToLink;
  for (const std::string &path : linkFiles)
    librariesToLink.push_back(StringAttr::get(&getContext(), path));

  // transformGpuModulesToBinaries and moduleSerializer, with one
  // TargetOptions per target whose callbacks name it.
  Operation *root = getOperation();
  auto serialize = [&](gpu::GPUModuleOp gpuModule, unsigned index,
                       gpu::TargetAttrInterface target) -> Attribute {
    using Kind = fly::IntermediateCapture::Kind;
    auto keep = [&](Kind kind, StringRef text) {
      capture->add(root, gpuModule.getName(), index, kind, text);
    };
    auto onOptimizedIR = [&](llvm::Module &module) {
      std::string text;
      llvm::raw_string_ostream os(text);
      module.print(os, nullptr);
      keep(Kind::LlvmIR, text);
    };
    auto onIsa = [&](StringRef isa) { keep(Kind::Isa, isa); };
    std::string llvmErrors;
    auto onInitialIR = [&](llvm::Module &module) {
      module.getContext().setDiagnosticHandler(
          std::make_unique<LLVMErrorKeeper>(llvmErrors));
    };
    bool texts = capture && capture->capturesTexts();
    gpu::TargetOptions targetOptions(
        toolkitPath, librariesToLink, cmdOptions, elfSection, *targetFormat,
        lazyTableBuilder, onInitialIR, {},
        texts ? llvm::function_ref<void(llvm::Module &)>(onOptimizedIR)
              : nullptr,
        texts ? llvm::function_ref<void(StringRef)>(onIsa) : nullptr);
    // ROCDL through the mirrored serializer: upstream's drops the callbacks,
    // and with them the error keeper.
    auto rocdl = dyn_cast<ROCDL::ROCDLTargetAttr>(target);
    std::optional<SmallVector<char, 0>> serializedModule;
    bool continued = false;
    std::optional<std::string> ended = fly::runUnwindingFatalErrors([&] {
      serializedModule =
          rocdl ? serializeRocdl(gpuModule, rocdl, targetOptions, llvmErrors,
                                 continued)
                : target.serializeToObject(gpuModule, targetOptions);
    });
    if (ended) {
      gpuModule.emitError() << "the binary pass hit " << *ended;
      return nullptr;
    }
    if (!llvmErrors.empty()) {
      gpuModule.emitError()
          << "the LLVM backend reported an error: " << llvmErrors;
      return nullptr;
    }
    if (!serializedModule) {
      gpuModule.emitError("An error happened while serializing the module.");
      return nullptr;
    }
    Attribute object =
        target.createObject(gpuModule, *serializedModule, targetOptions);
    if (!object)
      gpuModule.emitError("An error happened while creating the object.");
    else if (continued && capture)
      capture->addContinued(root);
    return object;
  };
  for (Region &region : getOperation()->getRegions())
    for (Block &block : region.getBlocks())
      for (auto gpuModule :
           llvm::make_early_inc_range(block.getOps<gpu::GPUModuleOp>()))
        if (failed(fly::replaceWithBinary(
                gpuModule, [&](unsigned index, gpu::TargetAttrInterface t) {
                  return serialize(gpuModule, index, t);
                })))
          return signalPassFailure();
}

std::unique_ptr<Pass>
fly::createFlyModuleToBinary(const FlyModuleToBinaryOptions &options,
                             std::shared_ptr<IntermediateCapture> capture,
                             bool asUpstream) {
  return std::make_unique<ModuleToBinaryPass>(options, std::move(capture),
                                              asUpstream);
}
