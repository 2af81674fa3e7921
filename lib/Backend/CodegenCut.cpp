//===- CodegenCut.cpp - Code generation stopped once, continued per variant
//===//

#include "fly/Backend/CodegenCut.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/AsmParser/SlotMapping.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/CodeGen/MIRParser/MIParser.h"
#include "llvm/CodeGen/MIRYamlMapping.h"
#include "llvm/CodeGen/MachineConstantPool.h"
#include "llvm/CodeGen/MachineFrameInfo.h"
#include "llvm/CodeGen/MachineFunction.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/MachineRegisterInfo.h"
#include "llvm/CodeGen/Passes.h"
#include "llvm/CodeGen/PseudoSourceValueManager.h"
#include "llvm/CodeGen/RegisterClassInfo.h"
#include "llvm/CodeGen/TargetInstrInfo.h"
#include "llvm/CodeGen/TargetLowering.h"
#include "llvm/CodeGen/TargetRegisterInfo.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Pass.h"
#include "llvm/PassInfo.h"
#include "llvm/PassRegistry.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <utility>

using namespace llvm;

namespace fly {

namespace {
/// What `remap` found for `from` (null stays null); false where it found
/// nothing.
template <typename T>
bool mapped(const IrRemap *remap, const T *from, const T *&to) {
  to = from;
  if (!remap || !from)
    return true;
  to = static_cast<const T *>(remap->found.lookup(from));
  return to != nullptr;
}
template <typename T> bool mapped(const IrRemap *remap, T *from, T *&to) {
  const T *constTo;
  bool ok = mapped(remap, static_cast<const T *>(from), constTo);
  to = const_cast<T *>(constTo);
  return ok;
}

/// `op` for the copy: in place, or false where `remap` does not map it.
bool remapOperand(MachineOperand &op, const IrRemap &remap,
                  LLVMContext &context) {
  switch (op.getType()) {
  case MachineOperand::MO_Register:
  case MachineOperand::MO_Immediate:
  case MachineOperand::MO_MachineBasicBlock:
  case MachineOperand::MO_FrameIndex:
  case MachineOperand::MO_TargetIndex:
  case MachineOperand::MO_ExternalSymbol:
  case MachineOperand::MO_RegisterMask:
  case MachineOperand::MO_IntrinsicID:
  case MachineOperand::MO_Predicate:
    return true;
  case MachineOperand::MO_CImmediate:
    op = MachineOperand::CreateCImm(
        ConstantInt::get(context, op.getCImm()->getValue()));
    return true;
  case MachineOperand::MO_FPImmediate: {
    const ConstantFP *value =
        ConstantFP::get(context, op.getFPImm()->getValueAPF());
    op.ChangeToFPImmediate(value, op.getTargetFlags());
    return true;
  }
  case MachineOperand::MO_GlobalAddress: {
    const GlobalValue *global;
    if (!mapped(&remap, op.getGlobal(), global))
      return false;
    op.ChangeToGA(global, op.getOffset(), op.getTargetFlags());
    return true;
  }
  case MachineOperand::MO_Metadata: {
    const MDNode *node;
    if (!mapped(&remap, op.getMetadata(), node))
      return false;
    op = MachineOperand::CreateMetadata(node);
    return true;
  }
  default:
    return false;
  }
}
} // namespace

std::unique_ptr<MachineFunction>
copyMachineFunction(const MachineFunction &src, MCContext &ctx,
                    PerTargetMIParsingState *freshInfo, const IrRemap *remap) {
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
  const TargetMachine &tm = remap ? *remap->machine : src.getTarget();
  Function &function =
      remap ? *remap->function : const_cast<Function &>(src.getFunction());
  const TargetSubtargetInfo &dstSti =
      remap ? *tm.getSubtargetImpl(function) : sti;
  auto dst = std::make_unique<MachineFunction>(function, tm, dstSti, ctx,
                                               src.getFunctionNumber());
  if (freshInfo) {
    // As MachineModuleInfo makes one, before any register: the target's
    // info follows the registers created (AMDGPU sizes its per-register
    // flags so).
    dst->initTargetMachineFunctionInfo(dstSti);
    tm.registerMachineRegisterInfoCallback(*dst);
  }
  MachineFrameInfo &dstFrame = dst->getFrameInfo();
  for (int i = 0, e = srcFrame.getObjectIndexEnd(); i < e; ++i) {
    if (remap && srcFrame.getObjectAllocation(i))
      return nullptr;
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
    const BasicBlock *block;
    if (!mapped(remap, b.getBasicBlock(), block))
      return nullptr;
    MachineBasicBlock *copy = dst->CreateMachineBasicBlock(block);
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
      const DILocation *location;
      if (!mapped(remap, mi.getDebugLoc().get(), location))
        return nullptr;
      MachineInstr *c = dst->CreateMachineInstr(
          dstSti.getInstrInfo()->get(mi.getOpcode()), DebugLoc(location),
          /*NoImplicit=*/true);
      c->setFlags(mi.getFlags());
      c->setAsmPrinterFlag(mi.getAsmPrinterFlags());
      copy->push_back(c);
      for (const MachineOperand &op : mi.operands()) {
        MachineOperand o(op);
        o.clearParent();
        if (remap && !remapOperand(o, *remap, function.getContext()))
          return nullptr;
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
        } else if (const auto *v =
                       dyn_cast_if_present<const Value *>(where.V)) {
          if (!mapped(remap, v, v))
            return nullptr;
          where.V = v;
        }
        AAMDNodes aa = m->getAAInfo();
        const MDNode *ranges = m->getRanges();
        SyncScope::ID scope = m->getSyncScopeID();
        if (remap) {
          for (MDNode **node : {&aa.TBAA, &aa.TBAAStruct, &aa.Scope,
                                &aa.NoAlias, &aa.NoAliasAddrSpace})
            if (!mapped(remap, *node, *node))
              return nullptr;
          if (!mapped(remap, ranges, ranges) ||
              scope >= remap->syncScopeNames.size())
            return nullptr;
          scope = function.getContext().getOrInsertSyncScopeID(
              remap->syncScopeNames[scope]);
        }
        mems.push_back(dst->getMachineMemOperand(
            where, m->getFlags(), m->getMemoryType(), m->getBaseAlign(), aa,
            ranges, scope, m->getSuccessOrdering(), m->getFailureOrdering()));
      }
      c->setMemRefs(*dst, mems);
    }
  }
  dst->setAlignment(src.getAlignment());
  dst->setHasInlineAsm(src.hasInlineAsm());
  dst->getProperties().reset().set(src.getProperties());
  dst->setDebugInstrNumberingCount(src.DebugInstrNumberingCount);

  if (!freshInfo) {
    if (remap || !dst->cloneInfoFrom(src, blocks))
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
  dstSti.getTargetLowering()->finalizeLowering(*dst);
  return dst;
}

