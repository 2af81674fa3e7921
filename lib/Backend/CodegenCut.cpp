//===- CodegenCut.cpp - Code generation stopped once, continued per variant
//===//

#include "fly/Backend/CodegenCut.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/AsmParser/SlotMapping.h"
#include "llvm/CodeGen/MIRParser/MIParser.h"
#include "llvm/CodeGen/MIRYamlMapping.h"
#include "llvm/CodeGen/MachineConstantPool.h"
#include "llvm/CodeGen/MachineFrameInfo.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/MachineRegisterInfo.h"
#include "llvm/CodeGen/PseudoSourceValueManager.h"
#include "llvm/CodeGen/TargetInstrInfo.h"
#include "llvm/CodeGen/TargetLowering.h"
#include "llvm/CodeGen/TargetRegisterInfo.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Pass.h"
#include "llvm/PassInfo.h"
#include "llvm/PassRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstring>

using namespace llvm;

namespace fly {

std::unique_ptr<MachineFunction>
copyMachineFunction(const MachineFunction &src, MCContext &ctx,
                    PerTargetMIParsingState *freshInfo) {
  const MachineFrameInfo &srcFrame = src.getFrameInfo();
  if (src.getJumpTableInfo() || !src.getConstantPool()->isEmpty() ||
      !src.getLandingPads().empty() || !src.getCallSitesInfo().empty() ||
      srcFrame.getNumFixedObjects() || srcFrame.hasVarSizedObjects() ||
      srcFrame.getLocalFrameObjectCount() ||
      !srcFrame.getSavePoints().empty() || !srcFrame.getRestorePoints().empty())
    return nullptr;
  const TargetSubtargetInfo &sti = src.getSubtarget();
  const TargetRegisterInfo *tri = sti.getRegisterInfo();
  const MachineRegisterInfo &srcRegs = src.getRegInfo();
  // Per-register flags live in the target's MachineFunctionInfo, which a
  // fresh one would not have.
  for (unsigned i = 0, e = srcRegs.getNumVirtRegs(); i < e; ++i)
    if (!tri->getVRegFlagsOfReg(Register::index2VirtReg(i), src).empty())
      return nullptr;
  auto dst = std::make_unique<MachineFunction>(
      const_cast<Function &>(src.getFunction()), src.getTarget(), sti, ctx,
      src.getFunctionNumber());
  const TargetMachine &tm = src.getTarget();
  if (freshInfo) {
    // As MachineModuleInfo makes one, before any register: the target's
    // info follows the registers created (AMDGPU sizes its per-register
    // flags so).
    dst->initTargetMachineFunctionInfo(sti);
    tm.registerMachineRegisterInfoCallback(*dst);
  }
  MachineFrameInfo &dstFrame = dst->getFrameInfo();
  for (int i = 0, e = srcFrame.getObjectIndexEnd(); i < e; ++i) {
    int fi = dstFrame.CreateStackObject(
        srcFrame.getObjectSize(i), srcFrame.getObjectAlign(i),
        srcFrame.isSpillSlotObjectIndex(i), srcFrame.getObjectAllocation(i),
        srcFrame.getStackID(i));
    dstFrame.setObjectOffset(fi, srcFrame.getObjectOffset(i));
  }
  dstFrame.ensureMaxAlignment(srcFrame.getMaxAlign());
  dstFrame.setHasCalls(srcFrame.hasCalls());
  dstFrame.setAdjustsStack(srcFrame.adjustsStack());
  if (srcFrame.isMaxCallFrameSizeComputed())
    dstFrame.setMaxCallFrameSize(srcFrame.getMaxCallFrameSize());

  DenseMap<MachineBasicBlock *, MachineBasicBlock *> blocks;
  for (const MachineBasicBlock &b : src) {
    MachineBasicBlock *copy = dst->CreateMachineBasicBlock(b.getBasicBlock());
    copy->setAlignment(b.getAlignment());
    copy->setMaxBytesForAlignment(b.getMaxBytesForAlignment());
    blocks[const_cast<MachineBasicBlock *>(&b)] = copy;
    dst->push_back(copy);
  }
  MachineRegisterInfo &dstRegs = dst->getRegInfo();
  for (unsigned i = 0, e = srcRegs.getNumVirtRegs(); i < e; ++i) {
    Register reg = Register::index2VirtReg(i);
    Register copy =
        dstRegs.createIncompleteVirtualRegister(srcRegs.getVRegName(reg));
    dstRegs.setRegClassOrRegBank(copy, srcRegs.getRegClassOrRegBank(reg));
    if (srcRegs.getType(reg).isValid())
      dstRegs.setType(copy, srcRegs.getType(reg));
    if (const auto *hints = srcRegs.getRegAllocationHints(reg))
      for (Register hint : hints->second)
        dstRegs.addRegAllocationHint(copy, hint);
  }
  for (auto [livein, vreg] : srcRegs.liveins())
    dstRegs.addLiveIn(livein, vreg);

  PseudoSourceValueManager &psv = dst->getPSVManager();
  for (const MachineBasicBlock &b : src) {
    MachineBasicBlock *copy = blocks[const_cast<MachineBasicBlock *>(&b)];
    for (auto it = b.succ_begin(), e = b.succ_end(); it != e; ++it)
      copy->addSuccessor(blocks[*it], b.getSuccProbability(it));
    for (const auto &livein : b.liveins())
      copy->addLiveIn(livein);
    for (const MachineInstr &mi : b) {
      MachineInstr *c = dst->CreateMachineInstr(
          sti.getInstrInfo()->get(mi.getOpcode()), mi.getDebugLoc(),
          /*NoImplicit=*/true);
      c->setFlags(mi.getFlags());
      c->setAsmPrinterFlag(mi.getAsmPrinterFlags());
      copy->push_back(c);
      for (const MachineOperand &op : mi.operands()) {
        MachineOperand o(op);
        o.clearParent();
        if (o.isMBB()) {
          o.setMBB(blocks[o.getMBB()]);
        } else if (o.isRegMask()) {
          uint32_t *mask = dst->allocateRegMask();
          std::memcpy(mask, op.getRegMask(),
                      sizeof(*mask) *
                          MachineOperand::getRegMaskSize(tri->getNumRegs()));
          o.setRegMask(mask);
          dstRegs.addPhysRegsUsedFromRegMask(mask);
        }
        c->addOperand(*dst, o);
      }
      SmallVector<MachineMemOperand *, 2> mems;
      for (const MachineMemOperand *m : mi.memoperands()) {
        MachinePointerInfo where = m->getPointerInfo();
        if (const auto *v =
                dyn_cast_if_present<const PseudoSourceValue *>(where.V)) {
          if (v->kind() != PseudoSourceValue::Stack)
            return nullptr;
          where.V = psv.getStack();
        }
        mems.push_back(dst->getMachineMemOperand(
            where, m->getFlags(), m->getMemoryType(), m->getBaseAlign(),
            m->getAAInfo(), m->getRanges(), m->getSyncScopeID(),
            m->getSuccessOrdering(), m->getFailureOrdering()));
      }
      c->setMemRefs(*dst, mems);
    }
  }
  dst->setAlignment(src.getAlignment());
  dst->setHasInlineAsm(src.hasInlineAsm());
  dst->getProperties().reset().set(src.getProperties());
  dst->setDebugInstrNumberingCount(src.DebugInstrNumberingCount);

  if (!freshInfo) {
    if (!dst->cloneInfoFrom(src, blocks))
      return nullptr;
    return dst;
  }
  std::unique_ptr<yaml::MachineFunctionInfo> state(
      tm.convertFuncInfoToYAML(src));
  if (state) {
    SourceMgr sm;
    SlotMapping slots;
    PerFunctionMIParsingState pfs(*dst, sm, slots, *freshInfo);
    for (unsigned i = 0, e = srcRegs.getNumVirtRegs(); i < e; ++i) {
      auto *info = new (pfs.Allocator) VRegInfo;
      info->VReg = Register::index2VirtReg(i);
      pfs.VRegInfos[Register(i)] = info;
    }
    SMDiagnostic error;
    SMRange range;
    if (tm.parseMachineFunctionInfo(*state, pfs, error, range))
      return nullptr;
  }
  // What finalize-isel derives from the register budget (registers kept for
  // EXEC copies and private memory, the occupancy limit, the reserved set),
  // for the attributes of now.
  sti.getTargetLowering()->finalizeLowering(*dst);
  return dst;
}

namespace {
/// The register pressure limit of every pressure set of `mf`.
std::vector<unsigned> pressureLimits(const MachineFunction &mf) {
  const TargetRegisterInfo *tri = mf.getSubtarget().getRegisterInfo();
  std::vector<unsigned> limits;
  for (unsigned i = 0, e = tri->getNumRegPressureSets(); i < e; ++i)
    limits.push_back(tri->getRegPressureSetLimit(mf, i));
  return limits;
}

/// What keeping a copy of `mf` costs, roughly: the per-register arrays of
/// its MachineRegisterInfo dominate on targets with many registers (about
/// 14 bytes a register: ~290 KB a function on gfx942), then the
/// instructions.
size_t estimateBytes(unsigned registers, size_t instructions) {
  return registers * 14 + instructions * 128 + 4096;
}
size_t estimateBytes(const MachineFunction &mf) {
  size_t instructions = 0;
  for (const MachineBasicBlock &b : mf)
    instructions += b.size();
  return estimateBytes(mf.getSubtarget().getRegisterInfo()->getNumRegs(),
                       instructions);
}

/// Whether the block graph of `mf` has a cycle (a back edge of a depth-first
/// walk from the entry).
bool hasCycle(const MachineFunction &mf) {
  if (mf.empty())
    return false;
  enum State : uint8_t { Unseen, OnPath, Done };
  DenseMap<const MachineBasicBlock *, State> state;
  SmallVector<std::pair<const MachineBasicBlock *,
                        MachineBasicBlock::const_succ_iterator>>
      path;
  const MachineBasicBlock *entry = &mf.front();
  state[entry] = OnPath;
  path.emplace_back(entry, entry->succ_begin());
  while (!path.empty()) {
    auto &[block, next] = path.back();
    if (next == block->succ_end()) {
      state[block] = Done;
      path.pop_back();
      continue;
    }
    const MachineBasicBlock *succ = *next++;
    State &s = state[succ];
    if (s == OnPath)
      return true;
    if (s == Unseen) {
      s = OnPath;
      path.emplace_back(succ, succ->succ_begin());
    }
  }
  return false;
}

/// Copies every machine function it runs on (they die with their pass
/// manager) with what continue() compares a copy against.
class KeepMachineFunctions : public MachineFunctionPass {
public:
  static char ID;
  using Sink = function_ref<bool(MachineFunction &)>;
  explicit KeepMachineFunctions(Sink sink)
      : MachineFunctionPass(ID), sink(sink) {}
  bool runOnMachineFunction(MachineFunction &mf) override {
    ok &= sink(mf);
    return false;
  }
  void getAnalysisUsage(AnalysisUsage &usage) const override {
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  StringRef getPassName() const override { return "Keep MachineFunctions"; }
  bool ok = true;

private:
  Sink sink;
};
char KeepMachineFunctions::ID = 0;

/// Puts each function's machine function into the pass manager's
/// MachineModuleInfo just before the passes from the cut run on it (the
/// pipeline frees it after them), so one copy at a time is alive.
class InsertMachineFunctions : public FunctionPass {
public:
  static char ID;
  using Source = function_ref<std::unique_ptr<MachineFunction>(const Function &,
                                                               MCContext &)>;
  explicit InsertMachineFunctions(Source source)
      : FunctionPass(ID), source(source) {}
  bool runOnFunction(Function &f) override {
    MachineModuleInfo &mmi =
        getAnalysis<MachineModuleInfoWrapperPass>().getMMI();
    std::unique_ptr<MachineFunction> mf = source(f, mmi.getContext());
    if (!mf) {
      ok = false;
      return false;
    }
    mmi.insertFunction(f, std::move(mf));
    return false;
  }
  void getAnalysisUsage(AnalysisUsage &usage) const override {
    usage.addRequired<MachineModuleInfoWrapperPass>();
    usage.setPreservesAll();
  }
  StringRef getPassName() const override { return "Insert MachineFunctions"; }
  bool ok = true;

private:
  Source source;
};
char InsertMachineFunctions::ID = 0;

/// The passes TargetPassConfig and addPassesToEmitFile add, with `atCut`
/// before the cut: all of them (`whole`), or those from the cut on (the
/// passes before it dropped but immutable ones, which later passes may
/// query), what TargetPassConfig does for -start-before, for this pipeline
/// only.
class CutPassManager : public legacy::PassManager {
public:
  CutPassManager(const void *cutPassId, Pass *atCut, bool whole)
      : cutPassId(cutPassId), atCut(atCut), whole(whole) {}
  ~CutPassManager() override { delete atCut; }
  void add(Pass *pass) override {
    bool isCut = !reachedCut && pass->getPassID() == cutPassId;
    reachedCut |= isCut;
    if (isCut) {
      PassManager::add(atCut);
      atCut = nullptr;
    }
    if (reachedCut || whole || pass->getAsImmutablePass())
      PassManager::add(pass);
    else
      delete pass;
  }
  /// Whether the pipeline reached the cut (with `atCut` added before it).
  bool reachedCut = false;

private:
  const void *cutPassId;
  Pass *atCut;
  bool whole;
};
} // namespace

struct CodegenCut::Kept {
  Function *function;
  std::unique_ptr<MachineFunction> machineFunction;
  std::vector<unsigned> pressureLimits;
  bool hasCycle;
};

CodegenCut::CodegenCut(TargetMachine &machine, Module &module,
                       const void *cutPassId)
    : machine(machine), module(module), cutPassId(cutPassId), keeper(&machine) {
}

CodegenCut::~CodegenCut() = default;

size_t CodegenCut::getBytes() const { return bytes; }

size_t CodegenCut::estimateLeastBytes(const TargetMachine &machine,
                                      const Module &module) {
  size_t functions = llvm::count_if(
      module, [](const Function &f) { return !f.isDeclaration(); });
  return functions * estimateBytes(machine.getMCRegisterInfo()->getNumRegs(),
                                   /*instructions=*/0);
}

CodegenCut::Whole CodegenCut::compileKeeping(TargetMachine &machine,
                                             Module &module, StringRef cutPass,
                                             size_t maxBytes) {
  Whole whole;
  const PassInfo *info = PassRegistry::getPassRegistry()->getPassInfo(cutPass);
  if (!info)
    whole.error = ("no pass named " + cutPass).str();
  std::unique_ptr<CodegenCut> cut(
      new CodegenCut(machine, module, info ? info->getTypeInfo() : nullptr));
  CodegenCut &self = *cut;
  bool tooBig = false;
  auto sink = [&](MachineFunction &mf) {
    if (tooBig)
      return true;
    self.bytes += estimateBytes(mf);
    if (self.bytes > maxBytes) {
      tooBig = true;
      self.kept.clear();
      return true;
    }
    std::unique_ptr<MachineFunction> copy =
        copyMachineFunction(mf, self.keeper.getContext(), nullptr);
    if (!copy)
      return false;
    self.kept.push_back(
        {&mf.getFunction(), std::move(copy), pressureLimits(mf), hasCycle(mf)});
    return true;
  };
  auto *keep = new KeepMachineFunctions(sink);
  SmallString<0> assembly;
  {
    raw_svector_ostream stream(assembly);
    buffer_ostream out(stream);
    CutPassManager passes(cut->cutPassId, keep, /*whole=*/true);
    if (machine.addPassesToEmitFile(passes, out, nullptr,
                                    CodeGenFileType::AssemblyFile)) {
      whole.error = "the target cannot emit assembly";
      return whole;
    }
    if (!passes.reachedCut && whole.error.empty())
      whole.error =
          ("the code generation pipeline has no pass " + cutPass).str();
    passes.run(module);
    if (passes.reachedCut && !keep->ok)
      whole.error = "a machine function holds what a copy leaves out";
    else if (tooBig)
      whole.error = "the machine functions would take more memory than given";
  }
  whole.assembly = std::move(assembly);
  if (whole.error.empty())
    whole.cut = std::move(cut);
  return whole;
}

std::optional<SmallString<0>> CodegenCut::continueToAssembly(Refusal &refusal) {
  refusal = Refusal::None;
  if (!names && !kept.empty())
    names = std::make_unique<PerTargetMIParsingState>(
        kept.front().machineFunction->getSubtarget());
  auto *mmi = new MachineModuleInfoWrapperPass(&machine);
  // The pressure limits first, on copies made and dropped one at a time:
  // the pipeline is built only for a continuation that goes ahead.
  for (const Kept &k : kept) {
    if (!k.hasCycle)
      continue;
    std::unique_ptr<MachineFunction> copy = copyMachineFunction(
        *k.machineFunction, mmi->getMMI().getContext(), names.get());
    if (!copy || pressureLimits(*copy) != k.pressureLimits) {
      delete mmi;
      refusal = copy ? Refusal::PressureLimits : Refusal::Copy;
      return std::nullopt;
    }
  }
  DenseMap<const Function *, const MachineFunction *> byFunction;
  for (const Kept &k : kept)
    byFunction[k.function] = k.machineFunction.get();
  auto source = [&](const Function &f,
                    MCContext &ctx) -> std::unique_ptr<MachineFunction> {
    const MachineFunction *mf = byFunction.lookup(&f);
    return mf ? copyMachineFunction(*mf, ctx, names.get()) : nullptr;
  };
  auto *insert = new InsertMachineFunctions(source);
  SmallString<0> assembly;
  {
    raw_svector_ostream stream(assembly);
    buffer_ostream out(stream);
    CutPassManager passes(cutPassId, insert, /*whole=*/false);
    if (machine.addPassesToEmitFile(passes, out, nullptr,
                                    CodeGenFileType::AssemblyFile,
                                    /*DisableVerify=*/true, mmi) ||
        !passes.reachedCut) {
      refusal = Refusal::Pipeline;
      return std::nullopt;
    }
    passes.run(module);
    if (!insert->ok) {
      refusal = Refusal::Copy;
      return std::nullopt;
    }
  }
  return assembly;
}

} // namespace fly
