//===- rocdl-stages.cpp - Where one ROCDL binary pass spends its time -----===//
//
// fly-rocdl-stages measures, per hint set, the thread-CPU time of each step
// of upstream's ROCDL serialization (ModuleToObject::run and
// SerializeGPUModuleBase::moduleToObjectImpl + compileToBinary of
// mlir/lib/Target/LLVM/{ModuleToObject,ROCDL/Target}.cpp, LLVM 22, called
// through SerializeGPUModuleBase's protected steps in the same order):
// translation to LLVM IR, device-library load, link, optimizeModule,
// codegen to ISA text, assembling. Then, for the hint-independent work that
// a replay could do once per gpu.module (translation + load + link of the
// unhinted module), it checks whether doing it once would be exact:
//
//   shared  : the unhinted module translated and linked once, written to
//             bitcode; per variant parsed into a fresh context, the hinted
//             translation's function attributes and calling conventions
//             written onto it, then optimised and compiled as upstream.
//             "IR ==" : the resulting module prints as the hinted one does
//             before optimisation; "ISA ==" : its ISA text is the plain
//             one's byte for byte (the object is assembled from that text).
//   post-O3 : the unhinted module optimised once, then per variant what the
//             hints changed in the function attributes (added, changed,
//             removed) written onto it (sharing optimizeModule too);
//             "ISA ==" as above.
//
// and what the shared path would cost per variant instead (bitcode parse +
// attribute transplant). With --pass-report=DIR, the code generation of
// hint set --hint-index instead, with LLVM's -debug-pass=
// Structure and -print-after-all (DIR/<gpu.module>.<i>.dump: the pipeline
// and what each pass left) or, --timed, -time-passes (appended to
// DIR/<gpu.module>.<i>.times), and its ISA (DIR/<gpu.module>.<i>.s): which
// codegen passes the hints reach, and their cost. With --mir-cut=PASS,
// whether code generation could stop once before PASS and go on per hint
// set: the unhinted optimised module's code generation up to PASS printed
// as MIR once; per hint set, that MIR parsed with the hint set's function
// attributes and code generation continued from PASS, its ISA compared byte
// for byte with the plain serialization's, and the thread-CPU of each part;
// and the same in memory: the machine functions at PASS kept once, copied
// per hint set with a MachineFunctionInfo built from the hint set's
// attributes (copyMachineFunction), code generation continued on them.
// Where the kept compile has slot indexes at the cut (from
// register-coalescer on), each copy also gets its slot index entries of
// erased instructions (--mir-cut-tombstones, on by default): the register
// allocator measures live ranges in index entries, erased ones included
// (SlotIndexes::packIndexes keeps them), so without them a continuation
// from before machine-scheduler or greedy differs even unhinted.
// Input: the pre-binary module (what fly replays); bench/rocdl_share.py
// drives it and writes bench/ROCDL-SHARE.md.
//
//===----------------------------------------------------------------------===//

#include "fly/Backend/CodegenCut.h"
#include "fly/Compiler/Registration.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintSet.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/AsmParser/SlotMapping.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/CodeGen/MIRParser/MIParser.h"
#include "llvm/CodeGen/MIRParser/MIRParser.h"
#include "llvm/CodeGen/MIRYamlMapping.h"
#include "llvm/CodeGen/MachineConstantPool.h"
#include "llvm/CodeGen/MachineFrameInfo.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/MachineInstrBuilder.h"
#include "llvm/CodeGen/MachineModuleInfo.h"
#include "llvm/CodeGen/MachineRegisterInfo.h"
#include "llvm/CodeGen/PseudoSourceValueManager.h"
#include "llvm/CodeGen/SlotIndexes.h"
#include "llvm/CodeGen/TargetInstrInfo.h"
#include "llvm/CodeGen/TargetLowering.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Pass.h"
#include "llvm/PassInfo.h"
#include "llvm/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <map>
#include <unistd.h>

using namespace mlir;
using llvm::StringRef;

static llvm::cl::opt<std::string> inputOpt("input", llvm::cl::Required,
                                           llvm::cl::desc("pre-binary module"));
static llvm::cl::opt<std::string>
    hintsOpt("hints-file", llvm::cl::Required,
             llvm::cl::desc("JSON list of hint sets"));
static llvm::cl::opt<std::string>
    toolkitOpt("toolkit", llvm::cl::desc("ROCm-shaped folder"));
static llvm::cl::opt<unsigned> repsOpt("reps", llvm::cl::init(3),
                                       llvm::cl::desc("repetitions"));
static llvm::cl::opt<unsigned> nOpt("n", llvm::cl::init(16),
                                    llvm::cl::desc("hint sets used"));
