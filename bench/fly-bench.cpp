//===- fly-bench.cpp - Side-by-side sweep benchmark -----------------------===//
//
//   fly-bench --input=k.mlir --target=rocdl:gfx942 --toolkit=DIR
//             --hints-file=h.json --n=8,16 --reps=5 --json=out.json
//
// Compiles one input under N hint sets in several ways and reports each as a
// ratio to the naive way and to the ideal:
//
//   naive     N full compiles (parse + prefix + hints + binary pass each)
//   text      prefix once; per variant print the pre-binary module to text,
//             parse it, apply the hints, run the binary pass (the prototype)
//   serial    fly::SplitCompiler, jobs=1, cache off
//   parallel  fly::SplitCompiler, jobs=P (hardware threads), cache off
//   isolated  the same with the isolated executor (fly-tune's default): each
//             variant replayed alone, P at a time, on a thread pool
//   process   the same with the process executor (the C API's default): P
//             child fly-tune processes, each replaying its shard of the
//             variants from the snapshot and plan in a work directory
//   warm      fly::SplitCompiler, jobs=P, in a fresh process whose on-disk
//             cache holds the pre-binary module but no binaries
//   serial-plain, parallel-plain
//             serial and parallel with reuseIsa = false: every variant runs
//             the whole gpu-module-to-binary (fly before reuse-isa). The
//             modes above run with SplitCompiler's default, reuseIsa = true
//             (what ships): NVVM variants that differ only in maxnreg /
//             ptxas options share one PTX compile and each runs only ptxas;
//             ROCDL variants are linked with lld in-process
//   ideal     T_pre + sum_i T_bin(i) / P, from single-pass timings (singles)
//             of the plain gpu-module-to-binary
//   capacity  P copies of `serial-plain` at once: how much parallel
//             speed-up the machine gives independent processes right now
//
// Every mode of every repetition runs in its own child process (this binary,
// re-executed with --child=MODE), so peak RSS is per mode (VmHWM of the child,
// and ru_maxrss from wait4, which also covers ptxas / ld.lld), and modes of
// one repetition run side by side, in an order rotated per repetition.
// Medians over repetitions are reported; ratios are medians of per-repetition
// ratios (paired), which is what survives a noisy machine.
//
//===----------------------------------------------------------------------===//

#include "fly/Compiler/Registration.h"
#include "fly/Compiler/SplitCompiler.h"
#include "fly/Hints/ApplyHints.h"
#include "fly/Hints/HintSet.h"
#include "fly/Pipeline/SplitPipeline.h"
#include "fly/Replay/Replay.h"
#include "fly/Replay/VariantResult.h"
#include "fly/Snapshot/Snapshot.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;
namespace json = llvm::json;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

static cl::opt<std::string> inputOpt("input", cl::desc("MLIR input"),
                                     cl::Required);
static cl::opt<std::string> nameOpt("name", cl::desc("Workload label"),
                                    cl::init(""));
static cl::opt<std::string> targetOpt("target",
                                      cl::desc("rocdl:<chip> or nvvm:<sm>"),
                                      cl::init("rocdl:gfx942"));
static cl::opt<std::string>
    toolkitOpt("toolkit", cl::desc("ROCm-shaped folder or CUDA toolkit"),
               cl::init(""));
static cl::opt<std::string> hintsFileOpt("hints-file",
                                         cl::desc("JSON list of hint sets; "
                                                  "the first N are used"),
                                         cl::Required);
static cl::list<unsigned> nOpt("n", cl::desc("Hint-set counts (e.g. 8,16)"),
                               cl::CommaSeparated);
static cl::opt<unsigned> repsOpt("reps", cl::desc("Repetitions"), cl::init(5));
static cl::list<std::string> modesOpt(
    "modes",
    cl::desc("Modes (default: singles,naive,text,serial,parallel,"
             "serial-plain,parallel-plain,isolated,process,capacity,warm,"
             "one)"),
    cl::CommaSeparated);
static cl::opt<unsigned> roundsOpt("rounds",
                                   cl::desc("canonicalize,cse rounds in the "
                                            "prefix"),
                                   cl::init(3));
static cl::opt<bool>
    warmupOpt("warmup",
              cl::desc("Each child first runs one untimed full compile "
                       "(steady state); off = cold process"),
              cl::init(false));
static cl::opt<double>
    overheadMsOpt("overhead-ms",
                  cl::desc("Minimum time per overhead-loop measurement"),
                  cl::init(30));
static cl::opt<std::string> jsonOpt("json", cl::desc("Write results here"),
                                    cl::init(""));
static cl::opt<std::string> workDirOpt("work-dir",
                                       cl::desc("Scratch folder (cache dirs)"),
                                       cl::init(""));
static cl::opt<std::string>
    dedupeHintsOpt("dedupe-hints",
                   cl::desc("Extra check: hint sets with duplicates, run "
                            "with `parallel` beside --dedupe-distinct"),
                   cl::init(""));
static cl::opt<std::string>
    dedupeDistinctOpt("dedupe-distinct",
                      cl::desc("The distinct hint sets of --dedupe-hints"),
                      cl::init(""));
static cl::opt<double>
    quietOpt("quiet-threshold",
             cl::desc("Before each repetition wait until other processes use "
                      "fewer cores than this (0 = do not wait)"),
             cl::init(0.3));
static cl::opt<double> quietWaitOpt("quiet-wait-s",
                                    cl::desc("Longest wait for quiet"),
                                    cl::init(15));
static cl::opt<unsigned>
    retriesOpt("retries",
               cl::desc("Repeat a repetition (at most this often) when other "
                        "processes used more than --quiet-threshold cores "
                        "during one of its samples"),
               cl::init(1));
static cl::opt<int64_t>
    deadlineOpt("deadline",
                cl::desc("Unix time after which fly-bench neither waits for "
                         "quiet nor repeats repetitions (0 = never)"),
                cl::init(0));
// Internal: one measurement in a child process.
static cl::opt<std::string> childOpt("child", cl::Hidden, cl::init(""));
static cl::opt<unsigned> childNOpt("child-n", cl::Hidden, cl::init(0));
static cl::opt<std::string> flyTuneOpt(
    "fly-tune",
    cl::desc("The fly-tune the process executor starts (mode 'process'); "
             "default: ../bin/fly-tune beside this program"),
    cl::init(""));
static cl::opt<std::string> childOutOpt("child-out", cl::Hidden, cl::init(""));
static cl::opt<std::string> cacheDirOpt("cache-dir", cl::Hidden, cl::init(""));

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// CPU time of this process (all threads) plus the waited-for children
/// (ld.lld, ptxas), in ms: robust against other load, unlike wall time.
double cpuMsNow() {
  auto ms = [](const struct rusage &u) {
    return u.ru_utime.tv_sec * 1e3 + u.ru_utime.tv_usec / 1e3 +
           u.ru_stime.tv_sec * 1e3 + u.ru_stime.tv_usec / 1e3;
  };
  struct rusage self, children;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return ms(self) + ms(children);
}

[[noreturn]] void die(const llvm::Twine &msg) {
  llvm::errs() << "fly-bench: " << msg << "\n";
  std::exit(1);
}

