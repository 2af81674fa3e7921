//===- SweepManifest.cpp - Read fly-tune's manifest.json ------------------===//

#include "fly/Runtime/SweepManifest.h"

#include "fly/Runtime/RegularFile.h"

#include "llvm/ADT/STLExtras.h"

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

/// A manifest as written, before its names are checked and resolved.
struct RawVariant {
  RawVariant() { variant.index = -1; }
  ManifestVariant variant;
  std::string status;
  std::vector<std::string> files;
};

bool fromJSON(const json::Value &value, ManifestObject &o, json::Path path) {
  json::ObjectMapper map(value, path);
  int64_t size = -1;
  return map && map.mapOptional("gpu_module", o.gpuModule) &&
         map.mapOptional("format", o.format) && map.mapOptional("size", size) &&
         map.mapOptional("kernels", o.kernels) &&
         (o.size = size < 0 ? kMaxObjectBytes : static_cast<uint64_t>(size),
          true);
}

bool fromJSON(const json::Value &value, RawVariant &raw, json::Path path) {
  json::ObjectMapper map(value, path);
  ManifestVariant &v = raw.variant;
  if (!map || !map.map("id", v.id) || !map.mapOptional("index", v.index) ||
      !map.mapOptional("hints", v.hints) ||
      !map.mapOptional("status", raw.status) ||
      !map.mapOptional("error", v.error) ||
      !map.mapOptional("object_hash", v.objectHash) ||
      !map.mapOptional("duplicate_of", v.duplicateOf) ||
      !map.mapOptional("files", raw.files) ||
      !map.mapOptional("objects", v.objects))
    return false;
  if (const json::Value *h = value.getAsObject()->get("hint_set"))
    v.hintSet = *h;
  v.ok = raw.status == "ok";
  // Names are joined to the out-dir: nothing may point outside it.
  if (!isPlainFileName(v.id)) {
    path.field("id").report("not a plain file name (no '/', '.' or '..')");
    return false;
  }
  for (size_t i = 0; i < raw.files.size(); ++i)
    if (!isPlainFileName(raw.files[i])) {
      path.field("files").index(i).report(
          "not a plain file name (no '/', '.' or '..')");
      return false;
    }
  return true;
}

Expected<SweepManifest> parseSweepManifest(StringRef text, StringRef dir) {
  std::string where = (dir + "/manifest.json").str();
  Expected<json::Value> root = json::parse(text);
  if (!root)
    return createStringError(where + ":" + toString(root.takeError()));
  SweepManifest m;
  m.dir = dir.str();
  std::vector<RawVariant> raw;
  json::Path::Root top("manifest");
  json::ObjectMapper map(*root, top);
  if (!map || !map.map("variants", raw) || !map.mapOptional("target", m.target))
    return createStringError(where + ": " + toString(top.getError()) +
                             " (not a fly-tune manifest?)");
  if (raw.empty())
    return createStringError(where + ": the manifest lists no variants");
  std::tie(m.family, m.chip) = StringRef(m.target).split(':');
  for (size_t i = 0; i < raw.size(); ++i) {
    ManifestVariant &v = raw[i].variant;
    if (v.index < 0)
      v.index = static_cast<int>(i);
    for (ManifestObject &object : v.objects) {
      // The writer names objects "<id>.<gpu_module><extension>".
      std::string prefix = v.id + "." + object.gpuModule + ".";
      for (StringRef file : raw[i].files)
        if (file.starts_with(prefix) && file.size() > prefix.size() &&
            file.find('.', prefix.size()) == StringRef::npos)
          object.file = (dir + "/" + file).str();
    }
    m.variants.push_back(std::move(v));
  }
  return m;
}

Expected<SweepManifest> readSweepManifest(StringRef dir) {
  Expected<std::string> text =
      readRegularFile((dir + "/manifest.json").str(), 256 << 20);
  if (!text)
    return createStringError(toString(text.takeError()) + " (is '" + dir +
                             "' a fly-tune --out-dir?)");
  return parseSweepManifest(*text, dir);
}

Expected<std::string> readObject(const ManifestObject &object) {
  Expected<std::string> bytes =
      readRegularFile(object.file, std::min(object.size, kMaxObjectBytes));
  if (bytes && object.size != kMaxObjectBytes && bytes->size() != object.size)
    return createStringError("'%s' is %zu bytes, the manifest says %llu",
                             object.file.c_str(), bytes->size(),
                             (unsigned long long)object.size);
  return bytes;
}

} // namespace fly::rt