static llvm::cl::opt<std::string> jsonOpt("json", llvm::cl::Required,
                                          llvm::cl::desc("output"));
static llvm::cl::opt<std::string> passReportOpt(
    "pass-report",
    llvm::cl::desc("only the pass report of --hint-index, into this folder"));
static llvm::cl::opt<unsigned>
    hintIndexOpt("hint-index", llvm::cl::init(0),
                 llvm::cl::desc("the hint set the pass report is of"));
static llvm::cl::opt<std::string>
    mirCutOpt("mir-cut",
              llvm::cl::desc("only the MIR cut before this codegen pass, "
                             "for the first --n hint sets"));
static llvm::cl::opt<bool> tombstonesOpt(
    "mir-cut-tombstones", llvm::cl::init(true),
    llvm::cl::desc("in-memory cut: give each copy the slot index entries of "
                   "erased instructions the kept compile had at the cut"));
static llvm::cl::opt<bool>
    timedOpt("timed", llvm::cl::desc("pass report: -time-passes instead of "
                                     "-print-after-all"));

static double threadCpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *const kStages[] = {"translate", "load",    "link",
                                      "optimize",  "codegen", "assemble"};

namespace {
/// Upstream's serializer steps, one at a time.
struct Steps : ROCDL::SerializeGPUModuleBase {
  using SerializeGPUModuleBase::SerializeGPUModuleBase;
  std::map<std::string, double> ms;

  /// translateToLLVMIR .. handleModulePostLink, as ModuleToObject::run.
  std::unique_ptr<llvm::Module> linked(llvm::LLVMContext &ctx) {
    double t = threadCpuMs();
    std::unique_ptr<llvm::Module> m = translateToLLVMIR(ctx);
    if (!m)
      return nullptr;
    setDataLayoutAndTriple(*m);
    ms["translate"] = threadCpuMs() - t;
    t = threadCpuMs();
    handleModulePreLink(*m);
    auto libs = loadBitcodeFiles(*m);
    if (!libs)
      return nullptr;
    ms["load"] = threadCpuMs() - t;
    t = threadCpuMs();
    if (!libs->empty() && failed(linkFiles(*m, std::move(*libs))))
      return nullptr;
    handleModulePostLink(*m);
    ms["link"] = threadCpuMs() - t;
    return m;
  }
  LogicalResult optimize(llvm::Module &m) {
    double t = threadCpuMs();
    LogicalResult ok = optimizeModule(m, optLevel);
    ms["optimize"] = threadCpuMs() - t;
    return ok;
  }
  llvm::TargetMachine *machine() {
    FailureOr<llvm::TargetMachine *> tm = getOrCreateTargetMachine();
    return failed(tm) ? nullptr : *tm;
  }
  /// moduleToObjectImpl's ISA and compileToBinary's assembling.
  std::optional<std::string> isa(llvm::Module &m) {
    double t = threadCpuMs();
    FailureOr<llvm::TargetMachine *> tm = getOrCreateTargetMachine();
    if (failed(tm))
      return std::nullopt;
    auto text = translateModuleToISA(
        m, **tm, [&] { return getOperation().emitError(); });
    ms["codegen"] = threadCpuMs() - t;
    if (failed(text))
      return std::nullopt;
    t = threadCpuMs();
    auto object = ROCDL::assembleIsa(*text, triple, chip, features, [&] {
      return getOperation().emitError();
    });
    ms["assemble"] = threadCpuMs() - t;
    if (failed(object))
      return std::nullopt;
    return text->str().str();
  }
};
} // namespace

static std::string print(const llvm::Module &m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return text;
}

/// What the hinted translation `from` has that hints can change, written
/// onto `to` (same context): every function's attribute list and calling
/// convention.
static void transplant(llvm::Module &to, const llvm::Module &from) {
  for (const llvm::Function &f : from)
    if (llvm::Function *g = to.getFunction(f.getName())) {
      g->setAttributes(f.getAttributes());
      g->setCallingConv(f.getCallingConv());
    }
}

