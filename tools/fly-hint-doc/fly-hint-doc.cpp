//===- fly-hint-doc.cpp - Print the hint table from the registry ----------===//
//
//   fly-hint-doc                  the Markdown table of README.md's "Hints"
//   fly-hint-doc --document       the "Hints" section of docs/Passes.md
//   fly-hint-doc --accepted       the list diagnostics give for an unknown hint
//   fly-hint-doc --hint-specs-json
//                                 the registry as JSON (flyGetHintSpecsJSON),
//                                 python/fly_snapshot/_hint_specs.json
//   fly-hint-doc --manifest-schema-properties
//                                 docs/manifest.schema.json's
//                                 hint_set.properties
//
// All come from the one hint registry (fly/Hints/HintRegistry.h);
// scripts/update-hint-table.sh writes the table into README.md and the
// other generated copies into their files.
//
//===----------------------------------------------------------------------===//

#include "fly/Hints/HintRegistry.h"
#include "fly/Support/ToolHelp.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {
enum class Output { Table, Document, Accepted, SpecsJSON, SchemaProperties };
} // namespace

static cl::OptionCategory docCategory("fly-hint-doc options");
static cl::opt<Output> outputOpt(
    cl::desc("What to print (default: the Markdown table alone)"),
    cl::init(Output::Table),
    cl::values(clEnumValN(Output::Document, "document",
                          "The Markdown section of docs/Passes.md"),
               clEnumValN(Output::Accepted, "accepted",
                          "The accepted hints as diagnostics list them"),
               clEnumValN(Output::SpecsJSON, "hint-specs-json",
                          "Every hint spec as JSON (the C API's "
                          "flyGetHintSpecsJSON, python/fly_snapshot/"
                          "_hint_specs.json)"),
               clEnumValN(Output::SchemaProperties,
                          "manifest-schema-properties",
                          "The JSON Schema of each hint's value in a manifest "
                          "(docs/manifest.schema.json's hint_set.properties)")),
    cl::cat(docCategory));

int main(int argc, char **argv) {
  fly::addVersionPrinter();
  fly::hideUnrelatedOptions({&docCategory});
  cl::ParseCommandLineOptions(argc, argv,
                              "fly-hint-doc: the hint table, generated from "
                              "fly's hint registry\n");
  switch (outputOpt) {
  case Output::Table:
    outs() << fly::printHintTable();
    break;
  case Output::Document:
    outs() << fly::printHintDocument();
    break;
  case Output::Accepted:
    outs() << fly::acceptedHintsHelp() << "\n";
    break;
  case Output::SpecsJSON:
    outs() << fly::printHintSpecsJSON();
    break;
  case Output::SchemaProperties:
    outs() << fly::printManifestSchemaHintProperties();
    break;
  }
  return 0;
}