std::string readFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buffer)
    die("cannot read '" + path + "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

int64_t readVmHWMKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (StringRef(line).starts_with("VmHWM:")) {
      int64_t kb = 0;
      StringRef(line).drop_front(6).trim().split(' ').first.getAsInteger(10,
                                                                         kb);
      return kb;
    }
  return -1;
}

unsigned hardwareThreads() {
  return llvm::hardware_concurrency().compute_thread_count();
}

/// Wall time spent inside the replay's pass managers, summed over their
/// runs: every pipeline that runs on a replay container (a top-level module
/// named "fly.replay"), i.e. each batch of the binary pass and, with
/// reuse-isa, each batch of ISA compiles and of fly-assemble-isa. The time
/// of the container's top-level passes, so it matches the batch times the
/// replay measures, without reconstructing its schedule (with reuse-isa a
/// variant's replayMs adds its ISA batch and its assembly batch, so distinct
/// replayMs no longer identify batches).
struct ReplayPmTime {
  std::mutex mutex;
  double ms = 0;
  int64_t runs = 0;
};

/// One per PassManager (SplitCompiler makes one per pipeline run); adds its
/// time to `total` when the pass manager goes away.
class ReplayPmTimer : public PassInstrumentation {
public:
  explicit ReplayPmTimer(ReplayPmTime &total) : total(total) {}
  ~ReplayPmTimer() override {
    if (!sawContainer)
      return;
    std::lock_guard<std::mutex> lock(total.mutex);
    total.ms += ms;
    ++total.runs;
  }

  static bool isContainer(Operation *op) {
    auto module = dyn_cast<ModuleOp>(op);
    return module && !op->getParentOp() && module.getSymName() &&
           *module.getSymName() == "fly.replay";
  }
  // Top-level passes run on the thread that called PassManager::run, one
  // after another; nested passes (other threads) never see the container.
  void runBeforePass(Pass *, Operation *op) override {
    if (isContainer(op)) {
      sawContainer = true;
      start = Clock::now();
    }
  }
  void runAfterPass(Pass *, Operation *op) override { end(op); }
  void runAfterPassFailed(Pass *, Operation *op) override { end(op); }

private:
  void end(Operation *op) {
    if (isContainer(op))
      ms += msSince(start);
  }
  ReplayPmTime &total;
  bool sawContainer = false;
  double ms = 0;
  Clock::time_point start;
};

size_t countOps(Operation *op) {
  size_t n = 0;
  op->walk([&](Operation *) { ++n; });
  return n;
}

/// The lowering preset of fly-tune, with `rounds` canonicalize,cse rounds.
std::string makePipeline(StringRef family, StringRef chip, StringRef toolkit,
                         unsigned rounds) {
  std::string cleanup;
  for (unsigned i = 0; i < rounds; ++i)
    cleanup += "canonicalize,cse,";
  std::string format = family == "rocdl" ? "fatbin" : "bin";
  std::string binary = llvm::formatv(
      "gpu-module-to-binary{{format={0} toolkit={1}}", format, toolkit);
  if (family == "rocdl")
    return llvm::formatv("builtin.module({0}rocdl-attach-target{{chip={1} O=3},"
                         "gpu.module(convert-scf-to-cf,"
                         "convert-gpu-to-rocdl{{chipset={1}}),"
                         "reconcile-unrealized-casts,{2})",
                         cleanup, chip, binary);
  return llvm::formatv("builtin.module({0}nvvm-attach-target{{chip={1} O=3},"
                       "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm),"
                       "reconcile-unrealized-casts,{2})",
                       cleanup, chip, binary);
}

std::vector<fly::HintSet> loadHints(StringRef path, unsigned n) {
  auto sets = fly::readHintSetsFile(path);
  if (!sets)
    die(llvm::toString(sets.takeError()));
  if (n && sets->size() < n)
    die(llvm::formatv("'{0}' has {1} hint sets, {2} wanted", path, sets->size(),
                      n)
            .str());
  if (n)
    sets->resize(n);
  return std::move(*sets);
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(),
                         [](double x) { return std::isnan(x); }),
          v.end());
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

//===----------------------------------------------------------------------===//
// Child side: one measurement
//===----------------------------------------------------------------------===//

class Bench {
public:
  Bench(MLIRContext &context, std::string source, std::string pipeline,
        std::vector<fly::HintSet> hints)
      : context(context), source(std::move(source)),
        pipeline(std::move(pipeline)), hints(std::move(hints)),
        loc(FileLineColLoc::get(&context, inputOpt, 0, 0)) {
    auto split = fly::splitAtBinaryPass(this->pipeline);
    if (!split)
      die(llvm::toString(split.takeError()));
    this->split = *split;
  }

  OwningOpRef<ModuleOp> parse(StringRef text) {
    OwningOpRef<ModuleOp> m =
        parseSourceString<ModuleOp>(text, ParserConfig(&context), inputOpt);
    if (!m)
      die("cannot parse the input");
    return m;
  }

