//===- SweepManifest.cpp - Read fly-tune's manifest.json ------------------===//

#include "fly/Runtime/SweepManifest.h"

#include "fly/Runtime/LaunchSpec.h"

namespace fly::rt {

using json::Value;

static int64_t firstInteger(const Value &md, std::initializer_list<const char *> keys) {
  for (const char *key : keys)
    if (const Value *v = md.get(key); v && v->isInteger())
      return v->asInteger();
  return -1;
}

int64_t ManifestKernel::registers() const {
  return firstInteger(metadata, {"registers", "vgpr_count"});
}
int64_t ManifestKernel::localBytes() const {
  return firstInteger(metadata, {"frame_bytes", "private_segment_fixed_size"});
}

const ManifestObject *
ManifestVariant::findKernel(const std::string &kernel,
                            const ManifestKernel **info) const {
  if (info)
    *info = nullptr;
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
  if (!anyListed && objects.size() == 1)
    return &objects.front();
  return nullptr;
}

std::vector<std::string> SweepManifest::kernelNames() const {
  std::vector<std::string> names;
  for (const ManifestVariant &v : variants)
    for (const ManifestObject &o : v.objects)
      for (const ManifestKernel &k : o.kernels) {
        bool seen = false;
        for (const std::string &n : names)
          seen |= n == k.name;
        if (!seen)
          names.push_back(k.name);
      }
  return names;
}

static std::string stringAt(const Value &obj, const char *key) {
  const Value *v = obj.get(key);
  return v && v->isString() ? v->asString() : std::string();
}

bool readSweepManifest(const std::string &dir, SweepManifest &m,
                       std::string &error) {
  m = SweepManifest();
  m.dir = dir;
  std::string path = dir + "/manifest.json", text;
  if (!readFile(path, text, error)) {
    error += " (is '" + dir + "' a fly-tune --out-dir?)";
    return false;
  }
  Value root;
  std::string jsonError;
  if (!json::parse(text, root, jsonError)) {
    error = path + ":" + jsonError;
    return false;
  }
  const Value *variants = root.get("variants");
  if (!variants || !variants->isArray()) {
    error = path + ": no \"variants\" list: not a fly-tune manifest";
    return false;
  }
  m.target = stringAt(root, "target");
  m.baseKey = stringAt(root, "base_key");
  m.input = stringAt(root, "input");
  size_t colon = m.target.find(':');
  m.family = m.target.substr(0, colon);
  m.chip = colon == std::string::npos ? "" : m.target.substr(colon + 1);
  for (const Value &v : variants->asArray()) {
    ManifestVariant out;
    if (const Value *i = v.get("index"); i && i->isInteger())
      out.index = static_cast<int>(i->asInteger());
    else
      out.index = static_cast<int>(m.variants.size());
    out.id = stringAt(v, "id");
    out.hints = stringAt(v, "hints");
    if (const Value *h = v.get("hint_set"))
      out.hintSet = *h;
    out.ok = stringAt(v, "status") == "ok";
    out.error = stringAt(v, "error");
    out.objectHash = stringAt(v, "object_hash");
    if (const Value *d = v.get("duplicate_of"); d && d->isInteger())
      out.duplicateOf = static_cast<int>(d->asInteger());
    std::vector<std::string> files;
    if (const Value *f = v.get("files"); f && f->isArray())
      for (const Value &name : f->asArray())
        if (name.isString())
          files.push_back(name.asString());
    if (const Value *objects = v.get("objects"); objects && objects->isArray()) {
      for (const Value &o : objects->asArray()) {
        ManifestObject object;
        object.gpuModule = stringAt(o, "gpu_module");
        object.format = stringAt(o, "format");
        // The writer names objects "<id>.<gpu_module><extension>".
        std::string prefix = out.id + "." + object.gpuModule + ".";
        for (const std::string &file : files)
          if (file.rfind(prefix, 0) == 0 && file.size() > prefix.size() &&
              file.find('.', prefix.size()) == std::string::npos)
            object.file = dir + "/" + file;
        if (const Value *ks = o.get("kernels"); ks && ks->isArray())
          for (const Value &k : ks->asArray()) {
            ManifestKernel kernel;
            kernel.name = stringAt(k, "name");
            if (const Value *md = k.get("metadata"))
              kernel.metadata = *md;
            object.kernels.push_back(std::move(kernel));
          }
        out.objects.push_back(std::move(object));
      }
    }
    if (out.id.empty()) {
      error = path + ": variant #" + std::to_string(m.variants.size()) +
              " has no \"id\"";
      return false;
    }
    m.variants.push_back(std::move(out));
  }
  if (m.variants.empty()) {
    error = path + ": the manifest lists no variants";
    return false;
  }
  return true;
}

} // namespace fly::rt
