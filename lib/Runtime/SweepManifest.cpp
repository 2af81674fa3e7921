//===- SweepManifest.cpp - Read fly-tune's manifest.json ------------------===//

#include "fly/Runtime/SweepManifest.h"

#include "fly/Support/BoundedJSON.h"
#include "fly/Support/FileName.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace fly::rt {

static int64_t firstInteger(const json::Object &md,
                            std::initializer_list<StringRef> keys) {
  for (StringRef key : keys)
    if (std::optional<int64_t> v = md.getInteger(key))
      return *v;
  return -1;
}
int64_t ManifestKernel::registers() const {
  return firstInteger(metadata, {"registers", "vgpr_count"});
}
int64_t ManifestKernel::localBytes() const {
  return firstInteger(metadata, {"frame_bytes", "private_segment_fixed_size"});
}

const ManifestObject *
ManifestVariant::findKernel(StringRef kernel,
                            const ManifestKernel **info) const {
  bool anyListed = false;
  for (const ManifestObject &object : objects)
    for (const ManifestKernel &k : object.kernels) {
      anyListed = true;
      if (k.name == kernel) {
        if (info)
          *info = &k;
        return &object;
      }
    }
  // PTX (format=isa) objects carry no kernel table: trust the spec's name.
  return !anyListed && objects.size() == 1 ? &objects.front() : nullptr;
}

std::vector<std::string> SweepManifest::kernelNames() const {
  std::vector<std::string> names;
  for (const ManifestVariant &v : variants)
    for (const ManifestObject &o : v.objects)
      for (const ManifestKernel &k : o.kernels)
        if (!is_contained(names, k.name))
          names.push_back(k.name);
  return names;
}

bool fromJSON(const json::Value &value, ManifestKernel &k, json::Path path) {
  json::ObjectMapper map(value, path);
  const json::Object *md = value.getAsObject()
                               ? value.getAsObject()->getObject("metadata")
                               : nullptr;
  if (md)
    k.metadata = *md;
  return map && map.map("name", k.name);
}

bool fromJSON(const json::Value &value, ManifestObject &o, json::Path path) {
  json::ObjectMapper map(value, path);
  int64_t size = -1;
  // "file" is the object's name in the out-dir; joined to it below.
  if (!map || !map.mapOptional("file", o.file) ||
      !map.mapOptional("chip", o.chip))
    return false;
  if (!o.file.empty() && !isPlainFileName(o.file)) {
    path.field("file").report("not a plain file name (no '/', '.' or '..')");
    return false;
  }
  if (!map.mapOptional("gpu_module", o.gpuModule) ||
      !map.mapOptional("format", o.format) || !map.mapOptional("size", size) ||
      !map.mapOptional("kernels", o.kernels))
    return false;
  // No object is read past kMaxObjectBytes: a manifest claiming more is not
  // one fly-tune wrote (found by SweepManifestFuzzer).
  if (size > static_cast<int64_t>(kMaxObjectBytes)) {
    path.field("size").report("larger than the 1 GiB an object may have");
    return false;
  }
  o.size = size < 0 ? kMaxObjectBytes : static_cast<uint64_t>(size);
  return true;
}

bool fromJSON(const json::Value &value, ManifestVariant &v, json::Path path) {
  json::ObjectMapper map(value, path);
  std::string status;
  v.index = -1;
  if (!map || !map.map("id", v.id) || !map.mapOptional("index", v.index) ||
      !map.mapOptional("hints", v.hints) ||
      !map.mapOptional("status", status) ||
      !map.mapOptional("error", v.error) ||
      !map.mapOptional("object_hash", v.objectHash) ||
      !map.mapOptional("duplicate_of", v.duplicateOf) ||
      !map.mapOptional("files", v.files) ||
      !map.mapOptional("objects", v.objects))
    return false;
  if (const json::Value *h = value.getAsObject()->get("hint_set"))
    v.hintSet = *h;
  v.ok = status == "ok";
  // Names are joined to the out-dir: nothing may point outside it.
  if (!isPlainFileName(v.id)) {
    path.field("id").report("not a plain file name (no '/', '.' or '..')");
    return false;
  }
  for (size_t i = 0; i < v.files.size(); ++i)
    if (!isPlainFileName(v.files[i])) {
      path.field("files").index(i).report(
          "not a plain file name (no '/', '.' or '..')");
      return false;
    }
  return true;
}

