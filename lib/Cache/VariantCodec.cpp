//===- VariantCodec.cpp - VariantResult <-> cache payload -----------------===//

#include "fly/Cache/VariantCodec.h"

#include "llvm/Support/Base64.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;

namespace fly {

std::string encodeVariant(const VariantResult &result) {
  json::Array objects;
  for (const VariantObject &object : result.objects) {
    objects.push_back(json::Object{
        {"gpu_module", object.gpuModule},
        {"target", object.target},
        {"family", object.family},
        {"chip", object.chip},
        {"target_index", object.targetIndex},
        {"register_source", object.registerSource},
        {"register_note", object.registerNote},
        {"format", object.format},
        {"extension", object.extension},
        {"bytes", encodeBase64(object.bytes)},
        {"properties", json::Object(object.properties)},
        {"kernels", kernelsToJSON(object.kernels)},
    });
  }
  json::Object root{
      {"binary_pass", result.binaryPass},
      {"binary_ir", result.binaryIR},
      {"replay_ms", result.replayMs},
      {"replayed_with", result.replayedWith},
      {"object_hash", static_cast<int64_t>(result.objectHash)},
      {"objects", std::move(objects)},
  };
  // Results that cross a process boundary carry failures too (the cache
  // stores successes only, so its entries never have these).
  if (!result.error.empty())
    root["error"] = result.error;
  if (result.isaFrom)
    root["isa_from"] = *result.isaFrom;
  std::string text;
  raw_string_ostream(text) << json::Value(std::move(root));
  return text;
}

/// llvm::json prints -0.0 as "-0", which parses back as the integer 0: a
/// decoded entry would not encode to what it was read from (found by
/// CacheEntryFuzzer). Stored entries never hold -0.0; decoded ones get +0.0.
static json::Value withoutNegativeZero(json::Value value) {
  if (json::Object *object = value.getAsObject()) {
    for (auto &entry : *object)
      entry.second = withoutNegativeZero(std::move(entry.second));
  } else if (json::Array *array = value.getAsArray()) {
    for (json::Value &element : *array)
      element = withoutNegativeZero(std::move(element));
  } else if (value.kind() == json::Value::Number) {
    if (std::optional<double> number = value.getAsNumber();
        number && *number == 0 && std::signbit(*number))
      return 0.0;
  }
  return value;
}

static json::Object withoutNegativeZero(const json::Object &object) {
  return std::move(
      *withoutNegativeZero(json::Value(json::Object(object))).getAsObject());
}

std::optional<VariantResult> decodeVariant(StringRef payload) {
  Expected<json::Value> root = json::parse(payload);
  if (!root) {
    consumeError(root.takeError());
    return std::nullopt;
  }
  const json::Object *obj = root->getAsObject();
  if (!obj)
    return std::nullopt;
  VariantResult result;
  std::optional<StringRef> binaryPass = obj->getString("binary_pass");
  std::optional<StringRef> binaryIR = obj->getString("binary_ir");
  std::optional<int64_t> hash = obj->getInteger("object_hash");
  const json::Array *objects = obj->getArray("objects");
  if (!binaryPass || !binaryIR || !hash || !objects)
    return std::nullopt;
  result.binaryPass = binaryPass->str();
  result.binaryIR = binaryIR->str();
  result.objectHash = static_cast<uint64_t>(*hash);
  result.replayMs = obj->getNumber("replay_ms").value_or(0);
  result.replayedWith = obj->getInteger("replayed_with").value_or(1);
  result.error = obj->getString("error").value_or("").str();
  if (std::optional<int64_t> isaFrom = obj->getInteger("isa_from");
      isaFrom && *isaFrom >= 0 && *isaFrom <= UINT32_MAX)
    result.isaFrom = static_cast<unsigned>(*isaFrom);
  for (const json::Value &value : *objects) {
    const json::Object *o = value.getAsObject();
    if (!o)
      return std::nullopt;
    VariantObject object;
    std::optional<StringRef> bytes = o->getString("bytes");
    if (!bytes)
      return std::nullopt;
    std::vector<char> decoded;
    if (Error err = decodeBase64(*bytes, decoded)) {
      consumeError(std::move(err));
      return std::nullopt;
    }
    object.bytes.assign(decoded.begin(), decoded.end());
    object.gpuModule = o->getString("gpu_module").value_or("").str();
    object.target = o->getString("target").value_or("").str();
    object.family = o->getString("family").value_or("").str();
    object.chip = o->getString("chip").value_or("").str();
    object.targetIndex =
        static_cast<unsigned>(o->getInteger("target_index").value_or(0));
    object.registerSource = o->getString("register_source").value_or("").str();
    object.registerNote = o->getString("register_note").value_or("").str();
    object.format = o->getString("format").value_or("").str();
    object.extension = o->getString("extension").value_or("").str();
    if (const json::Object *props = o->getObject("properties"))
      object.properties = withoutNegativeZero(*props);
    if (const json::Array *kernels = o->getArray("kernels"))
      for (const json::Value &k : *kernels)
        if (const json::Object *ko = k.getAsObject()) {
          KernelInfo info;
          info.name = ko->getString("name").value_or("").str();
          if (const json::Object *md = ko->getObject("metadata"))
            info.metadata = withoutNegativeZero(*md);
          object.kernels.push_back(std::move(info));
        }
    result.objects.push_back(std::move(object));
  }
  return result;
}

} // namespace fly
