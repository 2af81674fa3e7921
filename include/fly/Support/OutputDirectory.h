//===- OutputDirectory.h - Out-dirs written whole or not at all -*- C++ -*-===//
//
// A sweep's out-dir is replaced as a whole: its files are written into a fresh
// hidden sibling `.<name>.fly-staging-<pid>-XXXXXX` and, once every file is
// complete, that directory is swapped with the out-dir in one rename
// (renameat2 RENAME_EXCHANGE; where the filesystem lacks it, two renames
// through `.<name>.fly-staging-<pid>-old-XXXXXX`). Until the swap the
// previous out-dir is untouched: an error, a full disk, a signal or a kill
// leaves it as it was. Files staged so far are removed on SIGINT/SIGTERM,
// which wait for a swap under way to finish. What killed runs left is
// cleaned up by the next run into the same out-dir, which first moves back
// a previous out-dir left aside and deletes only files fly wrote or carried
// over; a run's staging marker stays locked while it lives.
//
// Concurrent writers of one out-dir take turns on an exclusive lock (flock on
// the sibling `.<name>.fly-lock`) around the swap: the out-dir always holds
// the complete output of one run.
//
// `.fly-outdir` records the files a run wrote. Files in the out-dir that it
// does not list (best-config.json of fly-run, the user's notes) are never
// deleted: they are carried over into the new out-dir by hard link. A
// foreign subdirectory, or a foreign file with the name of a new output, is
// refused before anything is replaced.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_SUPPORT_OUTPUTDIRECTORY_H
#define FLY_SUPPORT_OUTPUTDIRECTORY_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fly {

class OutputDirectory {
public:
  /// The record of the files a run wrote, inside each out-dir.
  static constexpr llvm::StringLiteral kRecordName = ".fly-outdir";
  /// Inside each staging directory until it becomes the out-dir: what the
  /// clean-up of killed runs' staging directories recognises them by.
  static constexpr llvm::StringLiteral kStagingMarkerName = ".fly-staging";

  /// Checks, before anything is compiled, that `path` can be (re)written: it
  /// is not a file, not the current directory, nor named like a staging
  /// directory or lock; it and its parent are writable directories (the
  /// parent is created), and it holds no subdirectory.
  static llvm::Error check(llvm::StringRef path);
  /// Starts the next version of `path`: creates the staging directory.
  static llvm::Expected<std::unique_ptr<OutputDirectory>>
  create(llvm::StringRef path);

  /// Removes the staging directory unless committed.
  ~OutputDirectory();

  /// Writes file `name` (one plain component) into the staging directory.
  /// write and writePrinted may be called from several threads at once.
  llvm::Error write(llvm::StringRef name, llvm::StringRef contents);
  /// Writes file `name` as `print` prints it, straight into the file: a big
  /// output (a sweep's manifest) is never a string in memory as a whole.
  llvm::Error writePrinted(llvm::StringRef name,
                           llvm::function_ref<void(llvm::raw_ostream &)> print);

  /// Replaces the out-dir with the staged files (under the lock, waiting at
  /// most `lockTimeoutSeconds` for another writer), then removes the
  /// previous version's recorded files.
  llvm::Error commit(unsigned lockTimeoutSeconds = 300);

  const std::string &getPath() const { return path; }
  const std::string &getStagingPath() const { return staging; }

private:
  OutputDirectory(std::string path, std::string staging);
  void removeStaging();
  void closeMarker();

  std::string path;
  std::string staging;
  std::mutex writtenMutex;
  std::vector<std::string> written;
  llvm::StringSet<> writtenNames;
  bool committed = false;
  /// The interrupt handler empties this staging directory as a whole; else
  /// (another one holds the handler) each file is registered with LLVM's
  /// RemoveFileOnSignal, whose list costs O(files) per registration.
  bool cleanedAsAWhole = false;
  /// The staging marker, locked while the staging directory is in use (in
  /// the first 64 staging directories alive at once in the process), or -1.
  int markerFd = -1;
};

} // namespace fly

#endif // FLY_SUPPORT_OUTPUTDIRECTORY_H