Expected<SweepManifest> parseSweepManifest(StringRef text, StringRef dir) {
  std::string where = (dir + "/manifest.json").str();
  Expected<json::Value> root = parseJSONBounded(text, where);
  if (!root)
    return root.takeError();
  SweepManifest m;
  m.dir = dir.str();

  json::Path::Root top("manifest");
  json::ObjectMapper map(*root, top);
  if (!map || !map.map("variants", m.variants) ||
      !map.mapOptional("target", m.target))
    return createStringError(where + ": " + toString(top.getError()) +
                             " (not a fly-tune manifest?)");
  if (m.variants.empty())
    return createStringError(where + ": the manifest lists no variants");
  // "nvvm:sm_80,nvvm:sm_90" for a gpu.module with several targets: the
  // family of the first, and no single chip (selectObjectsForChip picks).
  StringRef firstTarget = StringRef(m.target).split(',').first;
  std::tie(m.family, m.chip) = firstTarget.split(':');
  if (StringRef(m.target).contains(','))
    m.chip.clear();
  for (size_t i = 0; i < m.variants.size(); ++i) {
    ManifestVariant &v = m.variants[i];
    if (v.index < 0)
      v.index = static_cast<int>(i);
    for (ManifestObject &object : v.objects) {
      // Each object names its file: "<id>.<gpu_module>.<chip><extension>".
      if (!object.file.empty()) {
        object.file = (dir + "/" + object.file).str();
        continue;
      }
      // Older manifests: "<id>.<gpu_module><extension>".
      std::string prefix = v.id + "." + object.gpuModule + ".";
      for (StringRef file : v.files)
        if (file.starts_with(prefix) && file.size() > prefix.size() &&
            file.find('.', prefix.size()) == StringRef::npos)
          object.file = (dir + "/" + file).str();
    }
  }
  return m;
}

Expected<SweepManifest> readSweepManifest(StringRef dir) {
  Expected<std::string> text = readRegularFileText(
      (dir + "/manifest.json").str(), 256 << 20, FinalSymlink::Refuse);
  if (!text)
    return createStringError(toString(text.takeError()) + " (is '" + dir +
                             "' a fly-tune --out-dir?)");
  return parseSweepManifest(*text, dir);
}

Expected<std::string> readObject(const ManifestObject &object) {
  Expected<std::string> bytes =
      readRegularFileText(object.file, std::min(object.size, kMaxObjectBytes),
                          FinalSymlink::Refuse);
  if (bytes && object.size != kMaxObjectBytes && bytes->size() != object.size)
    return createStringError("'%s' is %zu bytes, the manifest says %llu",
                             object.file.c_str(), bytes->size(),
                             (unsigned long long)object.size);
  return bytes;
}

std::vector<std::string> selectObjectsForChip(SweepManifest &manifest,
                                              StringRef deviceChip,
                                              StringRef deviceNote) {
  std::vector<std::string> lines;
  for (ManifestVariant &v : manifest.variants) {
    // The chips each gpu.module was built for, in target order.
    StringMap<SmallVector<std::string>> chipsOf;
    for (const ManifestObject &o : v.objects)
      if (!o.chip.empty() && !is_contained(chipsOf[o.gpuModule], o.chip))
        chipsOf[o.gpuModule].push_back(o.chip);
    bool multiChip = any_of(
        chipsOf, [](const auto &entry) { return entry.second.size() > 1; });
    if (!multiChip)
      continue;
    std::vector<ManifestObject> kept;
    for (ManifestObject &o : v.objects) {
      const SmallVector<std::string> &chips = chipsOf[o.gpuModule];
      bool anyMatches = is_contained(chips, deviceChip.str());
      if (chips.size() > 1 && anyMatches && o.chip != deviceChip)
        continue;
      if (chips.size() > 1) {
        SmallVector<std::string> others;
        for (const std::string &chip : chips)
          if (chip != o.chip)
            others.push_back(chip);
        std::string name = sys::path::filename(o.file).str();
        lines.push_back(
            anyMatches
                ? formatv("{0}: loading {1} ({2} matches the device{3}; also "
                          "built: {4})",
                          v.id, name, o.chip, deviceNote, join(others, ", "))
                      .str()
                : formatv("{0}: no object of gpu.module @{1} is for {2} "
                          "(built: {3}); keeping {4}",
                          v.id, o.gpuModule, deviceChip, join(chips, ", "),
                          name)
                      .str());
      }
      kept.push_back(std::move(o));
    }
    v.objects = std::move(kept);
  }
  return lines;
}

} // namespace fly::rt
