//===- SweepReport.h - The manifest's top level for one compile -*- C++ -*-===//
//
// fly-tune and the C API write the same out-dir: writeSweepOutputs with
// these top-level fields.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_COMPILER_SWEEPREPORT_H
#define FLY_COMPILER_SWEEPREPORT_H

#include "fly/Compiler/SplitCompiler.h"

#include "fly/Replay/Manifest.h"

namespace fly {

/// The manifest fields besides `variants` for `result` of `job`, as written
/// by `tool` ("fly-tune", "fly_snapshot"...).
SweepHeader getSweepHeader(llvm::StringRef tool, const CompileJob &job,
                           const CompileResult &result);

} // namespace fly

#endif // FLY_COMPILER_SWEEPREPORT_H
