//===- fly-opt.cpp - mlir-opt with fly-snapshot built in ------------------===//
//
// Stock mlir-opt (what it registers, upstream's test passes and dialects
// included, and its main), the fly passes registered, plus the sweep of
// --fly-hints / --fly-hints-file / --fly-out-dir or FLY_HINT_SETS /
// FLY_OUT_DIR (fly/Tool/OptDriver.h): a normal full pipeline run then yields
// one variant per hint set, with every mlir-opt flag applying to the
// replays too. Installed as an LLVM dir's bin/mlir-opt for FlyDSL.
//
//===----------------------------------------------------------------------===//

#include "fly/Compiler/Registration.h"
#include "fly/Support/ToolHelp.h"
#include "fly/Tool/OptDriver.h"
#include "fly/Transforms/Passes.h"

#include "UpstreamTestRegistration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

using namespace mlir;
namespace cl = llvm::cl;

// fly-opt's own options, listed first by --help (categories print in name
// order); LLVM's static options are behind --help-hidden.
static cl::OptionCategory flyCategory("Fly-snapshot options (fly-opt)");
static cl::opt<std::string>
    hintsOpt("fly-hints",
             cl::desc("Hint sets 'k=v,k=v;k=v': the first goes to the "
                      "pipeline's own gpu-module-to-binary, the others are "
                      "replayed (default: none, plain mlir-opt)"),
             cl::cat(flyCategory));
static cl::opt<std::string>
    hintsFileOpt("fly-hints-file",
                 cl::desc("JSON list of hint-set objects, after --fly-hints "
                          "(default: none)"),
                 cl::cat(flyCategory));
static cl::opt<std::string>
    outDirOpt("fly-out-dir",
              cl::desc("Write every variant's objects and manifest.json here "
                       "(default: none)"),
              cl::cat(flyCategory));
static cl::opt<unsigned>
    jobsOpt("jobs",
            cl::desc("Variants replayed at once (default: 0 = threads)"),
            cl::init(0), cl::cat(flyCategory));
// Refused with a pointer: --jobs is the one name.
static cl::opt<std::string> oldJobsOpt("fly-jobs",
                                       cl::desc("Removed: use --jobs"),
                                       cl::ValueOptional, cl::Hidden);
static cl::opt<bool>
    reuseIsaOpt("fly-reuse-isa",
                cl::desc("One ISA compile for hint sets that share it, then "
                         "fly-assemble-isa per variant (default: on)"),
                cl::init(true), cl::cat(flyCategory));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // LLVM's static options behind --help-hidden; mlir-opt's, registered by
  // registerAndParseCLIOptions below, stay listed.
  fly::hideUnrelatedOptions({&flyCategory});
  fly::addVersionPrinter();

  // What stock mlir-opt registers, then fly's own passes.
  registerAllPasses();
  fly::registerUpstreamTestPasses();
  fly::registerFlySnapshotPasses();
  DialectRegistry registry;
  fly::registerCompilerDialects(registry);
  fly::registerUpstreamTestDialects(registry);

  auto [inputFile, outputFile] =
      registerAndParseCLIOptions(argc, argv, "fly-opt", registry);
  if (oldJobsOpt.getNumOccurrences()) {
    llvm::errs() << "fly-opt: error: --fly-jobs was removed: use --jobs\n";
    return 1;
  }
  fly::setRocmPathFromToolkit();

  auto sweep = fly::OptSweep::create(
      {hintsOpt, hintsFileOpt, outDirOpt, jobsOpt, reuseIsaOpt});
  if (!sweep) {
    llvm::errs() << "fly-opt: error: " << llvm::toString(sweep.takeError())
                 << "\n";
    return 1;
  }
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  (*sweep)->install(config);
  LogicalResult status =
      fly::runMlirOptMain("fly-opt", inputFile, outputFile, registry, config);
  return asMainReturnCode((*sweep)->finish(status, inputFile));
}
