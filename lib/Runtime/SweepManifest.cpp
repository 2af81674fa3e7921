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
  return map && map.mapOptional("gpu_module", o.gpuModule) &&
         map.mapOptional("format", o.format) && map.mapOptional("size", size) &&
         map.mapOptional("kernels", o.kernels) &&
         (o.size = size < 0 ? kMaxObjectBytes : static_cast<uint64_t>(size),
          true);
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
  Expected<json::Value> root = json::parse(text);
  if (!root)
    return createStringError(where + ":" + toString(root.takeError()));
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
  std::tie(m.family, m.chip) = StringRef(m.target).split(':');
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
