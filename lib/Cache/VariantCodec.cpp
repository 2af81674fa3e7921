//===- VariantCodec.cpp - VariantResult <-> cache payload -----------------===//

#include "fly/Cache/VariantCodec.h"
#include "fly/Support/BoundedJSON.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/Base64.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace fly {

static std::string printAttribute(mlir::Attribute attr) {
  std::string text;
  raw_string_ostream(text) << attr;
  return text;
}

std::string encodeVariant(const VariantResult &result, bool withIntermediates) {
  json::Array binaries;
  for (const VariantBinary &binary : result.binaries) {
    json::Array objects;
    for (mlir::Attribute attr : binary.objects) {
      auto object = cast<mlir::gpu::ObjectAttr>(attr);
      json::Object entry{
          {"target", printAttribute(object.getTarget())},
          {"format", mlir::gpu::stringifyCompilationTarget(object.getFormat())},
          {"bytes", encodeBase64(object.getObject().getValue())},
      };
      if (mlir::DictionaryAttr properties = object.getProperties())
        entry["properties"] = printAttribute(properties);
      if (mlir::gpu::KernelTableAttr kernels = object.getKernels())
        entry["kernels"] = printAttribute(kernels);
      objects.push_back(std::move(entry));
    }
    json::Object entry{{"name", binary.name}, {"objects", std::move(objects)}};
    if (binary.offloadingHandler)
      entry["offloading_handler"] = printAttribute(binary.offloadingHandler);
    binaries.push_back(std::move(entry));
  }
  json::Object root{
      {"binary_pass", result.binaryPass},
      {"replay_ms", result.replayMs},
      {"replayed_with", result.replayedWith},
      {"object_hash", static_cast<int64_t>(result.objectHash)},
      {"binaries", std::move(binaries)},
  };
  // Results that cross a process boundary carry failures too (the cache
  // stores successes only, so its entries never have these).
  if (!result.error.empty())
    root["error"] = result.error;
  if (result.isaFrom)
    root["isa_from"] = *result.isaFrom;
  if (result.codegenContinued && result.succeeded())
    root["codegen_continued"] = result.codegenContinued;
  if (withIntermediates && !result.intermediates.empty()) {
    json::Array intermediates;
    for (const TargetIntermediates &seen : result.intermediates)
      intermediates.push_back(json::Object{{"gpu_module", seen.gpuModule},
                                           {"target_index", seen.targetIndex},
                                           {"llvm_ir", seen.llvmIR},
                                           {"isa", seen.isa}});
    root["intermediates"] = std::move(intermediates);
  }
  std::string text;
  raw_string_ostream(text) << json::Value(std::move(root));
  return text;
}

namespace {
/// Parses the attributes of one payload; their errors are not the user's
/// (a bad entry is a miss), so this thread's diagnostics are dropped.
class AttributeReader {
public:
  explicit AttributeReader(mlir::MLIRContext &context)
      : context(context),
        quiet(&context, [thread = llvm::get_threadid()](mlir::Diagnostic &) {
          return mlir::success(llvm::get_threadid() == thread);
        }) {}

  /// The attribute printed in `text`, if it is all one attribute of type T.
  template <typename T> T read(std::optional<StringRef> text) {
    if (!text)
      return nullptr;
    // Without numRead, parseAttribute fails unless all of `text` is read.
    mlir::Attribute attr = mlir::parseAttribute(*text, &context);
    return attr ? dyn_cast<T>(attr) : nullptr;
  }

  mlir::gpu::ObjectAttr readObject(const json::Object &entry) {
    auto target = read<mlir::Attribute>(entry.getString("target"));
    std::optional<mlir::gpu::CompilationTarget> format =
        mlir::gpu::symbolizeCompilationTarget(
            entry.getString("format").value_or(""));
    std::optional<StringRef> base64 = entry.getString("bytes");
    std::vector<char> bytes;
    if (!target || !format || !base64)
      return nullptr;
    if (Error err = decodeBase64(*base64, bytes)) {
      consumeError(std::move(err));
      return nullptr;
    }
    mlir::DictionaryAttr properties;
    if (entry.get("properties") && !(properties = read<mlir::DictionaryAttr>(
                                         entry.getString("properties"))))
      return nullptr;
    mlir::gpu::KernelTableAttr kernels;
    if (entry.get("kernels") && !(kernels = read<mlir::gpu::KernelTableAttr>(
                                      entry.getString("kernels"))))
      return nullptr;
    return mlir::gpu::ObjectAttr::getChecked(
        [&] { return mlir::emitError(mlir::UnknownLoc::get(&context)); },
        &context, target, *format,
        mlir::StringAttr::get(&context, StringRef(bytes.data(), bytes.size())),
        properties, kernels);
  }