/// What a hint changed between the unhinted translation `before` and the
/// hinted `after` (same context), applied to `to`: function attributes
/// added, changed or removed, and calling conventions. Leaves what
/// optimisation inferred on `to` alone.
static void applyDifference(llvm::Module &to, const llvm::Module &before,
                            const llvm::Module &after) {
  for (const llvm::Function &f : after) {
    const llvm::Function *old = before.getFunction(f.getName());
    llvm::Function *g = to.getFunction(f.getName());
    if (!old || !g)
      continue;
    llvm::AttributeSet now = f.getAttributes().getFnAttrs();
    llvm::AttributeSet was = old->getAttributes().getFnAttrs();
    auto in = [](llvm::AttributeSet set, llvm::Attribute attr) {
      return attr.isStringAttribute() ? set.getAttribute(attr.getKindAsString())
                                      : set.getAttribute(attr.getKindAsEnum());
    };
    for (llvm::Attribute attr : was)
      if (!in(now, attr).isValid()) {
        if (attr.isStringAttribute())
          g->removeFnAttr(attr.getKindAsString());
        else
          g->removeFnAttr(attr.getKindAsEnum());
      }
    for (llvm::Attribute attr : now)
      if (in(was, attr) != attr)
        g->addFnAttr(attr);
    if (f.getCallingConv() != old->getCallingConv())
      g->setCallingConv(f.getCallingConv());
  }
}

static std::unique_ptr<llvm::Module>
parseShared(const llvm::SmallVector<char, 0> &bitcode, llvm::LLVMContext &ctx,
            StringRef id) {
  auto m = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(StringRef(bitcode.data(), bitcode.size()), id),
      ctx);
  if (!m) {
    llvm::consumeError(m.takeError());
    return nullptr;
  }
  return std::move(*m);
}

/// Sets one of LLVM's own options (-print-after-all, -debug-pass, ...) as
/// its command line would.
static bool setLlvmOption(StringRef name, StringRef value) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  return it != options.end() && !it->second->addOccurrence(0, name, value);
}

/// Runs `body` with file descriptor 2 (where LLVM's dumps and timers go, as
/// errs() and dbgs() in a release build) appended to `path`.
static bool withStderrTo(const std::string &path,
                         llvm::function_ref<void()> body) {
  int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (file < 0)
    return false;
  std::fflush(stderr);
  int saved = ::dup(2);
  ::dup2(file, 2);
  ::close(file);
  body();
  llvm::errs().flush();
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  return true;
}

/// The pass report of one gpu.module under one hint set (see the header),
/// from its serializer `steps`, into `stem`.{dump,times,s}. One code
/// generation per process with -time-passes: LLVM's legacy pass timers,
/// once on, time every later run and number pass instances process-wide.
static bool reportPasses(Steps &steps, const std::string &stem, bool timed) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = steps.linked(ctx);
  if (!m || failed(steps.optimize(*m)))
    return false;
  std::optional<std::string> isa;
  bool written;
  if (timed) {
    llvm::TimePassesIsEnabled = true;
    written = withStderrTo(stem + ".times", [&] {
      isa = steps.isa(*m);
      if (isa)
        llvm::reportAndResetTimings(&llvm::errs());
    });
  } else {
    if (!setLlvmOption("print-after-all", "true") ||
        !setLlvmOption("debug-pass", "Structure"))
      return false;
    std::remove((stem + ".dump").c_str());
    written = withStderrTo(stem + ".dump", [&] { isa = steps.isa(*m); });
  }
  if (!written || !isa)
    return false;
  std::error_code ec;
  llvm::raw_fd_ostream out(stem + ".s", ec);
  if (ec)
    return false;
  out << *isa;
  return true;
}

/// --json's file: the rows, or exit status 1.
static int writeRows(llvm::json::Array rows) {
  std::error_code ec;
  llvm::raw_fd_ostream out(jsonOpt, ec);
  if (ec)
    return 1;
  out << llvm::formatv("{0:2}", llvm::json::Value(std::move(rows))) << "\n";
  return 0;
}

/// A copy of `gpuModule` at the end of `source` with `hints` applied (under
/// another name while they are, then `gpuModule`'s); null if they do not
/// apply. The caller erases it.
static gpu::GPUModuleOp hintedCopy(ModuleOp source, gpu::GPUModuleOp gpuModule,
                                   const fly::HintSet &hints) {
  OpBuilder b(source.getContext());
  b.setInsertionPointToEnd(source.getBody());
  auto hinted = cast<gpu::GPUModuleOp>(b.clone(*gpuModule));
  hinted.setSymName((gpuModule.getName() + "_hinted").str());
  if (failed(fly::applyHints(hinted, hints))) {
    hinted.erase();
    return nullptr;
  }
  hinted.setSymName(gpuModule.getName());
  return hinted;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Sets one of LLVM's string options (-stop-before, -start-before) in
/// place; TargetPassConfig reads them when a pipeline is built.
static bool setStringOption(StringRef name, StringRef value) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find(name);
  if (it == options.end())
    return false;
  static_cast<llvm::cl::opt<std::string> *>(it->second)->setValue(value.str());
  return true;
}

