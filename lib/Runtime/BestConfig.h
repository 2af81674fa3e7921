//===- BestConfig.h - Stored winners per kernel, chip, device ---*- C++ -*-===//
//
// best-config.json holds one entry per key "<kernel>|<target>|<device>"; an
// entry is reused while its fingerprint (the spec and every variant's id,
// hints and objects) still matches. The store is replaced atomically through
// a unique temporary, so a planted <file>.tmp symlink is never followed.
//
//===----------------------------------------------------------------------===//

#ifndef FLY_RUNTIME_BESTCONFIG_H
#define FLY_RUNTIME_BESTCONFIG_H

#include "Runtime/Sweep.h"

#include "llvm/Support/JSON.h"

namespace fly::rt {

struct BestConfig {
  std::string key, kernel, chip, device, variant, hints;
  llvm::json::Value hintSet = nullptr;
  double medianMs = 0;
  std::optional<double> defaultMedianMs, speedupVsDefault;
  int registers = -1;
  std::string fingerprint, outDir, spec, tunedAt;

  /// The entry for a sweep's winner (result.winner >= 0), stamped now.
  static BestConfig forWinner(const SweepResult &result,
                              const SweepManifest &manifest,
                              const LaunchSpec &spec, std::string key,
                              std::string fingerprint);
};
llvm::json::Value toJSON(const BestConfig &config);
bool fromJSON(const llvm::json::Value &value, BestConfig &config,
              llvm::json::Path path);

/// What a stored winner is valid for: the same objects, hints and spec.
std::string fingerprint(const SweepManifest &manifest, const LaunchSpec &spec);

class BestConfigStore {
public:
  /// A missing file is an empty store; an unreadable one is an error (the
  /// caller may warn and start empty).
  static llvm::Expected<BestConfigStore> load(llvm::StringRef path);
  explicit BestConfigStore(llvm::StringRef path) : path(path.str()) {}

  const BestConfig *find(llvm::StringRef key) const;
  void put(BestConfig config);
  llvm::Error save() const;
  const std::string &file() const { return path; }

private:
  std::string path;
  std::vector<BestConfig> configs;
};

} // namespace fly::rt

#endif // FLY_RUNTIME_BESTCONFIG_H