  std::optional<VariantBinary> readBinary(const json::Value &value) {
    const json::Object *entry = value.getAsObject();
    if (!entry)
      return std::nullopt;
    std::optional<StringRef> name = entry->getString("name");
    const json::Array *objects = entry->getArray("objects");
    if (!name || !objects)
      return std::nullopt;
    VariantBinary binary;
    binary.name = name->str();
    if (entry->get("offloading_handler") &&
        !(binary.offloadingHandler =
              read<mlir::gpu::OffloadingLLVMTranslationAttrInterface>(
                  entry->getString("offloading_handler"))))
      return std::nullopt;
    SmallVector<mlir::Attribute> attrs;
    for (const json::Value &object : *objects) {
      const json::Object *o = object.getAsObject();
      mlir::gpu::ObjectAttr attr = o ? readObject(*o) : nullptr;
      if (!attr)
        return std::nullopt;
      attrs.push_back(attr);
    }
    binary.objects = mlir::ArrayAttr::get(&context, attrs);
    return binary;
  }

private:
  mlir::MLIRContext &context;
  mlir::ScopedDiagnosticHandler quiet;
};
} // namespace

static std::optional<std::vector<TargetIntermediates>>
readIntermediates(const json::Array &array) {
  std::vector<TargetIntermediates> list;
  for (const json::Value &value : array) {
    const json::Object *entry = value.getAsObject();
    if (!entry)
      return std::nullopt;
    TargetIntermediates &seen = list.emplace_back();
    seen.gpuModule = entry->getString("gpu_module").value_or("").str();
    seen.targetIndex =
        static_cast<unsigned>(entry->getInteger("target_index").value_or(0));
    seen.llvmIR = entry->getString("llvm_ir").value_or("").str();
    seen.isa = entry->getString("isa").value_or("").str();
  }
  return list;
}

std::optional<VariantResult> decodeVariant(StringRef payload,
                                           mlir::MLIRContext &context) {
  Expected<json::Value> root = parseJSONBounded(payload, "cache entry");
  if (!root) {
    consumeError(root.takeError());
    return std::nullopt;
  }
  const json::Object *obj = root->getAsObject();
  if (!obj)
    return std::nullopt;
  VariantResult result;
  std::optional<StringRef> binaryPass = obj->getString("binary_pass");
  std::optional<int64_t> hash = obj->getInteger("object_hash");
  const json::Array *binaries = obj->getArray("binaries");
  if (!binaryPass || !hash || !binaries)
    return std::nullopt;
  result.binaryPass = binaryPass->str();
  result.replayMs = obj->getNumber("replay_ms").value_or(0);
  result.replayedWith = obj->getInteger("replayed_with").value_or(1);
  result.error = obj->getString("error").value_or("").str();
  if (std::optional<int64_t> isaFrom = obj->getInteger("isa_from");
      isaFrom && *isaFrom >= 0 && *isaFrom <= UINT32_MAX)
    result.isaFrom = static_cast<unsigned>(*isaFrom);
  if (std::optional<int64_t> continued = obj->getInteger("codegen_continued");
      continued && *continued > 0 && *continued <= UINT32_MAX)
    result.codegenContinued = static_cast<unsigned>(*continued);
  std::vector<VariantBinary> typed;
  {
    AttributeReader reader(context);
    for (const json::Value &value : *binaries) {
      std::optional<VariantBinary> binary = reader.readBinary(value);
      if (!binary)
        return std::nullopt;
      typed.push_back(std::move(*binary));
    }
  }
  // Objects, kernel tables and register data are read from the typed
  // objects, as after a replay; the stored hash must match what they hash to.
  setBinaries(result, std::move(typed));
  if (result.objectHash != static_cast<uint64_t>(*hash))
    return std::nullopt;
  if (const json::Array *intermediates = obj->getArray("intermediates")) {
    std::optional<std::vector<TargetIntermediates>> list =
        readIntermediates(*intermediates);
    if (!list)
      return std::nullopt;
    result.intermediates = std::move(*list);
  }
  return result;
}

} // namespace fly