  void run(ModuleOp m, StringRef passes, StringRef what) {
    if (passes.empty())
      return;
    PassManager pm(&context);
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(passes, pm, os)))
      die("cannot parse " + what + " pipeline: " + error);
    if (failed(pm.run(m)))
      die(what + " pipeline failed");
  }

  /// The binary pass as it runs for `h` on `m` (its `opts` hint merged in
  /// where it is not IR).
  const std::string &binaryPassFor(ModuleOp m, const fly::HintSet &h) {
    std::string opts = fly::getBinaryOptsHint(h, fly::getTargetedGpuModules(m));
    auto it = effective.find(opts);
    if (it != effective.end())
      return it->second;
    FailureOr<fly::BinaryPassOptions> options =
        fly::parseBinaryPass(split.binaryPass, loc);
    if (failed(options))
      die("cannot read the binary pass");
    return effective[opts] =
               fly::printBinaryPass(fly::withExtraOpts(*options, opts));
  }

  void applyHints(ModuleOp m, const fly::HintSet &h) {
    for (gpu::GPUModuleOp gm : fly::getTargetedGpuModules(m))
      if (failed(fly::applyHints(gm, h)))
        die("hints '" + h.canonical() + "' do not apply");
  }

  OwningOpRef<ModuleOp> prefix() {
    OwningOpRef<ModuleOp> m = parse(source);
    run(*m, split.prefix, "prefix");
    return m;
  }

  /// parse + prefix + hints + binary pass + suffix.
  void fullCompile(const fly::HintSet &h) {
    OwningOpRef<ModuleOp> m = prefix();
    applyHints(*m, h);
    run(*m, binaryPassFor(*m, h), "binary");
    run(*m, split.suffix, "suffix");
  }

  fly::SplitCompilerOptions compilerOptions(unsigned jobs, bool cache,
                                            fly::ExecutorKind executor,
                                            bool reuseIsa) {
    fly::SplitCompilerOptions options;
    options.jobs = jobs;
    options.executor = executor;
    options.executorOptions.childTool = flyTuneOpt;
    options.reuseIsa = reuseIsa;
    options.cache.enabled = cache;
    if (cache)
      options.cache.directory = cacheDirOpt;
    return options;
  }

  /// `reuseIsa` true is SplitCompiler's default (what ships); false is the
  /// plain replay, as before reuse-isa.
  json::Object
  runCompiler(unsigned jobs, bool cache,
              fly::ExecutorKind executor = fly::ExecutorKind::Batch,
              bool reuseIsa = true) {
    fly::SplitCompilerOptions options =
        compilerOptions(jobs, cache, executor, reuseIsa);
    ReplayPmTime pmTime;
    options.configurePassManager = [&pmTime](PassManager &pm) {
      pm.addInstrumentation(std::make_unique<ReplayPmTimer>(pmTime));
      return success();
    };
    fly::SplitCompiler compiler(context, std::move(options));
    fly::CompileJob job;
    job.source = source;
    job.sourceName = inputOpt;
    job.pipeline = pipeline;
    job.hintSets = hints;
    job.chip = targetOpt;
    Clock::time_point start = Clock::now();
    double cpu0 = cpuMsNow();
    FailureOr<fly::CompileResult> result = compiler.compile(job);
    double ms = msSince(start);
    double cpuMs = cpuMsNow() - cpu0;
    if (failed(result))
      die("SplitCompiler failed");
    // Batches share one replayMs: without reuse-isa the sum over distinct
    // batches is the time spent inside the binary pass manager (kept for
    // comparison; pm_ms below measures that directly, also with reuse-isa).
    std::vector<std::pair<double, unsigned>> batches;
    unsigned deduped = 0, fromCache = 0;
    json::Array perVariant;
    for (auto [i, v] : llvm::enumerate(result->variants)) {
      if (result->variantFromCache[i])
        ++fromCache;
      else if (v.succeeded() && v.replayMs == 0)
        ++deduped;
      else if (!llvm::is_contained(batches,
                                   std::make_pair(v.replayMs, v.replayedWith)))
        batches.push_back({v.replayMs, v.replayedWith});
      perVariant.push_back(
          json::Object{{"hints", v.hints.canonical()},
                       {"ms", v.replayMs},
                       {"with", v.replayedWith},
                       {"ok", v.succeeded()},
                       {"dup", v.duplicateOf ? json::Value(*v.duplicateOf)
                                             : json::Value(nullptr)},
                       {"isa_from", v.isaFrom ? json::Value(*v.isaFrom)
                                              : json::Value(nullptr)}});
    }
    double batchMs = 0;
    for (auto &[bms, with] : batches)
      batchMs += bms;
    return json::Object{{"ms", ms},
                        {"cpu_ms", cpuMs},
                        {"prefix_ms", result->prefixMs},
                        {"replay_ms", result->replayMs},
                        {"batch_ms", batchMs},
                        {"batches", static_cast<int64_t>(batches.size())},
                        {"pm_ms", pmTime.ms},
                        {"pm_runs", pmTime.runs},
                        {"reuse_isa", reuseIsa},
                        {"failed", result->numFailed()},
                        {"deduped", deduped},
                        {"from_cache", fromCache},
                        {"prefix_from_cache", result->prefixFromCache},
                        {"variants", std::move(perVariant)}};
  }

  /// Runs `body` until `minMs` and 3 iterations have passed; mean ms.
  template <typename F> double loop(F body) {
    unsigned iterations = 0;
    Clock::time_point start = Clock::now();
    do {
      body();
      ++iterations;
    } while (iterations < 3 || msSince(start) < overheadMsOpt);
    return msSince(start) / iterations;
  }

  json::Object singles() {
    json::Object out;
    Clock::time_point t0 = Clock::now();
    double cpu0 = cpuMsNow();
    OwningOpRef<ModuleOp> parsed = parse(source);
    double parseMs = msSince(t0);
    size_t opsIn = countOps(*parsed);
    Clock::time_point t1 = Clock::now();
    run(*parsed, split.prefix, "prefix");
    double pipelineMs = msSince(t1);
    out["t_pre_cpu"] = cpuMsNow() - cpu0;
    OwningOpRef<ModuleOp> pre = std::move(parsed);
    out["parse_ms"] = parseMs;
    out["prefix_pipeline_ms"] = pipelineMs;
    out["t_pre"] = parseMs + pipelineMs;
    out["ops_in"] = static_cast<int64_t>(opsIn);
    out["ops_prebinary"] = static_cast<int64_t>(countOps(*pre));
    out["source_bytes"] = static_cast<int64_t>(source.size());
    {
      std::string bc;
      llvm::raw_string_ostream os(bc);
      (void)writeBytecodeToFile(*pre, os);
      out["prebinary_bytecode_bytes"] = static_cast<int64_t>(bc.size());
    }

    SmallVector<gpu::GPUModuleOp> gpuModules = fly::getTargetedGpuModules(*pre);
    json::Array tBin, tHint, tRecord, tText, tBinCpu;
    double tBinSum = 0, tBinCpuSum = 0;
    int64_t objectBytes = 0;
    std::vector<fly::VariantBinary> firstBinaries;
    for (auto [i, h] : llvm::enumerate(hints)) {
      // T_bin(i): the binary pass alone on the hinted pre-binary module.
      OwningOpRef<ModuleOp> clone = cast<ModuleOp>((*pre)->clone());
      applyHints(*clone, h);
      const std::string &binary = binaryPassFor(*clone, h);
      PassManager pm(&context);
      if (failed(parsePassPipeline(binary, pm)))
        die("cannot parse the binary pass");
      Clock::time_point tb = Clock::now();
      double cpuB = cpuMsNow();
      if (failed(pm.run(*clone)))
        die("binary pass failed for '" + h.canonical() + "'");
      double ms = msSince(tb);
      double cpuMs = cpuMsNow() - cpuB;
      tBinCpu.push_back(cpuMs);
      tBinCpuSum += cpuMs;
      tBin.push_back(ms);
      tBinSum += ms;

      // Post-processing of one variant (its typed gpu.binary ops, printed,
      // and collectObjects), as the replay does it.
      fly::VariantResult record;
      tRecord.push_back(loop([&] { fly::recordBinaries(record, *clone); }));
      for (const fly::VariantObject &o : record.objects)
        if (i == 0)
          objectBytes += o.bytes.size();
      if (i == 0)
        firstBinaries = record.binaries;

      // Snapshot handling of one variant, exactly the steps of the replay's
      // buildVariant: a variant module, the gpu.modules cloned into it, the
      // hints written, the variant verified; then destroyed.
      OpBuilder b(&context);
      OwningOpRef<ModuleOp> container =
          ModuleOp::create(loc, StringRef("fly.replay"));
      std::string id = fly::getVariantId(i, h);
      tHint.push_back(loop([&] {
        b.setInsertionPointToEnd(container->getBody());
        auto variant = ModuleOp::create(b, loc, StringRef(id));
        variant->setAttr(fly::kHintsAttrName, b.getStringAttr(h.canonical()));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(variant.getBody());
        for (gpu::GPUModuleOp gm : gpuModules) {
          auto c = cast<gpu::GPUModuleOp>(b.clone(*gm));
          if (failed(fly::applyHints(c, h)))
            die("hints do not apply");
        }
        if (failed(verify(variant)))
          die("hinted variant fails verification");
        variant.erase();
      }));
      // The prototype's way: print the pre-binary module, parse it again.
      tText.push_back(loop([&] {
        std::string text;
        llvm::raw_string_ostream os(text);
        (*pre)->print(os);
        OwningOpRef<ModuleOp> again = parse(text);
      }));
    }
    // What SplitCompiler does once per compile for the main module: clone
    // the pre-binary module and build the first variant's gpu.binary ops.
    double install = loop([&] {
      OwningOpRef<ModuleOp> main = cast<ModuleOp>((*pre)->clone());
      OpBuilder builder = OpBuilder::atBlockEnd(main->getBody());
      for (const fly::VariantBinary &binary : firstBinaries)
        fly::createBinaryOp(builder, loc, binary);
    });
    out["t_bin"] = std::move(tBin);
    out["t_bin_sum"] = tBinSum;
    out["t_bin_cpu"] = std::move(tBinCpu);
    out["t_bin_cpu_sum"] = tBinCpuSum;
    out["snapshot_ms"] = std::move(tHint);
    out["record_ms"] = std::move(tRecord);
    out["text_roundtrip_ms"] = std::move(tText);
    out["main_install_ms"] = install;
    out["object_bytes"] = objectBytes;
    return out;
  }

  json::Object naive(unsigned count) {
    json::Array each;
    Clock::time_point start = Clock::now();
    double cpu0 = cpuMsNow();
    for (unsigned i = 0; i < count; ++i) {
      Clock::time_point t = Clock::now();
      fullCompile(hints[i]);
      each.push_back(msSince(t));
    }
    return json::Object{{"ms", msSince(start)},
                        {"cpu_ms", cpuMsNow() - cpu0},
                        {"each", std::move(each)}};
  }

  json::Object textRoundTrip() {
    Clock::time_point start = Clock::now();
    double cpu0 = cpuMsNow();
    OwningOpRef<ModuleOp> pre = prefix();
    double prefixMs = msSince(start);
    for (const fly::HintSet &h : hints) {
      std::string text;
      llvm::raw_string_ostream os(text);
      (*pre)->print(os);
      OwningOpRef<ModuleOp> variant = parse(text);
      applyHints(*variant, h);
      run(*variant, binaryPassFor(*variant, h), "binary");
    }
    return json::Object{{"ms", msSince(start)},
                        {"cpu_ms", cpuMsNow() - cpu0},
                        {"prefix_ms", prefixMs}};
  }

  MLIRContext &context;
  std::string source, pipeline;
  std::vector<fly::HintSet> hints;
  Location loc;
  fly::SplitPipeline split;
  std::map<std::string, std::string> effective;
};

