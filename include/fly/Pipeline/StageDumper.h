//===- StageDumper.h - Numbered per-stage IR dumps (dump_ir) ----*- C++ -*-===//
//
// FLY_DUMP_IR=1 (directory FLY_DUMP_DIR, default ./fly_dump) writes the IR
// after every top-level stage as NN_<stage>.mlir, starting with
// 00_origin.mlir. Nested pass managers (e.g. gpu.module(...)) count as one
// stage: dumping the whole module while their passes run on other threads
// would race. FLY_DUMP_KERNEL=<name> dumps only the compiles of a module
// that defines that kernel. The directory holds one run's dumps: the first
// dumper of a process in it removes the files the last run listed in its
// record (.fly-dump), and only those.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_PIPELINE_STAGEDUMPER_H
#define FLY_PIPELINE_STAGEDUMPER_H

#include "mlir/IR/Operation.h"
#include "mlir/Pass/PassInstrumentation.h"

#include <atomic>
#include <optional>
#include <string>

namespace fly {

class StageDumper {
public:
  explicit StageDumper(std::string directory);

  /// FLY_DUMP_IR / FLY_DUMP_DIR; nullopt when dumping is off.
  static std::optional<std::string> directoryFromEnvironment();

  /// FLY_DUMP_KERNEL: dump only compiles of a module that defines a kernel
  /// (gpu.func or llvm.func in a gpu.module) of this name; "" = all.
  static std::string kernelFilterFromEnvironment();

  /// Starts the dumps of one compile of `module`: on if the kernel filter
  /// matches it. Until the next call, write() and instrument() do nothing
  /// when it did not match.
  bool select(mlir::Operation *module);
  bool isActive() const { return active; }

  /// Writes NN_<stage><extension> holding `text`; returns the file name.
  std::string write(llvm::StringRef stage, llvm::StringRef text,
                    llvm::StringRef extension = ".mlir");
  /// Writes NN_<stage>.mlir holding `op` printed.
  std::string write(llvm::StringRef stage, mlir::Operation *op);

  /// An instrumentation that dumps after each top-level pass on `root`
  /// (null: the first op a top-level pass runs on, dumped first as origin).
  std::unique_ptr<mlir::PassInstrumentation> instrument(mlir::Operation *root);

  const std::string &getDirectory() const { return directory; }

  /// Lists `relative` (a file under the directory this run wrote, such as
  /// a reproducer's) in the record, so the next run removes it.
  void recordFile(llvm::StringRef relative);

private:
  std::string directory;
  std::string kernelFilter = kernelFilterFromEnvironment();
  std::atomic<bool> active{true};
  std::atomic<unsigned> counter{0};
};

} // namespace fly

#endif // FLY_PIPELINE_STAGEDUMPER_H