namespace {
/// A pass manager that adds `first` before the pass named `before`.
struct InsertingPassManager : llvm::legacy::PassManager {
  llvm::Pass *first = nullptr;
  StringRef before;
  ~InsertingPassManager() override { delete first; }
  void add(llvm::Pass *pass) override {
    if (first && pass->getPassName() == before) {
      PassManager::add(first);
      first = nullptr;
    }
    PassManager::add(pass);
  }
};
} // namespace

/// Code generation of `module` from `cut` on, to ISA, on `machine`, from the
/// machine functions `fill` puts into the pass manager's MachineModuleInfo
/// (false: it could not), with `first` (owned) added before the pass named
/// `before` (nullopt where there is none). `prepMs`: thread-CPU from `start` to
/// the end of `fill`; `restMs`: the passes.
static std::optional<std::string>
continueCodegen(llvm::TargetMachine &machine, StringRef cut,
                llvm::Module &module,
                llvm::function_ref<bool(llvm::MachineModuleInfo &)> fill,
                double start, double &prepMs, double &restMs,
                llvm::Pass *first = nullptr, StringRef before = "") {
  std::string isa;
  double t;
  {
    llvm::raw_string_ostream stream(isa);
    llvm::buffer_ostream out(stream);
    InsertingPassManager passes;
    passes.first = first;
    passes.before = before;
    if (!setStringOption("start-before", cut))
      return std::nullopt;
    auto *mmi = new llvm::MachineModuleInfoWrapperPass(&machine);
    bool failedToBuild = machine.addPassesToEmitFile(
        passes, out, nullptr, llvm::CodeGenFileType::AssemblyFile,
        /*DisableVerify=*/true, mmi);
    setStringOption("start-before", "");
    // `first` still held: no pass named `before` came, so it never ran.
    if (failedToBuild || passes.first || !fill(mmi->getMMI()))
      return std::nullopt;
    prepMs = threadCpuMs() - start;
    t = threadCpuMs();
    passes.run(module);
  }
  restMs = threadCpuMs() - t;
  return isa;
}

/// Code generation of `mir` (a module's MIR up to `cut`) from `cut` on, on
/// `machine`, with `attributes` (the unhinted and the hinted module, linked)
/// applied to its IR first. The ISA, or nullopt; `parseMs` and `restMs` get
/// the thread-CPU of the parse and of the passes.
static std::optional<std::string>
continueFromMir(StringRef mir, StringRef cut, llvm::TargetMachine &machine,
                const llvm::Module &unhinted, const llvm::Module &hinted,
                double &parseMs, double &restMs) {
  double t = threadCpuMs();
  llvm::LLVMContext &ctx = unhinted.getContext();
  std::unique_ptr<llvm::MIRParser> parser = llvm::createMIRParser(
      llvm::MemoryBuffer::getMemBuffer(mir, "cut.mir"), ctx);
  if (!parser)
    return std::nullopt;
  std::unique_ptr<llvm::Module> m = parser->parseIRModule();
  if (!m)
    return std::nullopt;
  applyDifference(*m, unhinted, hinted);
  return continueCodegen(
      machine, cut, *m,
      [&](llvm::MachineModuleInfo &mmi) {
        return !parser->parseMachineFunctions(*m, mmi);
      },
      t, parseMs, restMs);
}

/// Per basic block (by number), how many slot index entries of erased
/// instructions come before each instruction with an index and before the
/// block's end.
using TombstoneLayout = std::vector<std::vector<unsigned>>;

static TombstoneLayout readTombstones(const llvm::MachineFunction &mf,
                                      const llvm::SlotIndexes &indexes) {
  TombstoneLayout layout(mf.getNumBlockIDs());
  for (const llvm::MachineBasicBlock &mbb : mf) {
    std::vector<unsigned> &counts = layout[mbb.getNumber()];
    unsigned run = 0;
    llvm::SlotIndex end = indexes.getMBBEndIdx(&mbb);
    for (llvm::SlotIndex i = indexes.getMBBStartIdx(&mbb).getNextIndex();
         i != end; i = i.getNextIndex()) {
      if (indexes.getInstructionFromIndex(i)) {
        counts.push_back(run);
        run = 0;
      } else {
        ++run;
      }
    }
    counts.push_back(run);
  }
  return layout;
}

