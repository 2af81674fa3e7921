//===- BestConfig.cpp - Stored winners, per kernel, chip and device -------===//

#include "Runtime/BestConfig.h"

#include "fly/Support/BoundedJSON.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Chrono.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

namespace fly::rt {

json::Value toJSON(const BestConfig &c) {
  return json::Object{{"key", c.key},
                      {"kernel", c.kernel},
                      {"chip", c.chip},
                      {"device", c.device},
                      {"variant", c.variant},
                      {"hints", c.hints},
                      {"hint_set", c.hintSet},
                      {"median_ms", c.medianMs},
                      {"default_median_ms", c.defaultMedianMs},
                      {"speedup_vs_default", c.speedupVsDefault},
                      {"registers", c.registers},
                      {"fingerprint", c.fingerprint},
                      {"out_dir", c.outDir},
                      {"spec", c.spec},
                      {"tuned_at", c.tunedAt}};
}

bool fromJSON(const json::Value &value, BestConfig &c, json::Path path) {
  json::ObjectMapper o(value, path);
  if (const json::Object *object = value.getAsObject())
    if (const json::Value *h = object->get("hint_set"))
      c.hintSet = *h;
  return o && o.map("key", c.key) && o.map("fingerprint", c.fingerprint) &&
         o.mapOptional("kernel", c.kernel) && o.mapOptional("chip", c.chip) &&
         o.mapOptional("device", c.device) &&
         o.mapOptional("variant", c.variant) &&
         o.mapOptional("hints", c.hints) &&
         o.mapOptional("median_ms", c.medianMs) &&
         o.mapOptional("default_median_ms", c.defaultMedianMs) &&
         o.mapOptional("speedup_vs_default", c.speedupVsDefault) &&
         o.mapOptional("registers", c.registers) &&
         o.mapOptional("out_dir", c.outDir) && o.mapOptional("spec", c.spec) &&
         o.mapOptional("tuned_at", c.tunedAt);
}

BestConfig BestConfig::forWinner(const SweepResult &r,
                                 const SweepManifest &manifest,
                                 const LaunchSpec &spec, std::string key,
                                 std::string fingerprint) {
  const VariantOutcome &w = r.variants[r.winner];
  BestConfig c{std::move(key),     r.kernel,      manifest.target,
               r.device.name,      w.variant->id, w.variant->hints,
               w.variant->hintSet, w.stats.median};
  if (r.baseline >= 0) {
    c.defaultMedianMs = r.variants[r.baseline].stats.median;
    c.speedupVsDefault = *c.defaultMedianMs / w.stats.median;
  }
  c.registers = w.driver.registers;
  c.fingerprint = std::move(fingerprint);
  c.outDir = manifest.dir, c.spec = spec.path;
  c.tunedAt =
      formatv("{0:%Y-%m-%dT%H:%M:%SZ}", sys::toUtcTime(std::time(nullptr)));
  return c;
}

std::string fingerprint(const SweepManifest &manifest, const LaunchSpec &spec) {
  std::string text = spec.text;
  for (const ManifestVariant &v : manifest.variants)
    text += "\n" + v.id + "|" + v.hints + "|" + v.objectHash;
  return utohexstr(xxh3_64bits(text), /*LowerCase=*/true, /*Width=*/16);
}

Expected<BestConfigStore> BestConfigStore::load(StringRef path) {
  BestConfigStore store(path);
  if (!sys::fs::exists(path))
    return store;
  Expected<std::string> text =
      readRegularFileText(path, 64 << 20, FinalSymlink::Refuse);
  if (!text)
    return text.takeError();
  Expected<json::Value> root = parseJSONBounded(*text, path);
  if (!root)
    return root.takeError();
  json::Path::Root top("best-config");
  json::ObjectMapper map(*root, top);
  if (!map || !map.map("configs", store.configs))
    return top.getError();
  return store;
}

const BestConfig *BestConfigStore::find(StringRef key) const {
  for (const BestConfig &c : configs)
    if (c.key == key)
      return &c;
  return nullptr;
}

void BestConfigStore::put(BestConfig config) {
  for (BestConfig &c : configs)
    if (c.key == config.key)
      return void(c = std::move(config));
  configs.push_back(std::move(config));
}

Error BestConfigStore::save() const {
  return writeToOutput(path, [&](raw_ostream &os) {
    os << formatv("{0:2}", json::Value(json::Object{{"configs", configs}}))
       << "\n";
    return Error::success();
  });
}

} // namespace fly::rt