int childMain(StringRef mode) {
  Clock::time_point processStart = Clock::now();
  DialectRegistry registry;
  fly::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto [family, chip] = StringRef(targetOpt).split(':');
  std::string pipeline = makePipeline(family, chip, toolkitOpt, roundsOpt);
  unsigned n = mode == "one" ? 1 : childNOpt;
  Bench bench(context, readFile(inputOpt), pipeline,
              loadHints(hintsFileOpt, n));
  double setupMs = msSince(processStart);
  if (warmupOpt)
    bench.fullCompile(fly::HintSet());

  json::Object out;
  if (mode == "singles")
    out = bench.singles();
  else if (mode == "naive" || mode == "one")
    out = bench.naive(bench.hints.size());
  else if (mode == "text")
    out = bench.textRoundTrip();
  else if (mode == "serial")
    out = bench.runCompiler(1, false);
  else if (mode == "parallel")
    out = bench.runCompiler(0, false);
  else if (mode == "serial-plain")
    out = bench.runCompiler(1, false, fly::ExecutorKind::Batch,
                            /*reuseIsa=*/false);
  else if (mode == "parallel-plain")
    out = bench.runCompiler(0, false, fly::ExecutorKind::Batch,
                            /*reuseIsa=*/false);
  else if (mode == "isolated")
    out = bench.runCompiler(0, false, fly::ExecutorKind::Isolated);
  else if (mode == "process")
    out = bench.runCompiler(0, false, fly::ExecutorKind::Process);
  else if (mode == "warm-prep" || mode == "warm")
    out = bench.runCompiler(0, true);
  else
    die("unknown mode '" + mode + "'");
  out["setup_ms"] = setupMs;
  out["vmhwm_kib"] = readVmHWMKiB();
  out["threads"] = context.isMultithreadingEnabled()
                       ? static_cast<int64_t>(context.getNumThreads())
                       : 1;
  std::error_code ec;
  llvm::raw_fd_ostream os(childOutOpt, ec);
  if (ec)
    die("cannot write " + childOutOpt);
  os << json::Value(std::move(out)) << "\n";
  return 0;
}

//===----------------------------------------------------------------------===//
// Parent side: children, side by side
//===----------------------------------------------------------------------===//

struct Sample {
  json::Object data;
  double wallMs = 0;
  int64_t maxrssKiB = 0;
  /// CPU the child (and the ptxas / ld.lld it waited for) used, and CPU
  /// everything else on the machine used meanwhile, in cores on average.
  double childCpuMs = 0;
  double foreignCores = 0;
};

/// Busy and total jiffies of all CPUs, from /proc/stat.
std::pair<uint64_t, uint64_t> readCpuJiffies() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  uint64_t v, busy = 0, total = 0;
  stat >> cpu;
  for (int i = 0; i < 8 && stat >> v; ++i) {
    total += v;
    if (i != 3 && i != 4) // idle, iowait
      busy += v;
  }
  return {busy, total};
}

double jiffyMs() { return 1000.0 / sysconf(_SC_CLK_TCK); }

/// Whether there is still time to wait for quiet and repeat noisy reps.
bool beforeDeadline() {
  return deadlineOpt == 0 || std::time(nullptr) < deadlineOpt;
}

/// Waits (at most `maxSeconds`) until other processes use less than
/// `threshold` cores, so that a repetition does not start inside someone
/// else's build. Returns the seconds waited.
double waitForQuiet(double threshold, double maxSeconds) {
  Clock::time_point start = Clock::now();
  while (msSince(start) < maxSeconds * 1000) {
    auto [b0, t0] = readCpuJiffies();
    usleep(250000);
    auto [b1, t1] = readCpuJiffies();
    if ((b1 - b0) * jiffyMs() / 250.0 < threshold)
      break;
  }
  return msSince(start) / 1000;
}

std::string selfPath;