namespace {
/// Gives each machine function the slot index entries of erased
/// instructions its layout says (KILLs inserted into the maps and removed).
struct PlaceTombstones : llvm::MachineFunctionPass {
  static char ID;
  PlaceTombstones(
      const std::map<const llvm::Function *, TombstoneLayout> &layouts,
      bool &mismatch)
      : MachineFunctionPass(ID), layouts(layouts), mismatch(mismatch) {}
  bool runOnMachineFunction(llvm::MachineFunction &mf) override {
    auto found = layouts.find(&mf.getFunction());
    if (found == layouts.end())
      return false;
    llvm::SlotIndexes &indexes =
        getAnalysis<llvm::SlotIndexesWrapperPass>().getSI();
    const llvm::TargetInstrInfo &tii = *mf.getSubtarget().getInstrInfo();
    for (llvm::MachineBasicBlock &mbb : mf) {
      const std::vector<unsigned> &counts = found->second[mbb.getNumber()];
      auto place = [&](llvm::MachineBasicBlock::iterator before, unsigned n) {
        for (unsigned j = 0; j < n; ++j) {
          llvm::MachineInstr *mi = llvm::BuildMI(
              mbb, before, llvm::DebugLoc(), tii.get(llvm::TargetOpcode::KILL));
          indexes.insertMachineInstrInMaps(*mi);
          indexes.removeMachineInstrFromMaps(*mi);
          mi->eraseFromParent();
        }
      };
      std::vector<llvm::MachineBasicBlock::iterator> at;
      for (llvm::MachineBasicBlock::iterator i = mbb.begin(); i != mbb.end();
           ++i)
        if (!i->isDebugOrPseudoInstr())
          at.push_back(i);
      if (at.size() + 1 != counts.size()) {
        mismatch = true;
        continue;
      }
      for (size_t k = 0; k < at.size(); ++k)
        place(at[k], counts[k]);
      place(mbb.end(), counts.back());
    }
    return false;
  }
  void getAnalysisUsage(llvm::AnalysisUsage &usage) const override {
    usage.addRequired<llvm::SlotIndexesWrapperPass>();
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  const std::map<const llvm::Function *, TombstoneLayout> &layouts;
  /// Set where a copy's block has other instructions than the layout's.
  bool &mismatch;
};
char PlaceTombstones::ID = 0;

/// Keeps a copy of every machine function it runs on (the shared part of
/// the in-memory cut: the machine functions die with their pass manager).
struct KeepMachineFunctions : llvm::MachineFunctionPass {
  static char ID;
  explicit KeepMachineFunctions(
      std::map<const llvm::Function *, std::unique_ptr<llvm::MachineFunction>>
          &kept,
      llvm::MCContext &ctx,
      std::map<const llvm::Function *, TombstoneLayout> &layouts)
      : MachineFunctionPass(ID), kept(kept), ctx(ctx), layouts(layouts) {}
  bool runOnMachineFunction(llvm::MachineFunction &mf) override {
    kept[&mf.getFunction()] = fly::copyMachineFunction(mf, ctx, nullptr);
    if (auto *indexes = getAnalysisIfAvailable<llvm::SlotIndexesWrapperPass>())
      layouts[&mf.getFunction()] = readTombstones(mf, indexes->getSI());
    return false;
  }
  void getAnalysisUsage(llvm::AnalysisUsage &usage) const override {
    usage.addUsedIfAvailable<llvm::SlotIndexesWrapperPass>();
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  std::map<const llvm::Function *, std::unique_ptr<llvm::MachineFunction>>
      &kept;
  llvm::MCContext &ctx;
  std::map<const llvm::Function *, TombstoneLayout> &layouts;
};
char KeepMachineFunctions::ID = 0;
} // namespace

/// The in-memory cut: `module`'s code generation up to `cut` once (its
/// machine functions kept), then per call of `continueFrom` copies of them
/// with fresh MachineFunctionInfo, the passes from `cut` on, on `module`
/// with the hint set's attributes (restored after).
struct InMemoryCut {
  llvm::TargetMachine &machine;
  llvm::Module &module;
  std::string cut;
  llvm::MachineModuleInfo keeper{&machine};
  std::map<const llvm::Function *, std::unique_ptr<llvm::MachineFunction>> kept;
  std::map<const llvm::Function *, TombstoneLayout> layouts;
  /// The register and class names machine function info is read with,
  /// built on first use and kept (all of them, for the whole target).
  llvm::PerTargetMIParsingState names{
      *machine.getSubtargetImpl(*module.begin())};

