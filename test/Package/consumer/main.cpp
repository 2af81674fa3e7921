// Parses a hint set with the installed fly-snapshot and prints its canonical
// form. Only LLVM headers, so the consumer build stays quick.
#include "fly/Hints/HintSet.h"

#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  const char *text = argc > 1 ? argv[1] : "waves_per_eu=2,maxnreg=128";
  llvm::Expected<fly::HintSet> hints = fly::HintSet::parse(text);
  if (!hints) {
    llvm::errs() << "error: " << llvm::toString(hints.takeError()) << "\n";
    return 1;
  }
  llvm::outs() << "canonical: " << hints->canonical() << "\n";
  llvm::outs() << "label: " << hints->label() << "\n";
  return 0;
}
