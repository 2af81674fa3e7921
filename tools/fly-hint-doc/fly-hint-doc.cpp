//===- fly-hint-doc.cpp - Print the hint table from the registry ----------===//
//
//   fly-hint-doc              the Markdown table of README.md's "Hints"
//   fly-hint-doc --document   the "Hints" section of docs/Passes.md
//   fly-hint-doc --accepted   the list diagnostics give for an unknown hint
//
// All three come from the one hint registry (fly/Hints/HintRegistry.h);
// scripts/update-hint-table.sh writes the table into README.md.
//
//===----------------------------------------------------------------------===//

#include "fly/Hints/HintRegistry.h"
#include "fly/Support/ToolHelp.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory docCategory("fly-hint-doc options");
static cl::opt<bool>
    documentOpt("document",
                cl::desc("Print the Markdown section of docs/Passes.md "
                         "(default: off, the table alone)"),
                cl::cat(docCategory));
static cl::opt<bool>
    acceptedOpt("accepted",
                cl::desc("Print the accepted hints as diagnostics list them "
                         "(default: off)"),
                cl::cat(docCategory));

int main(int argc, char **argv) {
  fly::addVersionPrinter();
  fly::hideUnrelatedOptions({&docCategory});
  cl::ParseCommandLineOptions(argc, argv,
                              "fly-hint-doc: the hint table, generated from "
                              "fly's hint registry\n");
  if (acceptedOpt)
    outs() << fly::acceptedHintsHelp() << "\n";
  else if (documentOpt)
    outs() << fly::printHintDocument();
  else
    outs() << fly::printHintTable();
  return 0;
}
