//===- Manifest.cpp - Write a sweep's objects and manifest.json -----------===//

#include "fly/Replay/Manifest.h"
#include "Replay/SweepTable.h"
#include "fly/Support/ToolHelp.h"

#include "fly/Support/FileName.h"
#include "fly/Support/OutputDirectory.h"

#include <cmath>

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

using namespace llvm;

namespace fly {

template <typename T> static json::Value orNull(const std::optional<T> &value) {
  return value ? json::Value(*value) : json::Value(nullptr);
}

json::Object toJSON(const SweepHeader &header, size_t variantCount) {
  auto ms = [](std::optional<double> value) -> json::Value {
    return value ? json::Value(std::round(*value * 100) / 100)
                 : json::Value(nullptr);
  };
  std::optional<std::string> phase1;
  if (header.prefixFromCache)
    phase1 = *header.prefixFromCache ? "from cache" : "compiled";
  json::Array fromCache;
  for (size_t i = 0; i < variantCount; ++i)
    fromCache.push_back(i < header.variantFromCache.size() &&
                        header.variantFromCache[i]);
  return json::Object{
      {"schema_version", kManifestSchemaVersion},
      {"tool", header.tool},
      {"fly_version", getVersionString()},
      {"input", header.input},
      {"target", orNull(header.target)},
      {"targets", header.targets ? json::Value(json::Array(*header.targets))
                                 : json::Value(nullptr)},
      {"preset", orNull(header.preset)},
      {"main_module", orNull(header.mainModule)},
      {"pipeline", orNull(header.pipeline)},
      {"prefix", orNull(header.prefix)},
      {"binary_pass", header.binaryPass},
      {"suffix", orNull(header.suffix)},
      {"phase1", orNull(phase1)},
      {"prefix_from_cache", orNull(header.prefixFromCache)},
      {"base_key", orNull(header.baseKey)},
      {"cache_explanation", orNull(header.cacheExplanation)},
      {"prefix_ms", ms(header.prefixMs)},
      {"replay_ms", ms(header.replayMs)},
      {"total_ms", ms(header.totalMs)},
      {"variant_count", static_cast<int64_t>(variantCount)},
      {"warnings", json::Array(header.warnings)},
      {"reproducers", json::Array(header.reproducers)},
      {"variant_from_cache", std::move(fromCache)},
  };
}

json::Object variantToJSON(const VariantResult &result,
                           ArrayRef<std::string> files) {
  json::Object entry{
      {"index", result.index},
      {"id", result.id},
      {"hints", result.hints.canonical()},
      {"binary_pass", result.binaryPass},
      {"status", result.succeeded() ? "ok" : "failed"},
      {"files", json::Array(files)},
  };
  entry["hint_set"] = result.hints.toJSON();
  entry["changes_numerics"] = changesNumerics(result.hints);
  if (!result.succeeded()) {
    entry["error"] = result.error;
    return entry;
  }
  entry["replay_ms"] = std::round(result.replayMs * 100) / 100;
  entry["replayed_with"] = result.replayedWith;
  entry["object_hash"] = utohexstr(result.objectHash, /*LowerCase=*/true);
  entry["duplicate_of"] = result.duplicateOf ? json::Value(*result.duplicateOf)
                                             : json::Value(nullptr);
  if (result.duplicateOf)
    entry["note"] = formatv("objects identical to variant {0}: this hint set "
                            "had no effect",
                            *result.duplicateOf)
                        .str();
  // Which variant's ISA compile these objects were finished from (reuse-isa).
  if (result.isaFrom)
    entry["isa_from"] = *result.isaFrom;
  // How many of its objects continued a kept ROCDL code generation.
  if (result.codegenContinued)
    entry["codegen_continued"] = result.codegenContinued;
  json::Array objects;
  for (const VariantObject &object : result.objects) {
    json::Object entry{
        {"gpu_module", object.gpuModule},
        {"file", getObjectFileName(result.id, object, result.objects)},
        {"target", object.target},
        {"family", object.family},
        {"chip", object.chip},
        {"target_index", object.targetIndex},
        {"format", object.format},
        {"size", static_cast<int64_t>(object.bytes.size())},
        {"properties", json::Object(object.properties)},
        {"kernels", kernelsToJSON(object.kernels)},
    };
    // The table's columns beside each kernel's metadata, so that no reader
    // derives them again.
    json::Array *kernels = entry.getArray("kernels");
    for (auto [kernel, info] : llvm::zip(*kernels, object.kernels)) {
      KernelResources resources = getKernelResources(object, info);
      json::Object &out = *kernel.getAsObject();
      out["resources"] = toJSON(resources);
      if (resources.occupancy)
        out["occupancy"] = json::Object{{"value", resources.occupancy->value},
                                        {"unit", resources.occupancy->unit}};
    }
    if (!object.registerSource.empty())
      entry["register_source"] = object.registerSource;
    if (!object.registerNote.empty())
      entry["register_note"] = object.registerNote;
    objects.push_back(std::move(entry));
  }
  entry["objects"] = std::move(objects);
  return entry;
}

/// manifest.json as formatv("{0:2}") prints the whole object (its keys
/// sorted), with `variants` printed one entry at a time: the manifest of a
/// big sweep is never a tree in memory as a whole, only one variant's.
static void printManifest(raw_ostream &os, json::Object fields,
                          ArrayRef<VariantResult> results,
                          ArrayRef<std::vector<std::string>> files) {
  // A placeholder, so that the variants come where json::Value puts them.
  fields["variants"] = nullptr;
  json::OStream out(os, /*IndentSize=*/2);
  out.object([&] {
    for (const json::Object::value_type *field : json::sortedElements(fields)) {
      if (field->first != "variants") {
        out.attribute(field->first, field->second);
        continue;
      }
      out.attributeArray("variants", [&] {
        for (auto [result, names] : llvm::zip_equal(results, files))
          out.value(variantToJSON(result, names));
      });
    }
  });
  os << '\n';
}

/// Writes `result`'s `<id>.mlir` and objects into `dir`, naming them in
/// `names`.
static Error writeVariantFiles(OutputDirectory &dir,
                               const VariantResult &result,
                               std::vector<std::string> &names) {
  // Printed straight into the file: no variant's text is held.
  std::string mlirName = result.id + ".mlir";
  if (Error err = dir.writePrinted(
          mlirName, [&](raw_ostream &os) { printBinaryIR(os, result); }))
    return err;
  names.push_back(std::move(mlirName));
  // getObjectFileName sanitizes module names (any symbol, "/../x"
  // included) and chips.
  for (const VariantObject &object : result.objects) {
    std::string name = getObjectFileName(result.id, object, result.objects);
    if (Error err = dir.write(name, object.bytes))
      return err;
    names.push_back(std::move(name));
  }
  return Error::success();
}

/// What was staged of one result: its files, or why they could not be
/// written, with what identifies the result they came from.
struct StagedVariant {
  /// False where no write was tried: one before it had failed.
  bool attempted = false;
  std::string id;
  uint64_t objectHash = 0;
  std::vector<std::string> files;
  std::string error;
};

class SweepOutputWriter::Impl {
public:
  explicit Impl(std::unique_ptr<OutputDirectory> dir) : dir(std::move(dir)) {}

