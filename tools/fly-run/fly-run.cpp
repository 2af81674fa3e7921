//===- fly-run.cpp - Launch, check and time every variant of a sweep ------===//
//
//   fly-run <out-dir> <launch-spec.json> [options]
//
// Loads, checks and times every variant fly-tune wrote to <out-dir> on a GPU
// and stores the winner (README.md, "fly-run"). Links LLVM's support
// libraries statically and CUDA/HIP not at all: it can travel on its own.
// The flags, read into fly::rt::RunOptions for fly/Runtime/RunDriver.h.
//
//===----------------------------------------------------------------------===//

#include "fly/Runtime/RunDriver.h"
#include "fly/Support/ToolHelp.h"

#include "llvm/Support/CommandLine.h"

using namespace llvm;
using namespace fly::rt;

namespace {

// Only fly-run's options and LLVM's generic ones (--help, --version) are
// registered: the static support libraries bring no others.
cl::list<std::string> positional(cl::Positional,
                                 cl::desc("<out-dir> <launch-spec.json>"));
cl::opt<RunBackend> backendOpt(
    "backend", cl::desc("the GPU runtime"),
    cl::values(clEnumValN(RunBackend::Auto, "auto", "the out-dir's target's"),
               clEnumValN(RunBackend::Cuda, "cuda", "CUDA (nvvm)"),
               clEnumValN(RunBackend::Hip, "hip", "HIP (rocdl)")),
    cl::init(RunBackend::Auto));
cl::opt<int> device("device", cl::desc("device ordinal"));
cl::list<std::string> only("variants", cl::CommaSeparated,
                           cl::desc("run only these variants (ids, indices)"));
cl::opt<int> warmup("warmup", cl::init(-1), cl::desc("warm-up runs"));
cl::opt<int> reps("reps", cl::init(-1), cl::desc("at least N timed runs"));
cl::opt<int> maxReps("max-reps", cl::init(-1),
                     cl::desc("at most N timed runs"));
cl::opt<double> minTimeMs("min-time-ms", cl::init(-1),
                          cl::desc("time each variant >= this many ms"));
cl::opt<std::string> bestConfigPath("best-config", cl::desc("stored winners"));
cl::opt<bool> retune("retune", cl::desc("measure even if a winner is stored"));
cl::opt<std::string> jsonOut("json", cl::desc("write the measurements here"));
cl::opt<double> variantTimeout("variant-timeout", cl::init(300),
                               cl::desc("seconds until a hung worker dies"));
cl::opt<std::string> injectFault("inject-fault", cl::desc("fault this one"));
cl::opt<bool> probeOnly("probe", cl::desc("only report the device"));
cl::opt<bool> quiet("quiet", cl::desc("no progress lines"));

} // namespace

int main(int argc, char **argv) {
  fly::addVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv,
                              "fly-run: load, check and time every variant of "
                              "a fly-tune out-dir\n\nexit status: 0 all "
                              "passed, 2 some variants excluded, 1 error, 77 "
                              "no device (skipped)\n");
  RunOptions options;
  options.arguments = positional;
  options.backend = backendOpt;
  options.device = device;
  options.only = only;
  options.warmup = warmup;
  options.reps = reps;
  options.maxReps = maxReps;
  options.minTimeMs = minTimeMs;
  options.bestConfigPath = bestConfigPath;
  options.retune = retune;
  options.jsonOut = jsonOut;
  options.variantTimeout = variantTimeout;
  options.injectFault = injectFault;
  options.probe = probeOnly;
  options.quiet = quiet;
  return runFlyRun(options);
}