/// Runs `copies` children of `mode` at once and waits for all of them.
std::vector<Sample> spawnMany(StringRef mode, unsigned n, StringRef hintsFile,
                              StringRef cacheDir, unsigned copies) {
  std::vector<std::string> outPaths(copies);
  std::vector<pid_t> pids(copies);
  llvm::outs().flush();
  llvm::errs().flush();
  Clock::time_point start = Clock::now();
  auto [busy0, total0] = readCpuJiffies();
  for (unsigned c = 0; c < copies; ++c) {
    llvm::SmallString<128> outPath;
    llvm::sys::fs::createTemporaryFile("fly-bench", "json", outPath);
    outPaths[c] = std::string(outPath);
    std::vector<std::string> args = {
        selfPath,
        "--child=" + mode.str(),
        "--input=" + inputOpt,
        "--target=" + targetOpt,
        "--toolkit=" + toolkitOpt,
        "--hints-file=" + hintsFile.str(),
        "--child-n=" + std::to_string(n),
        "--rounds=" + std::to_string(roundsOpt),
        "--warmup=" + std::string(warmupOpt ? "true" : "false"),
        "--overhead-ms=" + std::to_string(overheadMsOpt),
        "--child-out=" + outPaths[c],
    };
    if (!flyTuneOpt.empty())
      args.push_back("--fly-tune=" + flyTuneOpt);
    if (!cacheDir.empty())
      args.push_back("--cache-dir=" + cacheDir.str());
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    pids[c] = fork();
    if (pids[c] < 0)
      die("fork failed");
    if (pids[c] == 0) {
      execv(selfPath.c_str(), argv.data());
      _exit(127);
    }
  }
  std::vector<Sample> samples(copies);
  double childCpuSum = 0;
  for (unsigned c = 0; c < copies; ++c) {
    Sample &s = samples[c];
    int status = 0;
    struct rusage usage;
    if (wait4(pids[c], &status, 0, &usage) != pids[c])
      die("wait4 failed");
    s.wallMs = msSince(start);
    s.maxrssKiB = usage.ru_maxrss;
    s.childCpuMs = usage.ru_utime.tv_sec * 1e3 + usage.ru_utime.tv_usec / 1e3 +
                   usage.ru_stime.tv_sec * 1e3 + usage.ru_stime.tv_usec / 1e3;
    childCpuSum += s.childCpuMs;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      die("cannot execute '" + selfPath + "' for child '" + mode + "'");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      die("child '" + mode + "' failed (status " + llvm::Twine(status) + ")");
    std::string text = readFile(outPaths[c]);
    llvm::sys::fs::remove(outPaths[c]);
    llvm::Expected<json::Value> value = json::parse(text);
    if (!value || !value->getAsObject())
      die("child '" + mode + "' wrote no JSON");
    s.data = std::move(*value->getAsObject());
  }
  double wall = msSince(start);
  auto [busy1, total1] = readCpuJiffies();
  for (Sample &s : samples)
    s.foreignCores =
        std::max(0.0, (busy1 - busy0) * jiffyMs() - childCpuSum) / wall;
  return samples;
}

Sample spawn(StringRef mode, unsigned n, StringRef hintsFile,
             StringRef cacheDir = "") {
  return std::move(spawnMany(mode, n, hintsFile, cacheDir, 1).front());
}

double num(const json::Object &o, StringRef key) {
  return o.getNumber(key).value_or(NAN);
}

/// JSON has no NaN: a value that could not be computed is null.
void sanitize(json::Value &v) {
  if (json::Object *o = v.getAsObject()) {
    for (auto &entry : *o)
      sanitize(entry.second);
  } else if (json::Array *a = v.getAsArray()) {
    for (json::Value &e : *a)
      sanitize(e);
  } else if (std::optional<double> d = v.getAsNumber();
             d && !std::isfinite(*d)) {
    v = nullptr;
  }
}

json::Value sampleToJSON(Sample &s) {
  json::Object o = s.data;
  o["wall_ms"] = s.wallMs;
  o["maxrss_kib"] = s.maxrssKiB;
  o["child_cpu_ms"] = s.childCpuMs;
  o["foreign_cores"] = s.foreignCores;
  return o;
}

/// The modes that get a summary (ratios to naive and the ideals) and a line
/// of the console table.
constexpr StringRef kSummaryModes[] = {
    "naive",          "text",     "serial",  "parallel", "serial-plain",
    "parallel-plain", "isolated", "process", "warm"};

std::string fmtRatio(double r) {
  return std::isnan(r) ? "-" : llvm::formatv("{0:f2}", r).str();
}