  void add(const VariantResult &result) {
    if (!result.succeeded())
      return;
    // What the files are written from, so that the caller's result may move
    // on (a copy of the objects, the typed binaries, no intermediates).
    auto copy = std::make_shared<VariantResult>();
    copy->index = result.index;
    copy->id = result.id;
    copy->binaryIR = result.binaryIR;
    copy->binaries = result.binaries;
    copy->objects = result.objects;
    copy->objectHash = result.objectHash;
    auto stageCopy = [this, copy] {
      StagedVariant entry;
      if (!stage(*copy, entry))
        return;
      std::lock_guard<std::mutex> lock(mutex);
      staged.try_emplace(copy->index, std::move(entry));
    };
    // Printing the binaries creates ops in their context, which only a
    // multithreaded context allows beside the compiles still running.
    if (copy->binaries.empty() ||
        copy->binaries.front().objects.getContext()->isMultithreadingEnabled())
      getPool().async(stageCopy);
    else
      stageCopy();
  }

  Error finish(ArrayRef<VariantResult> results, const SweepHeader &header,
               ArrayRef<std::pair<std::string, std::string>> extraFiles);

private:
  /// Writes `result`'s files into `entry`, or why they could not be
  /// written; false, writing nothing, once a write has failed (a full disk,
  /// an interrupt): no further variant starts then.
  bool stage(const VariantResult &result, StagedVariant &entry) {
    if (failed)
      return false;
    entry.attempted = true;
    entry.id = result.id;
    entry.objectHash = result.objectHash;
    if (Error err = writeVariantFiles(*dir, result, entry.files)) {
      failed = true;
      entry.error = toString(std::move(err));
    }
    return true;
  }