namespace {
/// The register pressure limit of every pressure set of `mf` as the target
/// gives it (MachineLICM reads these), then as RegisterClassInfo adjusts it
/// for the reserved registers (MachineSink reads those; LLVM 22 subtracts
/// them unsigned, so it wraps). Both passes only ask whether a pressure plus
/// a weight reaches a limit, so every limit beyond any pressure the function
/// can have says no alike: such limits are given as that bound.
std::vector<unsigned> pressureLimits(const MachineFunction &mf) {
  const TargetRegisterInfo *tri = mf.getSubtarget().getRegisterInfo();
  unsigned weight = 1;
  for (const TargetRegisterClass *rc : tri->regclasses())
    weight = std::max(weight, tri->getRegClassWeight(rc).RegWeight);
  // Every virtual register and register unit live at once, each at the
  // largest weight, twice over.
  uint64_t bound =
      2 * uint64_t(weight) *
          (mf.getRegInfo().getNumVirtRegs() + tri->getNumRegUnits()) +
      2;
  auto normal = [&](unsigned limit) {
    return unsigned(std::min<uint64_t>(limit, bound));
  };
  RegisterClassInfo classes;
  classes.runOnMachineFunction(mf);
  std::vector<unsigned> limits;
  unsigned sets = tri->getNumRegPressureSets();
  for (unsigned i = 0; i < sets; ++i)
    limits.push_back(normal(tri->getRegPressureSetLimit(mf, i)));
  for (unsigned i = 0; i < sets; ++i)
    limits.push_back(normal(classes.getRegPressureSetLimit(i)));
  return limits;
}

using Digest = std::array<uint8_t, 32>;

/// `mf` printed, without the names of the IR values and blocks it refers to:
/// the first variant of a shared optimisation compiles the optimised module
/// itself, later ones a copy read from its bitcode, whose names may be
/// numbered otherwise.
Digest digest(const MachineFunction &mf) {
  SmallString<0> text;
  raw_svector_ostream os(text);
  mf.print(os);
  BLAKE3 hasher;
  StringRef rest = text;
  auto isNameChar = [](char c) {
    return isAlnum(c) || c == '_' || c == '.' || c == '$' || c == '-';
  };
  while (!rest.empty()) {
    size_t at = rest.find("%ir");
    StringRef prefix = rest.take_front(at);
    hasher.update(ArrayRef(reinterpret_cast<const uint8_t *>(prefix.data()),
                           prefix.size()));
    if (at == StringRef::npos)
      break;
    rest = rest.drop_front(at);
    size_t name = rest.starts_with("%ir-block.") ? 10
                  : rest.starts_with("%ir.")     ? 4
                                                 : 3;
    hasher.update(
        ArrayRef(reinterpret_cast<const uint8_t *>(rest.data()), name));
    rest = rest.drop_front(name);
    if (name == 3)
      continue;
    if (rest.starts_with("\"")) {
      size_t close = rest.find('"', 1);
      rest =
          rest.drop_front(close == StringRef::npos ? rest.size() : close + 1);
    } else {
      rest = rest.drop_while(isNameChar);
    }
  }
  return hasher.final<32>();
}

bool isBelowOrEqual(ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
  return a.size() == b.size() && llvm::all_of(llvm::zip(a, b), [](auto pair) {
           return std::get<0>(pair) <= std::get<1>(pair);
         });
}

/// Whether `limits` lie in [low, high].
bool isWithin(ArrayRef<unsigned> low, ArrayRef<unsigned> limits,
              ArrayRef<unsigned> high) {
  return low.size() == limits.size() && high.size() == limits.size() &&
         isBelowOrEqual(low, limits) && isBelowOrEqual(limits, high);
}

/// The passes before the cut that read the register pressure limits.
bool readsPressureLimits(const void *passId) {
  return passId == &EarlyMachineLICMID || passId == &MachineSinkingLegacyID;
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

/// Digests every machine function with a cycle it runs on, by function.
class DigestMachineFunctions : public MachineFunctionPass {
public:
  static char ID;
  using Digests = DenseMap<const Function *, std::vector<Digest>>;
  explicit DigestMachineFunctions(Digests &digests)
      : MachineFunctionPass(ID), digests(digests) {}
  bool runOnMachineFunction(MachineFunction &mf) override {
    if (hasCycle(mf))
      digests[&mf.getFunction()].push_back(digest(mf));
    return false;
  }
  void getAnalysisUsage(AnalysisUsage &usage) const override {
    usage.setPreservesAll();
    MachineFunctionPass::getAnalysisUsage(usage);
  }
  StringRef getPassName() const override { return "Digest MachineFunctions"; }

private:
  Digests &digests;
};
char DigestMachineFunctions::ID = 0;

/// What the passes before the cut made of `mf`, a function with a cycle, as
/// it is at the cut: its limits, and its digests after each pass that reads
/// them (`digests`, taken) and at the cut.
CodegenCut::Trace::Function
traceAtCut(const MachineFunction &mf,
           DigestMachineFunctions::Digests &digests) {
  std::vector<Digest> own = std::move(digests[&mf.getFunction()]);
  own.push_back(digest(mf));
  return {mf.getName().str(), pressureLimits(mf), std::move(own)};
}

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

using Point = CodegenCut::Point;

/// The passes TargetPassConfig and addPassesToEmitFile add from `from` to
/// `to`, the others dropped but immutable ones, which later passes may query
/// (what TargetPassConfig does for -start-before/-stop-before, for this
/// pipeline only). `at[p]` is added where the pipeline reaches point p, for
/// `from` <= p <= `to`. With `digests`, each pass before the cut that reads
/// the register pressure limits is followed by one that digests the
/// functions.
class CutPassManager : public legacy::PassManager {
public:
  CutPassManager(const void *cutPassId, Point from, Point to,
                 std::array<Pass *, 3> at,
                 DigestMachineFunctions::Digests *digests = nullptr)
      : cutPassId(cutPassId), from(from), to(to), at(at), digests(digests) {}
  ~CutPassManager() override {
    for (Pass *pass : at)
      delete pass;
  }
  void add(Pass *pass) override {
    const void *id = pass->getPassID();
    if (point < Point::Early && (readsPressureLimits(id) || id == cutPassId))
      reach(Point::Early);
    if (point < Point::Cut && id == cutPassId)
      reach(Point::Cut);
    if (!pass->getAsImmutablePass() && (point < from || point >= to)) {
      delete pass;
      return;
    }
    PassManager::add(pass);
    if (digests && point < Point::Cut && readsPressureLimits(id))
      PassManager::add(new DigestMachineFunctions(*digests));
  }
  /// Whether the pipeline reached the cut.
  bool reachedCut() const { return point >= Point::Cut; }

private:
  void reach(Point p) {
    point = p;
    Pass *&pass = at[static_cast<size_t>(p)];
    if (pass && p >= from && p <= to)
      PassManager::add(std::exchange(pass, nullptr));
  }
  const void *cutPassId;
  Point from, to;
  std::array<Pass *, 3> at;
  DigestMachineFunctions::Digests *digests;
  Point point = Point::Start;
};
} // namespace

struct CodegenCut::Kept {
  Function *function;
  /// As it is at the cut, and before the first pass that reads the register
  /// pressure limits.
  std::unique_ptr<MachineFunction> machineFunction, early;
  bool hasCycle;
  /// With a cycle: what the kept compile's passes before the cut made of it,
  /// and the limits they are known to make it under (lowLimits <= limits <=
  /// highLimits).
  Trace::Function traced;
  std::vector<unsigned> lowLimits, highLimits;
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
                                             size_t maxBytes, bool toAssembly) {
  Whole whole;
  const PassInfo *info = PassRegistry::getPassRegistry()->getPassInfo(cutPass);
  if (!info)
    whole.error = ("no pass named " + cutPass).str();
  std::unique_ptr<CodegenCut> cut(
      new CodegenCut(machine, module, info ? info->getTypeInfo() : nullptr));
  CodegenCut &self = *cut;
  bool tooBig = false;
  DigestMachineFunctions::Digests digests;
  DenseMap<const Function *, std::unique_ptr<MachineFunction>> early;
  // Both copies of a function count in the budget.
  auto keepCopy = [&](MachineFunction &mf) -> std::unique_ptr<MachineFunction> {
    self.bytes += estimateBytes(mf);
    if (self.bytes > maxBytes) {
      tooBig = true;
      self.kept.clear();
      early.clear();
    }
    if (tooBig)
      return nullptr;
    return copyMachineFunction(mf, self.keeper.getContext(), nullptr);
  };
  auto earlySink = [&](MachineFunction &mf) {
    std::unique_ptr<MachineFunction> copy = keepCopy(mf);
    if (!copy)
      return tooBig;
    early[&mf.getFunction()] = std::move(copy);
    return true;
  };
  auto cutSink = [&](MachineFunction &mf) {
    std::unique_ptr<MachineFunction> copy = keepCopy(mf);
    if (!copy)
      return tooBig;
    Kept kept{&mf.getFunction(), std::move(copy),
              std::move(early[&mf.getFunction()]), hasCycle(mf)};
    if (!kept.early)
      return false;
    if (kept.hasCycle) {
      kept.traced = traceAtCut(mf, digests);
      kept.lowLimits = kept.highLimits = kept.traced.limits;
    }
    self.kept.push_back(std::move(kept));
    return true;
  };
  auto *keepEarly = new KeepMachineFunctions(earlySink);
  auto *keepCut = new KeepMachineFunctions(cutSink);
  SmallString<0> assembly;
  {
    raw_svector_ostream stream(assembly);
    buffer_ostream out(stream);
    CutPassManager passes(cut->cutPassId, Point::Start,
                          toAssembly ? Point::End : Point::Cut,
                          {nullptr, keepEarly, keepCut}, &digests);
    if (machine.addPassesToEmitFile(passes, out, nullptr,
                                    CodeGenFileType::AssemblyFile)) {
      whole.error = "the target cannot emit assembly";
      return whole;
    }
    if (!passes.reachedCut() && whole.error.empty())
      whole.error =
          ("the code generation pipeline has no pass " + cutPass).str();
    passes.run(module);
    if (passes.reachedCut() && (!keepEarly->ok || !keepCut->ok))
      whole.error = "a machine function holds what a copy leaves out";
    else if (tooBig)
      whole.error = "the machine functions would take more memory than given";
  }
  if (toAssembly)
    whole.assembly = std::move(assembly);
  if (whole.error.empty())
    whole.cut = std::move(cut);
  return whole;
}

CodegenCut::Trace CodegenCut::getTrace() const {
  Trace trace;
  for (const Kept &k : kept)
    if (k.hasCycle)
      trace.functions.push_back(k.traced);
  return trace;
}

CodegenCut::Widening CodegenCut::widenLimits(const Trace &trace) {
  // Each kept function with a cycle and its function in `trace`.
  SmallVector<std::pair<Kept *, const Trace::Function *>> pairs;
  for (Kept &k : kept) {
    if (!k.hasCycle)
      continue;
    auto other = llvm::find_if(trace.functions, [&](const Trace::Function &f) {
      return f.name == k.traced.name;
    });
    if (other == trace.functions.end() || other->digests != k.traced.digests)
      return Widening::Differs;
    pairs.emplace_back(&k, &*other);
  }
  bool widened = false;
  std::lock_guard<std::mutex> lock(limitsMutex);
  for (auto [keptFunction, other] : pairs) {
    Kept &k = *keptFunction;
    if (other->limits.size() != k.lowLimits.size())
      continue;
    // Each half of the limits (pressureLimits()) grows on its own:
    // MachineLICM's checks read only the target's, MachineSink's only
    // RegisterClassInfo's.
    size_t half = k.lowLimits.size() / 2;
    for (size_t from : {size_t(0), half}) {
      ArrayRef<unsigned> limits = ArrayRef(other->limits).slice(from, half);
      ArrayRef<unsigned> low = ArrayRef(k.lowLimits).slice(from, half);
      ArrayRef<unsigned> high = ArrayRef(k.highLimits).slice(from, half);
      std::vector<unsigned> &grown =
          isBelowOrEqual(limits, low) ? k.lowLimits : k.highLimits;
      if (limits == low || limits == high ||
          !(isBelowOrEqual(limits, low) || isBelowOrEqual(high, limits)))
        continue;
      llvm::copy(limits, grown.begin() + from);
      widened = true;
    }
  }
  return widened ? Widening::Widened : Widening::Unchanged;
}

struct CodegenCut::Destination {
  TargetMachine &machine;
  Module &module;
  /// The kept function of each of the module's functions that has one.
  DenseMap<const Function *, const Kept *> kept;
  /// A copy of a kept machine function (`kept.machineFunction` or
  /// `kept.early`) for `function` of the module.
  function_ref<std::unique_ptr<MachineFunction>(
      const MachineFunction &kept, const Function &function, MCContext &ctx)>
      copy;
};

std::optional<SmallString<0>> CodegenCut::run(Point from, Point to,
                                              Refusal &refusal, Trace *trace) {
  if (!names && !kept.empty())
    names = std::make_unique<PerTargetMIParsingState>(
        kept.front().machineFunction->getSubtarget());
  auto copy = [&](const MachineFunction &mf, const Function &, MCContext &ctx) {
    return copyMachineFunction(mf, ctx, names.get());
  };
  Destination here{machine, module, {}, copy};
  for (const Kept &k : kept)
    here.kept[k.function] = &k;
  return runOn(here, from, to, refusal, trace);
}

std::optional<SmallString<0>> CodegenCut::runOn(const Destination &at,
                                                Point from, Point to,
                                                Refusal &refusal,
                                                Trace *trace) const {
  refusal = Refusal::None;
  auto *mmi = new MachineModuleInfoWrapperPass(&at.machine);
  bool fromEarly = from == Point::Early;
  // From the cut, the pressure limits first, on copies made and dropped one
  // at a time: the pipeline is built only for a continuation that goes
  // ahead.
  for (auto [function, k] : at.kept) {
    if (fromEarly || !k->hasCycle)
      continue;
    std::unique_ptr<MachineFunction> copy =
        at.copy(*k->machineFunction, *function, mmi->getMMI().getContext());
    std::vector<unsigned> limits;
    if (copy)
      limits = pressureLimits(*copy);
    bool within;
    {
      std::lock_guard<std::mutex> lock(limitsMutex);
      within = isWithin(k->lowLimits, limits, k->highLimits);
    }
    if (!copy || !within) {
      delete mmi;
      refusal = copy ? Refusal::PressureLimits : Refusal::Copy;
      return std::nullopt;
    }
  }
  auto source = [&](const Function &f,
                    MCContext &ctx) -> std::unique_ptr<MachineFunction> {
    const Kept *k = at.kept.lookup(&f);
    if (!k)
      return nullptr;
    return at.copy(fromEarly ? *k->early : *k->machineFunction, f, ctx);
  };
  auto *insert = new InsertMachineFunctions(source);
  // From the early point: what its passes made of each function with a
  // cycle, at the cut.
  DigestMachineFunctions::Digests digests;
  auto sink = [&](MachineFunction &mf) {
    if (hasCycle(mf))
      trace->functions.push_back(traceAtCut(mf, digests));
    return true;
  };
  std::array<Pass *, 3> points = {nullptr, nullptr, nullptr};
  points[static_cast<size_t>(from)] = insert;
  if (fromEarly && trace)
    points[static_cast<size_t>(Point::Cut)] = new KeepMachineFunctions(sink);
  SmallString<0> assembly;
  {
    raw_svector_ostream stream(assembly);
    buffer_ostream out(stream);
    CutPassManager passes(cutPassId, from, to, points,
                          fromEarly && trace ? &digests : nullptr);
    if (at.machine.addPassesToEmitFile(passes, out, nullptr,
                                       CodeGenFileType::AssemblyFile,
                                       /*DisableVerify=*/true, mmi) ||
        !passes.reachedCut()) {
      refusal = Refusal::Pipeline;
      return std::nullopt;
    }
    passes.run(at.module);
    if (!insert->ok) {
      refusal = Refusal::Copy;
      return std::nullopt;
    }
  }
  return assembly;
}

namespace {
/// Calls `visit` on the module's globals, functions, the arguments of its
/// definitions, their blocks and instructions, in their order: a copy of the
/// module read from its bitcode gives the same sequence.
void forEachRoot(Module &module, function_ref<void(Value &)> visit) {
  for (GlobalVariable &g : module.globals())
    visit(g);
  for (Function &f : module)
    visit(f);
  for (GlobalAlias &a : module.aliases())
    visit(a);
  for (GlobalIFunc &i : module.ifuncs())
    visit(i);
  for (Function &f : module) {
    if (f.isDeclaration())
      continue;
    for (Argument &a : f.args())
      visit(a);
    for (BasicBlock &b : f) {
      visit(b);
      for (Instruction &i : b)
        visit(i);
    }
  }
}

/// The debug location, taken as a metadata kind of its own.
constexpr unsigned kDebugLocation = ~0u;
} // namespace

/// Where each IR entity the kept machine functions refer to lies in the
/// module: a root (forEachRoot's numbering), then through an instruction's
/// metadata of some kind, then a path of operands (a constant's, a node's).
struct CodegenCut::Portable {
  struct Place {
    unsigned root;
    /// Index into `kinds`, kDebugLocation, or none: a value.
    std::optional<unsigned> kind;
    SmallVector<unsigned, 2> path;
    /// Value::getValueID() or Metadata::getMetadataID() of the entity.
    unsigned id;
  };
  SmallString<0> bitcode;
  std::string identifier;
  std::vector<std::pair<const void *, Place>> places;
  std::vector<std::string> kinds;
  std::vector<std::string> syncScopeNames;
  /// The name of each kept function, in `kept`'s order.
  std::vector<std::string> functions;
};

bool CodegenCut::makePortable() {
  if (portable)
    return true;
  // What the kept machine functions refer to: values, then metadata nodes.
  DenseSet<const Value *> values;
  DenseSet<const Metadata *> nodes;
  auto note = [&](const MachineFunction &mf) {
    for (const MachineBasicBlock &b : mf) {
      if (const BasicBlock *block = b.getBasicBlock())
        values.insert(block);
      for (const MachineInstr &mi : b) {
        if (const DILocation *location = mi.getDebugLoc().get())
          nodes.insert(location);
        for (const MachineOperand &op : mi.operands()) {
          if (op.isGlobal())
            values.insert(op.getGlobal());
          else if (op.isMetadata())
            nodes.insert(op.getMetadata());
        }
        for (const MachineMemOperand *m : mi.memoperands()) {
          if (const auto *v =
                  dyn_cast_if_present<const Value *>(m->getPointerInfo().V))
            values.insert(v);
          AAMDNodes aa = m->getAAInfo();
          const MDNode *refs[] = {
              aa.TBAA,    aa.TBAAStruct,       aa.Scope,
              aa.NoAlias, aa.NoAliasAddrSpace, m->getRanges()};
          for (const MDNode *node : refs)
            if (node)
              nodes.insert(node);
        }
      }
    }
  };
  for (const Kept &k : kept) {
    note(*k.machineFunction);
    note(*k.early);
  }
  auto made = std::make_unique<Portable>();
  DenseMap<const void *, size_t> placed;
  auto place = [&](const void *entity, Portable::Place where) {
    if (placed.try_emplace(entity, made->places.size()).second)
      made->places.emplace_back(entity, std::move(where));
  };
  // Constants below an instruction's operands, metadata nodes below its
  // attachments: depth first, each entity at the first path found.
  std::function<void(const Value &, Portable::Place &)> walkConstant =
      [&](const Value &v, Portable::Place &where) {
        const auto *c = dyn_cast<Constant>(&v);
        if (!c || isa<GlobalValue>(c))
          return;
        if (values.count(c)) {
          where.id = c->getValueID();
          place(c, where);
        }
        for (unsigned i = 0, e = c->getNumOperands(); i < e; ++i) {
          where.path.push_back(i);
          walkConstant(*c->getOperand(i), where);
          where.path.pop_back();
        }
      };
  DenseSet<const MDNode *> seenNodes;
  std::function<void(const MDNode &, Portable::Place &)> walkNode =
      [&](const MDNode &node, Portable::Place &where) {
        if (!seenNodes.insert(&node).second)
          return;
        if (nodes.count(&node)) {
          where.id = node.getMetadataID();
          place(&node, where);
        }
        for (unsigned i = 0, e = node.getNumOperands(); i < e; ++i)
          if (const auto *inner =
                  dyn_cast_if_present<MDNode>(node.getOperand(i))) {
            where.path.push_back(i);
            walkNode(*inner, where);
            where.path.pop_back();
          }
      };
  SmallVector<StringRef> kindNames;
  module.getContext().getMDKindNames(kindNames);
  DenseMap<unsigned, unsigned> kindIndex;
  unsigned root = 0;
  forEachRoot(module, [&](Value &v) {
    unsigned here = root++;
    if (values.count(&v))
      place(&v, {here, std::nullopt, {}, v.getValueID()});
    auto *inst = dyn_cast<Instruction>(&v);
    if (!inst)
      return;
    for (unsigned i = 0, e = inst->getNumOperands(); i < e; ++i) {
      Portable::Place where{here, std::nullopt, {i}, 0};
      walkConstant(*inst->getOperand(i), where);
    }
    SmallVector<std::pair<unsigned, MDNode *>> attached;
    inst->getAllMetadata(attached);
    if (const DILocation *location = inst->getDebugLoc().get())
      attached.emplace_back(kDebugLocation, const_cast<DILocation *>(location));
    for (auto [kind, node] : attached) {
      unsigned index = kDebugLocation;
      if (kind != kDebugLocation) {
        if (kind == LLVMContext::MD_dbg)
          continue;
        auto [it, added] = kindIndex.try_emplace(kind, made->kinds.size());
        if (added)
          made->kinds.push_back(kindNames[kind].str());
        index = it->second;
      }
      seenNodes.clear();
      Portable::Place where{here, index, {}, 0};
      walkNode(*node, where);
    }
  });
  if (placed.size() != values.size() + nodes.size())
    return false;
  {
    // No symbol table: it would parse module asm, and nothing links this.
    BitcodeWriter writer(made->bitcode);
    writer.writeModule(module, /*ShouldPreserveUseListOrder=*/true);
    writer.writeStrtab();
  }
  made->identifier = module.getModuleIdentifier();
  SmallVector<StringRef> scopes;
  module.getContext().getSyncScopeNames(scopes);
  for (StringRef scope : scopes)
    made->syncScopeNames.push_back(scope.str());
  for (const Kept &k : kept)
    made->functions.push_back(k.function->getName().str());
  portable = std::move(made);
  return true;
}

std::optional<SmallString<0>>
CodegenCut::continueElsewhere(TargetMachine &there, LLVMContext &context,
                              function_ref<bool(Module &)> setAttributes,
                              Point from, Refusal &refusal,
                              Trace *trace) const {
  refusal = Refusal::Copy;
  if (!portable || kept.empty())
    return std::nullopt;
  Expected<std::unique_ptr<Module>> read = parseBitcodeFile(
      MemoryBufferRef(portable->bitcode, portable->identifier), context);
  if (!read) {
    consumeError(read.takeError());
    return std::nullopt;
  }
  Module &copy = **read;
  if (!setAttributes(copy))
    return std::nullopt;
  std::vector<Value *> roots;
  forEachRoot(copy, [&](Value &v) { roots.push_back(&v); });
  IrRemap remap;
  remap.machine = &there;
  remap.syncScopeNames = portable->syncScopeNames;
  std::vector<unsigned> kinds;
  for (const std::string &kind : portable->kinds)
    kinds.push_back(context.getMDKindID(kind));
  for (const auto &[entity, where] : portable->places) {
    if (where.root >= roots.size())
      return std::nullopt;
    Value *value = roots[where.root];
    void *found = nullptr;
    if (!where.kind) {
      for (unsigned i : where.path) {
        auto *user = dyn_cast<User>(value);
        if (!user || i >= user->getNumOperands())
          return std::nullopt;
        value = user->getOperand(i);
      }
      if (value->getValueID() != where.id)
        return std::nullopt;
      found = value;
    } else {
      auto *inst = dyn_cast<Instruction>(value);
      if (!inst)
        return std::nullopt;
      const MDNode *node = *where.kind == kDebugLocation
                               ? inst->getDebugLoc().get()
                               : inst->getMetadata(kinds[*where.kind]);
      for (unsigned i : where.path) {
        if (!node || i >= node->getNumOperands())
          return std::nullopt;
        node = dyn_cast_if_present<MDNode>(node->getOperand(i));
      }
      if (!node || node->getMetadataID() != where.id)
        return std::nullopt;
      found = const_cast<MDNode *>(node);
    }
    remap.found[entity] = found;
  }
  Destination elsewhere{there, copy, {}, nullptr};
  for (auto [k, name] : llvm::zip(kept, portable->functions)) {
    Function *f = copy.getFunction(name);
    if (!f)
      return std::nullopt;
    elsewhere.kept[f] = &k;
  }
  const TargetSubtargetInfo *subtarget =
      there.getSubtargetImpl(*elsewhere.kept.begin()->first);
  PerTargetMIParsingState names(*subtarget);
  auto copyTo = [&](const MachineFunction &mf, const Function &f,
                    MCContext &ctx) {
    remap.function = const_cast<Function *>(&f);
    return copyMachineFunction(mf, ctx, &names, &remap);
  };
  elsewhere.copy = copyTo;
  return runOn(elsewhere, from, Point::End, refusal, trace);
}

std::optional<SmallString<0>> CodegenCut::continueToAssembly(Refusal &refusal) {
  return run(Point::Cut, Point::End, refusal, nullptr);
}

std::optional<SmallString<0>> CodegenCut::continueFromEarly(Refusal &refusal,
                                                            Trace &trace) {
  return run(Point::Early, Point::End, refusal, &trace);
}

std::optional<CodegenCut::Trace> CodegenCut::traceFromEarly() {
  Trace trace;
  Refusal refusal;
  if (!run(Point::Early, Point::Cut, refusal, &trace))
    return std::nullopt;
  return trace;
}

} // namespace fly