int parentMain() {
  auto [family, chip] = StringRef(targetOpt).split(':');
  if ((family != "rocdl" && family != "nvvm") || chip.empty())
    die("--target must be rocdl:<chip> or nvvm:<sm>");
  std::string label = nameOpt.empty()
                          ? std::string(llvm::sys::path::filename(inputOpt))
                          : std::string(nameOpt);
  json::Object report{{"name", label},
                      {"input", inputOpt},
                      {"target", targetOpt},
                      {"P", hardwareThreads()},
                      {"reps", repsOpt.getValue()},
                      {"warmup", warmupOpt.getValue()},
                      {"rounds", roundsOpt.getValue()}};
  auto writeReport = [&](json::Object r) {
    if (jsonOpt.empty())
      return;
    std::error_code ec;
    llvm::raw_fd_ostream os(jsonOpt, ec);
    if (ec)
      die("cannot write " + jsonOpt);
    json::Value value(std::move(r));
    sanitize(value);
    os << llvm::formatv("{0:2}", value) << "\n";
  };
  // NVVM needs ptxas; skip cleanly without it.
  if (family == "nvvm") {
    llvm::SmallString<256> ptxas(toolkitOpt);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    if (toolkitOpt.empty() || !llvm::sys::fs::can_execute(ptxas)) {
      llvm::outs() << "fly-bench: skipping " << label << " on " << targetOpt
                   << ": no ptxas under '" << toolkitOpt << "'\n";
      report["skipped"] = "no ptxas under '" + toolkitOpt + "'";
      writeReport(std::move(report));
      return 0;
    }
  }
  std::string pipeline = makePipeline(family, chip, toolkitOpt, roundsOpt);
  report["pipeline"] = pipeline;

  std::vector<std::string> modes(modesOpt.begin(), modesOpt.end());
  if (modes.empty())
    modes = {"singles",  "naive",        "text",           "serial",
             "parallel", "serial-plain", "parallel-plain", "isolated",
             "process",  "capacity",     "warm",           "one"};
  std::vector<unsigned> ns(nOpt.begin(), nOpt.end());
  if (ns.empty())
    ns = {8, 16};
  unsigned P = hardwareThreads();

  llvm::SmallString<256> work(workDirOpt);
  if (work.empty())
    llvm::sys::fs::createUniqueDirectory("fly-bench", work);
  llvm::sys::fs::create_directories(work);

  json::Array runs;
  double capacityPeff = NAN;
  for (unsigned n : ns) {
    std::map<std::string, std::vector<Sample>> samples;
    unsigned discarded = 0;
    double waited = 0;
    std::vector<double> foreign;
    for (unsigned rep = 0, tries = 0; rep < repsOpt;) {
      if (quietOpt > 0 && beforeDeadline())
        waited += waitForQuiet(quietOpt, quietWaitOpt);
      std::map<std::string, Sample> got;
      for (size_t k = 0; k < modes.size(); ++k) {
        const std::string &mode = modes[(k + rep) % modes.size()];
        if (mode == "one" && n != ns.front()) {
          continue; // Independent of N: measured with the first N only.
        }
        if (mode == "capacity") {
          // What this machine gives P independent single-threaded compiles
          // right now: P copies of serial-plain at once (the plain binary
          // pass, the work whose sum T_bin the ideal divides by P).
          std::vector<Sample> group =
              spawnMany("serial-plain", n, hintsFileOpt, "", P);
          Sample s;
          json::Array each;
          double slowest = 0;
          for (Sample &g : group) {
            s.wallMs = std::max(s.wallMs, g.wallMs);
            s.maxrssKiB = std::max(s.maxrssKiB, g.maxrssKiB);
            s.childCpuMs += g.childCpuMs;
            s.foreignCores = g.foreignCores;
            each.push_back(num(g.data, "ms"));
            slowest = std::max(slowest, num(g.data, "ms"));
          }
          s.data["ms"] = slowest;
          s.data["each"] = std::move(each);
          got[mode] = std::move(s);
          continue;
        }
        if (mode == "warm") {
          // A cache holding only the prefix. Filled once per N by a process
          // of its own (FLY_CACHE_DIR=<pristine>), whose binaries are then
          // deleted; every repetition gets a fresh copy of what is left.
          llvm::SmallString<256> pristine(work), dir(work);
          llvm::sys::path::append(pristine,
                                  "cache-prefix-only-" + std::to_string(n));
          llvm::sys::path::append(dir, "cache");
          if (!llvm::sys::fs::exists(pristine)) {
            llvm::sys::fs::create_directories(pristine);
            (void)spawn("warm-prep", n, hintsFileOpt, pristine);
            std::error_code ec;
            for (llvm::sys::fs::directory_iterator it(pristine, ec), end;
                 it != end && !ec; it.increment(ec))
              if (llvm::sys::path::filename(it->path())
                      .starts_with("llvmcache-binary-"))
                llvm::sys::fs::remove(it->path());
          }
          llvm::sys::fs::remove_directories(dir);
          llvm::sys::fs::create_directories(dir);
          std::error_code ec;
          for (llvm::sys::fs::directory_iterator it(pristine, ec), end;
               it != end && !ec; it.increment(ec)) {
            llvm::SmallString<256> to(dir);
            llvm::sys::path::append(to, llvm::sys::path::filename(it->path()));
            if (llvm::sys::fs::copy_file(it->path(), to))
              die("cannot copy " + it->path());
          }
          got[mode] = spawn("warm", n, hintsFileOpt, dir);
          continue;
        }
        got[mode] = spawn(mode, n, hintsFileOpt);
      }
      double worst = 0;
      for (auto &[mode, sample] : got)
        worst = std::max(worst, sample.foreignCores);
      bool noisy = quietOpt > 0 && worst > quietOpt && beforeDeadline();
      llvm::outs() << llvm::formatv(
          "  {0} {1} N={2}: rep {3}/{4} done (other load up to {5:f2} "
          "cores{6})\n",
          label, targetOpt, n, rep + 1, repsOpt, worst,
          noisy && tries < retriesOpt ? ", repeating it" : "");
      llvm::outs().flush();
      if (noisy && tries < retriesOpt) {
        ++tries;
        ++discarded;
        continue;
      }
      for (auto &[mode, sample] : got) {
        foreign.push_back(sample.foreignCores);
        samples[mode].push_back(std::move(sample));
      }
      ++rep;
      tries = 0;
    }

    // Summary: medians, and medians of per-repetition ratios.
    auto ms = [&](StringRef mode, unsigned rep) -> double {
      auto it = samples.find(mode.str());
      if (it == samples.end() || rep >= it->second.size())
        return NAN;
      return num(it->second[rep].data, "ms");
    };
    auto ideal = [&](unsigned rep, unsigned p) -> double {
      auto it = samples.find("singles");
      if (it == samples.end() || rep >= it->second.size())
        return NAN;
      const json::Object &s = it->second[rep].data;
      return num(s, "t_pre") + num(s, "t_bin_sum") / p;
    };
    json::Object summary;
    summary["discarded_reps"] = discarded;
    summary["quiet_wait_s"] = waited;
    summary["foreign_cores_median"] = median(foreign);
    summary["foreign_cores_max"] =
        foreign.empty() ? 0.0
                        : *std::max_element(foreign.begin(), foreign.end());
    std::vector<double> idealP, ideal1;
    for (unsigned rep = 0; rep < repsOpt; ++rep) {
      idealP.push_back(ideal(rep, P));
      ideal1.push_back(ideal(rep, 1));
    }
    summary["ideal_P_ms"] = median(idealP);
    summary["ideal_1_ms"] = median(ideal1);
    // Effective parallelism of the machine for this work, from the capacity
    // samples: P x serial-plain alone / P serial-plain copies at once.
    {
      capacityPeff = NAN;
      std::vector<double> peff;
      if (samples.count("capacity") && samples.count("serial-plain"))
        for (unsigned rep = 0; rep < repsOpt; ++rep)
          peff.push_back(P * ms("serial-plain", rep) / ms("capacity", rep));
      if (!peff.empty())
        capacityPeff = median(peff);
      if (!std::isnan(capacityPeff)) {
        summary["P_eff"] = capacityPeff;
        std::vector<double> idealE, toIdealE, plainToIdealE;
        for (unsigned rep = 0; rep < repsOpt; ++rep) {
          const json::Object &si = samples["singles"][rep].data;
          double e = num(si, "t_pre") + num(si, "t_bin_sum") / capacityPeff;
          idealE.push_back(e);
          if (samples.count("parallel"))
            toIdealE.push_back(ms("parallel", rep) / e);
          if (samples.count("parallel-plain"))
            plainToIdealE.push_back(ms("parallel-plain", rep) / e);
        }
        summary["ideal_P_eff_ms"] = median(idealE);
        summary["parallel_x_ideal_P_eff"] = median(toIdealE);
        summary["parallel_plain_x_ideal_P_eff"] = median(plainToIdealE);
      }
    }
    // What the batching costs even with perfect per-variant scaling, for the
    // plain replay (reuse-isa off: each variant one whole binary pass, the
    // T_bin that singles measures): replayVariants groups the hint sets by
    // the `opts` that stay a pass option (getBinaryOptsHint) and compiles
    // each group in batches; the P threads of the pool take a batch's
    // variants in order as they become free, and a batch ends with its last
    // variant. T_pre + sum over batches of that schedule's makespan, for
    // batches of P (as SplitCompiler asked before) and of min(group, 4P)
    // (as now). With reuse-isa the work itself is smaller, so no bound.
    if (samples.count("singles")) {
      std::vector<fly::HintSet> hs = loadHints(hintsFileOpt, n);
      std::vector<std::pair<std::string, std::vector<unsigned>>> groups;
      for (unsigned i = 0; i < hs.size(); ++i) {
        // On NVVM the `opts` hint is IR (the target's ptxas-cmd-options),
        // so every variant shares one binary pass instance: one group.
        // Except with -32, which the library keeps a pass option.
        std::string opts = hs[i].lookup("opts").value_or("").str();
        if (StringRef(targetOpt).starts_with("nvvm:")) {
          llvm::SmallVector<StringRef> tokens;
          StringRef(opts).split(tokens, ' ', -1, /*KeepEmpty=*/false);
          if (!llvm::is_contained(tokens, "-32"))
            opts.clear();
        }
        auto g =
            llvm::find_if(groups, [&](auto &x) { return x.first == opts; });
        if (g == groups.end())
          g = groups.insert(groups.end(), {opts, {}});
        g->second.push_back(i);
      }
      auto schedule = [&](const json::Array &tb, size_t batchOf) {
        double t = 0;
        for (auto &[opts, idx] : groups) {
          size_t batch = std::max<size_t>(P, std::min(idx.size(), batchOf));
          for (size_t b = 0; b < idx.size(); b += batch) {
            std::vector<double> free(P, 0.0);
            for (size_t k = b; k < std::min(idx.size(), b + batch); ++k) {
              auto first = std::min_element(free.begin(), free.end());
              *first += tb[idx[k]].getAsNumber().value_or(0);
            }
            t += *std::max_element(free.begin(), free.end());
          }
        }
        return t;
      };
      std::vector<double> batchedP, batched4P, toBatched, plainToBatched;
      for (unsigned rep = 0; rep < repsOpt; ++rep) {
        const json::Object &si = samples["singles"][rep].data;
        const json::Array *tb = si.getArray("t_bin");
        batchedP.push_back(num(si, "t_pre") + schedule(*tb, P));
        batched4P.push_back(num(si, "t_pre") + schedule(*tb, 4 * P));
        if (samples.count("parallel"))
          toBatched.push_back(ms("parallel", rep) / batched4P.back());
        if (samples.count("parallel-plain"))
          plainToBatched.push_back(ms("parallel-plain", rep) /
                                   batched4P.back());
      }
      summary["ideal_batches_of_P_ms"] = median(batchedP);
      summary["ideal_batches_of_4P_ms"] = median(batched4P);
      summary["parallel_x_ideal_batches_of_4P"] = median(toBatched);
      summary["parallel_plain_x_ideal_batches_of_4P"] = median(plainToBatched);
      int64_t nb = 0;
      for (auto &[opts, idx] : groups) {
        size_t batch = std::max<size_t>(P, std::min<size_t>(idx.size(), 4 * P));
        nb += (idx.size() + batch - 1) / batch;
      }
      summary["batches_expected"] = nb;
    }
    for (StringRef mode : kSummaryModes) {
      if (!samples.count(mode.str()))
        continue;
      std::vector<double> abs, toNaive, toIdeal1, toIdealP, rss, hwm, wall, cpu,
          workCpu, cpuToIdeal1, cpuToNaive, outside;
      for (unsigned rep = 0; rep < repsOpt; ++rep) {
        double t = ms(mode, rep);
        abs.push_back(t);
        toNaive.push_back(t / ms("naive", rep));
        toIdeal1.push_back(t / ideal(rep, 1));
        toIdealP.push_back(t / ideal(rep, P));
        Sample &s = samples[mode.str()][rep];
        rss.push_back(s.maxrssKiB);
        hwm.push_back(num(s.data, "vmhwm_kib"));
        wall.push_back(s.wallMs);
        cpu.push_back(s.childCpuMs);
        // Time of a SplitCompiler mode that is neither phase 1 nor inside
        // the replay's pass managers (snapshot handling, keys, results, main
        // module): measured in-process, so immune to other load. Not for
        // isolated replays, whose pass managers overlap in time.
        if (s.data.get("pm_ms") && mode != "isolated" && mode != "process")
          outside.push_back(
              (t - num(s.data, "prefix_ms") - num(s.data, "pm_ms")) / t);
        double c = num(s.data, "cpu_ms");
        workCpu.push_back(c);
        if (samples.count("naive"))
          cpuToNaive.push_back(c / num(samples["naive"][rep].data, "cpu_ms"));
        if (samples.count("singles")) {
          const json::Object &si = samples["singles"][rep].data;
          cpuToIdeal1.push_back(
              c / (num(si, "t_pre_cpu") + num(si, "t_bin_cpu_sum")));
        }
      }
      auto range = [](std::vector<double> v) {
        v.erase(std::remove_if(v.begin(), v.end(),
                               [](double x) { return std::isnan(x); }),
                v.end());
        if (v.empty())
          return json::Value(nullptr);
        return json::Value(json::Array{*std::min_element(v.begin(), v.end()),
                                       *std::max_element(v.begin(), v.end())});
      };
      summary[mode] = json::Object{{"ms", median(abs)},
                                   {"x_naive", median(toNaive)},
                                   {"x_ideal_1", median(toIdeal1)},
                                   {"x_ideal_P", median(toIdealP)},
                                   {"x_naive_range", range(toNaive)},
                                   {"x_ideal_1_range", range(toIdeal1)},
                                   {"x_ideal_P_range", range(toIdealP)},
                                   {"vmhwm_kib", median(hwm)},
                                   {"maxrss_kib", median(rss)},
                                   {"process_wall_ms", median(wall)},
                                   {"process_cpu_ms", median(cpu)},
                                   {"cpu_ms", median(workCpu)},
                                   {"cpu_x_naive", median(cpuToNaive)},
                                   {"cpu_x_ideal_1", median(cpuToIdeal1)},
                                   {"outside_pm_share", median(outside)}};
    }
    if (samples.count("warm")) {
      std::vector<double> load, replay, toBinP, setup;
      bool allFromCache = true;
      int64_t binaryHits = 0;
      for (unsigned rep = 0; rep < repsOpt; ++rep) {
        const json::Object &w = samples["warm"][rep].data;
        allFromCache &= w.getBoolean("prefix_from_cache").value_or(false);
        binaryHits =
            std::max(binaryHits, w.getInteger("from_cache").value_or(0));
        load.push_back(num(w, "prefix_ms"));
        replay.push_back(num(w, "replay_ms"));
        setup.push_back(num(w, "setup_ms"));
        if (samples.count("singles"))
          toBinP.push_back(
              num(w, "ms") /
              (num(samples["singles"][rep].data, "t_bin_sum") / P));
      }
      json::Object &w = *summary.getObject("warm");
      w["load_ms"] = median(load);
      w["replay_ms"] = median(replay);
      w["setup_ms"] = median(setup);
      w["x_bin_P"] = median(toBinP);
      if (!std::isnan(capacityPeff) && samples.count("singles")) {
        std::vector<double> toBinPeff;
        for (unsigned rep = 0; rep < repsOpt; ++rep)
          toBinPeff.push_back(
              (num(samples["warm"][rep].data, "ms") -
               num(samples["warm"][rep].data, "prefix_ms")) /
              (num(samples["singles"][rep].data, "t_bin_sum") / capacityPeff));
        w["x_bin_P_eff"] = median(toBinPeff);
      }
      w["phase1_from_cache_every_rep"] = allFromCache;
      w["binaries_from_cache_max"] = binaryHits;
    }
    // What reuse-isa buys: the plain mode's time over the reuse mode's, per
    // repetition (paired), wall and CPU.
    {
      json::Object reuse;
      for (auto [on, off] :
           {std::pair<StringRef, StringRef>{"serial", "serial-plain"},
            {"parallel", "parallel-plain"}}) {
        if (!samples.count(on.str()) || !samples.count(off.str()))
          continue;
        std::vector<double> wallX, cpuX;
        for (unsigned rep = 0; rep < repsOpt; ++rep) {
          wallX.push_back(ms(off, rep) / ms(on, rep));
          cpuX.push_back(num(samples[off.str()][rep].data, "cpu_ms") /
                         num(samples[on.str()][rep].data, "cpu_ms"));
        }
        reuse[(on + "_speedup").str()] = median(wallX);
        reuse[(on + "_cpu_speedup").str()] = median(cpuX);
      }
      if (!reuse.empty())
        summary["reuse_isa"] = std::move(reuse);
    }
    if (samples.count("singles")) {
      std::vector<double> tPre, parse, tBinMean, snap, rec, text, install,
          binSum;
      for (Sample &s : samples["singles"]) {
        const json::Object &d = s.data;
        tPre.push_back(num(d, "t_pre"));
        parse.push_back(num(d, "parse_ms"));
        binSum.push_back(num(d, "t_bin_sum"));
        tBinMean.push_back(num(d, "t_bin_sum") / n);
        auto mean = [&](StringRef key) {
          double sum = 0;
          const json::Array *a = d.getArray(key);
          for (const json::Value &v : *a)
            sum += v.getAsNumber().value_or(0);
          return sum / a->size();
        };
        snap.push_back(mean("snapshot_ms"));
        rec.push_back(mean("record_ms"));
        text.push_back(mean("text_roundtrip_ms"));
        install.push_back(num(d, "main_install_ms"));
      }
      const json::Object &first = samples["singles"].front().data;
      summary["singles"] = json::Object{
          {"t_pre_ms", median(tPre)},
          {"parse_ms", median(parse)},
          {"t_bin_mean_ms", median(tBinMean)},
          {"t_bin_sum_ms", median(binSum)},
          {"snapshot_ms", median(snap)},
          {"record_ms", median(rec)},
          {"text_roundtrip_ms", median(text)},
          {"main_install_ms", median(install)},
          {"prefix_share", median(tPre) / (median(tPre) + median(tBinMean))},
          {"ops_in", first.getInteger("ops_in").value_or(0)},
          {"ops_prebinary", first.getInteger("ops_prebinary").value_or(0)},
          {"source_bytes", first.getInteger("source_bytes").value_or(0)},
          {"prebinary_bytecode_bytes",
           first.getInteger("prebinary_bytecode_bytes").value_or(0)},
          {"object_bytes", first.getInteger("object_bytes").value_or(0)}};
    }
    if (samples.count("one")) {
      std::vector<double> hwm, rss, t;
      for (Sample &s : samples["one"]) {
        hwm.push_back(num(s.data, "vmhwm_kib"));
        rss.push_back(s.maxrssKiB);
        t.push_back(num(s.data, "ms"));
      }
      summary["one"] = json::Object{{"ms", median(t)},
                                    {"vmhwm_kib", median(hwm)},
                                    {"maxrss_kib", median(rss)}};
    }

    // Console table.
    llvm::outs() << llvm::formatv("\n{0} on {1}, N={2}, P={3}, {4} reps "
                                  "(medians)\n",
                                  label, targetOpt, n, P, repsOpt);
    llvm::outs() << llvm::formatv("  ideal(1) {0:f1} ms, ideal(P) {1:f1} ms\n",
                                  median(ideal1), median(idealP));
    for (StringRef mode : kSummaryModes) {
      const json::Object *m = summary.getObject(mode);
      if (!m)
        continue;
      llvm::outs() << llvm::formatv(
          "  {0,-14} {1,9:f1} ms  x naive {2,5}  x ideal(1) {3,5}  x ideal(P) "
          "{4,5}  VmHWM {5,7:f0} KiB\n",
          mode, num(*m, "ms"), fmtRatio(num(*m, "x_naive")),
          fmtRatio(num(*m, "x_ideal_1")), fmtRatio(num(*m, "x_ideal_P")),
          num(*m, "vmhwm_kib"));
    }

    if (const json::Object *r = summary.getObject("reuse_isa"))
      llvm::outs() << llvm::formatv(
          "  reuse-isa: plain / reuse = serial {0} (CPU {1}), parallel {2} "
          "(CPU {3})\n",
          fmtRatio(num(*r, "serial_speedup")),
          fmtRatio(num(*r, "serial_cpu_speedup")),
          fmtRatio(num(*r, "parallel_speedup")),
          fmtRatio(num(*r, "parallel_cpu_speedup")));

    json::Object raw;
    for (auto &[mode, list] : samples) {
      json::Array a;
      for (Sample &s : list)
        a.push_back(sampleToJSON(s));
      raw[mode] = std::move(a);
    }
    runs.push_back(json::Object{{"n", n},
                                {"summary", std::move(summary)},
                                {"samples", std::move(raw)}});
  }
  report["runs"] = std::move(runs);

  // Dedupe check: hint sets with duplicates beside their distinct subset.
  if (!dedupeHintsOpt.empty() && !dedupeDistinctOpt.empty()) {
    unsigned nDup = loadHints(dedupeHintsOpt, 0).size();
    unsigned nDistinct = loadHints(dedupeDistinctOpt, 0).size();
    std::vector<double> withDup, distinct, ratio;
    json::Array dupSamples;
    for (unsigned rep = 0; rep < repsOpt; ++rep) {
      if (quietOpt > 0 && beforeDeadline())
        waitForQuiet(quietOpt, quietWaitOpt);
      Sample a = spawn("parallel", nDup, dedupeHintsOpt);
      Sample b = spawn("parallel", nDistinct, dedupeDistinctOpt);
      withDup.push_back(num(a.data, "ms"));
      distinct.push_back(num(b.data, "ms"));
      ratio.push_back(num(a.data, "ms") / num(b.data, "ms"));
      if (rep == 0)
        dupSamples.push_back(sampleToJSON(a));
    }
    report["dedupe"] = json::Object{{"n_with_duplicates", nDup},
                                    {"n_distinct", nDistinct},
                                    {"ms_with_duplicates", median(withDup)},
                                    {"ms_distinct", median(distinct)},
                                    {"ratio", median(ratio)},
                                    {"sample", std::move(dupSamples)}};
    llvm::outs() << llvm::formatv(
        "  dedupe: {0} sets with duplicates {1:f1} ms vs {2} distinct {3:f1} "
        "ms: x{4:f2}\n",
        nDup, median(withDup), nDistinct, median(distinct), median(ratio));
  }
  if (workDirOpt.empty())
    llvm::sys::fs::remove_directories(work);
  writeReport(std::move(report));
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  cl::ParseCommandLineOptions(argc, argv,
                              "fly-bench: side-by-side sweep benchmark\n");
  selfPath = llvm::sys::fs::getMainExecutable(
      argv[0], reinterpret_cast<void *>(&msSince));
  if (!childOpt.empty())
    return childMain(childOpt);
  return parentMain();
}