  DefaultThreadPool &getPool() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!pool)
      pool.emplace(hardware_concurrency());
    return *pool;
  }

  /// add() is not called once finish() runs.
  void waitForStaging() {
    if (pool)
      pool->wait();
  }

  std::unique_ptr<OutputDirectory> dir;
  std::mutex mutex;
  std::map<unsigned, StagedVariant> staged;
  std::atomic<bool> failed{false};
  // Last, so destroyed first: its tasks finish while what they use lives.
  std::optional<DefaultThreadPool> pool;
};

Error SweepOutputWriter::Impl::finish(
    ArrayRef<VariantResult> results, const SweepHeader &header,
    ArrayRef<std::pair<std::string, std::string>> extraFiles) {
  waitForStaging();
  // The successful results add() did not stage, staged now, by position.
  std::vector<size_t> rest;
  size_t restBytes = 0;
  for (auto [i, result] : llvm::enumerate(results)) {
    if (!result.succeeded() || staged.count(result.index))
      continue;
    rest.push_back(i);
    for (const VariantObject &object : result.objects)
      restBytes += object.bytes.size();
  }
  std::vector<StagedVariant> late(results.size());
  // Big variants' files on threads of their own: printing a GEMM's
  // gpu.binary text takes milliseconds, and N of them one after the other
  // are wall time that N separate compiles spread out
  // (bench/h200-n-le-p). Small ones print faster than threads start.
  constexpr size_t parallelFromBytes = 256 << 10;
  bool onThreads = rest.size() > 1 && restBytes >= parallelFromBytes;
  for (size_t i : rest) {
    if (onThreads)
      getPool().async([&, i] { stage(results[i], late[i]); });
    else
      stage(results[i], late[i]);
  }
  waitForStaging();

  json::Object sweep = toJSON(header, results.size());
  std::vector<std::vector<std::string>> files(results.size());
  // Of the variants whose files were not written, the first in variant
  // order is the error.
  std::optional<std::string> firstError;
  for (auto [i, result] : llvm::enumerate(results)) {
    if (!result.succeeded())
      continue;
    auto it = staged.find(result.index);
    StagedVariant &entry = it != staged.end() ? it->second : late[i];
    if (!entry.attempted || firstError)
      continue;
    if (entry.id != result.id || entry.objectHash != result.objectHash)
      firstError =
          "variant " + result.id + " changed after its files were staged";
    else if (!entry.error.empty())
      firstError = entry.error;
    else
      files[i] = std::move(entry.files);
  }
  if (firstError)
    return createStringError(inconvertibleErrorCode(), *firstError);
  json::Array best;
  for (const BestRow &row :
       findBestRows(results, header.bestAllowsNumericsChanges))
    best.push_back(json::Object{{"gpu_module", row.gpuModule},
                                {"chip", row.chip},
                                {"target_index", row.targetIndex},
                                {"kernel", row.kernel},
                                {"variant", row.variant}});
  sweep["best_per_kernel"] = std::move(best);
  for (const auto &[name, contents] : extraFiles)
    if (Error err = dir->write(name, contents))
      return err;
  if (Error err = dir->writePrinted("manifest.json", [&](raw_ostream &os) {
        printManifest(os, std::move(sweep), results, files);
      }))
    return err;
  return dir->commit();
}

SweepOutputWriter::SweepOutputWriter(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}

SweepOutputWriter::~SweepOutputWriter() = default;

Expected<std::unique_ptr<SweepOutputWriter>>
SweepOutputWriter::create(StringRef outDir) {
  // Staged beside the out-dir and swapped in whole: an error or a signal
  // before commit() leaves the previous out-dir as it was.
  Expected<std::unique_ptr<OutputDirectory>> dir =
      OutputDirectory::create(outDir);
  if (!dir)
    return dir.takeError();
  return std::unique_ptr<SweepOutputWriter>(
      new SweepOutputWriter(std::make_unique<Impl>(std::move(*dir))));
}

void SweepOutputWriter::add(const VariantResult &result) { impl->add(result); }

Error SweepOutputWriter::finish(
    ArrayRef<VariantResult> results, const SweepHeader &header,
    ArrayRef<std::pair<std::string, std::string>> extraFiles) {
  return impl->finish(results, header, extraFiles);
}

Error writeSweepOutputs(
    StringRef outDir, ArrayRef<VariantResult> results,
    const SweepHeader &header,
    ArrayRef<std::pair<std::string, std::string>> extraFiles) {
  Expected<std::unique_ptr<SweepOutputWriter>> writer =
      SweepOutputWriter::create(outDir);
  if (!writer)
    return writer.takeError();
  return (*writer)->finish(results, header, extraFiles);
}

} // namespace fly