  bool run() {
    // The keeping pass goes before FreeMachineFunction, which a stopped
    // pipeline still ends with.
    InsertingPassManager passes;
    passes.first = new KeepMachineFunctions(kept, keeper.getContext(), layouts);
    passes.before = "Free MachineFunction";
    if (!setStringOption("stop-before", cut))
      return false;
    llvm::raw_null_ostream null;
    llvm::buffer_ostream out(null);
    bool failedToBuild = machine.addPassesToEmitFile(
        passes, out, nullptr, llvm::CodeGenFileType::Null);
    setStringOption("stop-before", "");
    if (failedToBuild || passes.first)
      return false;
    passes.run(module);
    return !kept.empty() &&
           llvm::all_of(kept, [](auto &e) { return e.second != nullptr; });
  }

  std::optional<std::string> continueFrom(const llvm::Module &unhinted,
                                          const llvm::Module &hinted,
                                          double &copyMs, double &restMs) {
    std::map<llvm::Function *, llvm::AttributeList> saved;
    for (llvm::Function &f : module)
      saved[&f] = f.getAttributes();
    applyDifference(module, unhinted, hinted);
    llvm::scope_exit restore([&] {
      for (auto &[f, attributes] : saved)
        f->setAttributes(attributes);
    });
    bool mismatch = false;
    std::optional<std::string> isa = continueCodegen(
        machine, cut, module,
        [&](llvm::MachineModuleInfo &mmi) {
          for (auto &[f, mf] : kept) {
            std::unique_ptr<llvm::MachineFunction> copy =
                fly::copyMachineFunction(*mf, mmi.getContext(), &names);
            if (!copy)
              return false;
            mmi.insertFunction(*f, std::move(copy));
          }
          return true;
        },
        threadCpuMs(), copyMs, restMs,
        tombstonesOpt && !layouts.empty()
            ? new PlaceTombstones(layouts, mismatch)
            : nullptr,
        cutPassName());
    if (mismatch)
      return std::nullopt;
    return isa;
  }

  /// The name of the pass `cut` is the argument of.
  StringRef cutPassName() const {
    const llvm::PassInfo *info =
        llvm::PassRegistry::getPassRegistry()->getPassInfo(cut);
    return info ? info->getPassName() : StringRef();
  }
};

/// --mir-cut: one row per hint set of the first ROCDL gpu.module (see the
/// header). Register hints only: other hint sets change more than function
/// attributes, so they are reported as not applicable.
static int reportMirCut(ModuleOp source, ArrayRef<fly::HintSet> hintSets,
                        const gpu::TargetOptions &options) {
  llvm::json::Array rows;
  for (auto gpuModule : source.getOps<gpu::GPUModuleOp>()) {
    ArrayAttr targets = gpuModule.getTargetsAttr();
    if (!targets || targets.empty() || !isa<ROCDL::ROCDLTargetAttr>(targets[0]))
      continue;
    auto baseTarget = cast<ROCDL::ROCDLTargetAttr>(targets[0]);
    Steps base(*gpuModule, baseTarget, options);
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> unhinted = base.linked(ctx);
    std::unique_ptr<llvm::Module> optimised = base.linked(ctx);
    if (!unhinted || !optimised || failed(base.optimize(*optimised)) ||
        !base.machine())
      return 1;
    // The unhinted ISA: whether a hint set changes it at all.
    std::optional<std::string> unhintedIsa;
    {
      std::unique_ptr<llvm::Module> m = base.linked(ctx);
      if (!m || failed(base.optimize(*m)) || !(unhintedIsa = base.isa(*m)))
        return 1;
    }
    // The shared part: code generation up to the cut, printed as MIR.
    if (!setStringOption("stop-before", mirCutOpt))
      return 1;
    double t = threadCpuMs();
    auto mir = mlir::LLVM::ModuleToObject::translateModuleToISA(
        *optimised, *base.machine(), [&] { return gpuModule.emitError(); });
    double sharedMs = threadCpuMs() - t;
    setStringOption("stop-before", "");
    if (failed(mir) || !StringRef(*mir).starts_with("--- |"))
      return 1;
    // The in-memory cut, on a module of its own (code generation changes
    // the IR it runs on).
    std::unique_ptr<llvm::Module> cutModule = base.linked(ctx);
    if (!cutModule || failed(base.optimize(*cutModule)))
      return 1;
    InMemoryCut inMemory{*base.machine(), *cutModule, mirCutOpt};
    t = threadCpuMs();
    bool kept = inMemory.run();
    double keptMs = threadCpuMs() - t;
    uint64_t tombstones = 0;
    for (auto &[f, layout] : inMemory.layouts)
      for (const std::vector<unsigned> &counts : layout)
        for (unsigned n : counts)
          tombstones += n;

    for (const fly::HintSet &hints : hintSets) {
      gpu::GPUModuleOp hinted = hintedCopy(source, gpuModule, hints);
      if (!hinted)
        return 1;
      auto target = cast<ROCDL::ROCDLTargetAttr>(hinted.getTargetsAttr()[0]);
      llvm::json::Object row;
      row["gpu_module"] = gpuModule.getName();
      row["hints"] = hints.canonical();
      row["shared_ms"] = sharedMs;
      row["kept_ms"] = keptMs;
      row["copyable"] = kept;
      row["tombstones"] = tombstonesOpt ? int64_t(tombstones) : int64_t(-1);
      bool registerHintsOnly =
          target == baseTarget &&
          llvm::all_of(hints.hints(), [](const fly::TypedHint &e) {
            return e.key == "waves_per_eu" || e.key == "maxnreg" ||
                   e.key == "passthrough.amdgpu-num-sgpr";
          });
      row["applicable"] = registerHintsOnly;
      if (registerHintsOnly) {
        // Medians of --reps, the plain and the cut path in turn.
        std::vector<double> codegenMs, parseMs, restMs, copyMs, copyRestMs;
        bool isaEqual = true, copyIsaEqual = kept;
        for (unsigned rep = 0; rep < repsOpt; ++rep) {
          Steps plain(*hinted, target, options);
          std::unique_ptr<llvm::Module> hintedLinked = plain.linked(ctx);
          std::unique_ptr<llvm::Module> m = plain.linked(ctx);
          if (!hintedLinked || !m || failed(plain.optimize(*m)))
            return 1;
          std::optional<std::string> plainIsa = plain.isa(*m);
          if (!plainIsa)
            return 1;
          double parse = 0, rest = 0;
          std::optional<std::string> cutIsa =
              continueFromMir(*mir, mirCutOpt, *base.machine(), *unhinted,
                              *hintedLinked, parse, rest);
          isaEqual &= cutIsa && *cutIsa == *plainIsa;
          row["changes_isa"] = *plainIsa != *unhintedIsa;
          if (kept) {
            double copy = 0, copyRest = 0;
            std::optional<std::string> copiedIsa =
                inMemory.continueFrom(*unhinted, *hintedLinked, copy, copyRest);
            copyIsaEqual &= copiedIsa && *copiedIsa == *plainIsa;
            copyMs.push_back(copy);
            copyRestMs.push_back(copyRest);
          }
          codegenMs.push_back(plain.ms["codegen"]);
          parseMs.push_back(parse);
          restMs.push_back(rest);
        }
        row["codegen_ms"] = median(codegenMs);
        row["mir_parse_ms"] = median(parseMs);
        row["rest_ms"] = median(restMs);
        row["isa_equal"] = isaEqual;
        if (kept) {
          row["copy_ms"] = median(copyMs);
          row["copy_rest_ms"] = median(copyRestMs);
          row["copy_isa_equal"] = copyIsaEqual;
        }
      }
      hinted.erase();
      rows.push_back(std::move(row));
    }
    break;
  }
  return writeRows(std::move(rows));
}

int main(int argc, char **argv) {
  llvm::cl::ParseCommandLineOptions(argc, argv, "fly-rocdl-stages\n");
  DialectRegistry registry;
  fly::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.disableMultithreading();
  OwningOpRef<ModuleOp> source = parseSourceFile<ModuleOp>(inputOpt, &context);
  if (!source)
    return 1;
  auto hintSets = fly::readHintSetsFile(hintsOpt);
  if (!hintSets) {
    llvm::errs() << llvm::toString(hintSets.takeError()) << "\n";
    return 1;
  }
  if (hintSets->size() > nOpt)
    hintSets->resize(nOpt);
  ROCDL::SerializeGPUModuleBase::init();
  gpu::TargetOptions options(toolkitOpt);

  if (!mirCutOpt.empty())
    return reportMirCut(*source, *hintSets, options);

  if (!passReportOpt.empty()) {
    if (hintIndexOpt >= hintSets->size())
      return 1;
    for (auto gpuModule : source->getOps<gpu::GPUModuleOp>()) {
      ArrayAttr targets = gpuModule.getTargetsAttr();
      if (!targets || targets.empty() ||
          !isa<ROCDL::ROCDLTargetAttr>(targets[0]))
        continue;
      if (failed(fly::applyHints(gpuModule, (*hintSets)[hintIndexOpt])))
        return 1;
      Steps steps(*gpuModule,
                  cast<ROCDL::ROCDLTargetAttr>(gpuModule.getTargetsAttr()[0]),
                  options);
      std::string stem = (passReportOpt + "/" + gpuModule.getName() + "." +
                          llvm::Twine(hintIndexOpt))
                             .str();
      if (!reportPasses(steps, stem, timedOpt)) {
        llvm::errs() << "fly-rocdl-stages: the pass report " << stem
                     << " failed\n";
        return 1;
      }
    }
    return 0;
  }

  llvm::json::Array rows;
  for (auto gpuModule : source->getOps<gpu::GPUModuleOp>()) {
    ArrayAttr targets = gpuModule.getTargetsAttr();
    if (!targets || targets.empty() || !isa<ROCDL::ROCDLTargetAttr>(targets[0]))
      continue;
    // The hint-independent work, done once: the unhinted module translated
    // and linked, as bitcode (use-list order kept: passes may read it).
    auto baseTarget = cast<ROCDL::ROCDLTargetAttr>(targets[0]);
    Steps base(*gpuModule, baseTarget, options);
    llvm::SmallVector<char, 0> bitcode;
    double writeMs = 0;
    std::string baseId;
    {
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> m = base.linked(ctx);
      if (!m)
        return 1;
      baseId = m->getModuleIdentifier();
      double t = threadCpuMs();
      llvm::raw_svector_ostream os(bitcode);
      llvm::WriteBitcodeToFile(*m, os, /*ShouldPreserveUseListOrder=*/true);
      writeMs = threadCpuMs() - t;
    }
    double onceMs = base.ms["translate"] + base.ms["load"] + base.ms["link"];

    for (const fly::HintSet &hints : *hintSets) {
      gpu::GPUModuleOp hinted = hintedCopy(*source, gpuModule, hints);
      if (!hinted)
        return 1;
      auto target = cast<ROCDL::ROCDLTargetAttr>(hinted.getTargetsAttr()[0]);

      // The plain serialization, repeated: per-stage medians.
      std::map<std::string, std::vector<double>> samples;
      std::string plainIsa, hintedIR;
      for (unsigned rep = 0; rep < repsOpt; ++rep) {
        Steps plain(*hinted, target, options);
        llvm::LLVMContext ctx;
        std::unique_ptr<llvm::Module> m = plain.linked(ctx);
        if (!m)
          return 1;
        if (rep == 0)
          hintedIR = print(*m);
        if (failed(plain.optimize(*m)))
          return 1;
        std::optional<std::string> isa = plain.isa(*m);
        if (!isa)
          return 1;
        plainIsa = *isa;
        for (const char *stage : kStages)
          samples[stage].push_back(plain.ms[stage]);
      }

      // The shared path: parse + transplant per variant, then as upstream.
      Steps shared(*hinted, target, options);
      bool irEqual = false, isaEqual = false, postO3IsaEqual = false;
      double perVariantMs = 0;
      {
        llvm::LLVMContext ctx;
        std::unique_ptr<llvm::Module> hintedLinked = shared.linked(ctx);
        double t = threadCpuMs();
        std::unique_ptr<llvm::Module> m = parseShared(bitcode, ctx, baseId);
        if (!m || !hintedLinked)
          return 1;
        transplant(*m, *hintedLinked);
        perVariantMs = threadCpuMs() - t;
        irEqual = print(*m) == hintedIR;
        if (failed(shared.optimize(*m)))
          return 1;
        std::optional<std::string> isa = shared.isa(*m);
        isaEqual = isa && *isa == plainIsa;
        // Sharing optimizeModule too: the attributes come after it.
        std::unique_ptr<llvm::Module> o = parseShared(bitcode, ctx, baseId);
        Steps unhinted(*gpuModule, baseTarget, options);
        if (!o || failed(unhinted.optimize(*o)))
          return 1;
        std::unique_ptr<llvm::Module> before =
            parseShared(bitcode, ctx, baseId);
        if (!before)
          return 1;
        applyDifference(*o, *before, *hintedLinked);
        std::optional<std::string> postIsa = shared.isa(*o);
        postO3IsaEqual = postIsa && *postIsa == plainIsa;
      }
      hinted.erase();

      llvm::json::Object row;
      row["gpu_module"] = gpuModule.getName();
      row["hints"] = hints.canonical();
      llvm::json::Object stages;
      for (const char *stage : kStages) {
        std::vector<double> &v = samples[stage];
        std::sort(v.begin(), v.end());
        stages[stage] = v[v.size() / 2];
      }
      row["stages_ms"] = std::move(stages);
      row["once_ms"] = onceMs;
      row["bitcode_write_ms"] = writeMs;
      row["per_variant_shared_ms"] = perVariantMs;
      row["ir_equal"] = irEqual;
      row["isa_equal"] = isaEqual;
      row["post_o3_isa_equal"] = postO3IsaEqual;
      rows.push_back(std::move(row));
    }
  }
  return writeRows(std::move(rows));
}
