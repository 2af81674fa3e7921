//===- ManifestTest.cpp - A sweep's out-dir and manifest.json -------------===//
//
// manifest.json is json::Value's canonical printing of the whole manifest,
// and writing it holds one variant's entry at a time: the heap's high-water
// mark while writing 16 variants is that of writing one, not 16 times it.
// The heap is measured by counting what operator new hands out (this file
// replaces it for the test binary). A variant holds its gpu.binary ops as
// attributes only: their text is printed into `<id>.mlir`, not kept.
// Files staged while a sweep compiles (SweepOutputWriter::add) make the
// same out-dir as writing them all at the end.
//
//===----------------------------------------------------------------------===//

#include "fly/Replay/Manifest.h"
#include "fly/Compiler/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <new>
#include <thread>

namespace {
/// Bytes operator new handed out and not yet deleted, and their highest
/// value since resetHeapHighWater.
std::atomic<size_t> heapLive{0}, heapHighWater{0};

void *countAllocation(void *p) {
  if (!p)
    return nullptr;
  size_t live = heapLive += malloc_usable_size(p);
  size_t high = heapHighWater.load();
  while (live > high && !heapHighWater.compare_exchange_weak(high, live)) {
  }
  return p;
}

void countedFree(void *p) {
  if (!p)
    return;
  heapLive -= malloc_usable_size(p);
  std::free(p);
}

void *countedAlloc(size_t size) {
  return countAllocation(std::malloc(size ? size : 1));
}

void *countedAlignedAlloc(size_t size, std::align_val_t align) {
  void *p = nullptr;
  if (posix_memalign(&p, std::max(sizeof(void *), size_t(align)),
                     size ? size : 1))
    return nullptr;
  return countAllocation(p);
}

void *orThrow(void *p) {
  if (!p)
    throw std::bad_alloc();
  return p;
}
} // namespace

void *operator new(size_t n) { return orThrow(countedAlloc(n)); }
void *operator new[](size_t n) { return orThrow(countedAlloc(n)); }
void *operator new(size_t n, const std::nothrow_t &) noexcept {
  return countedAlloc(n);
}
void *operator new[](size_t n, const std::nothrow_t &) noexcept {
  return countedAlloc(n);
}
void *operator new(size_t n, std::align_val_t a) {
  return orThrow(countedAlignedAlloc(n, a));
}
void *operator new[](size_t n, std::align_val_t a) {
  return orThrow(countedAlignedAlloc(n, a));
}
void *operator new(size_t n, std::align_val_t a,
                   const std::nothrow_t &) noexcept {
  return countedAlignedAlloc(n, a);
}
void *operator new[](size_t n, std::align_val_t a,
                     const std::nothrow_t &) noexcept {
  return countedAlignedAlloc(n, a);
}
void operator delete(void *p) noexcept { countedFree(p); }
void operator delete[](void *p) noexcept { countedFree(p); }
void operator delete(void *p, size_t) noexcept { countedFree(p); }
void operator delete[](void *p, size_t) noexcept { countedFree(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept {
  countedFree(p);
}
void operator delete[](void *p, const std::nothrow_t &) noexcept {
  countedFree(p);
}
void operator delete(void *p, std::align_val_t) noexcept { countedFree(p); }
void operator delete[](void *p, std::align_val_t) noexcept { countedFree(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept {
  countedFree(p);
}
void operator delete[](void *p, size_t, std::align_val_t) noexcept {
  countedFree(p);
}
void operator delete(void *p, std::align_val_t,
                     const std::nothrow_t &) noexcept {
  countedFree(p);
}
void operator delete[](void *p, std::align_val_t,
                       const std::nothrow_t &) noexcept {
  countedFree(p);
}

using namespace fly;

namespace {

/// A compiled variant of a gpu.module of `kernels` kernels, as a ROCDL
/// replay records it (no MLIR needed: the out-dir is written from these).
VariantResult makeVariant(unsigned index, unsigned kernels) {
  VariantResult v;
  v.index = index;
  v.id = "v" + std::to_string(index);
  v.binaryPass = "gpu-module-to-binary{format=bin}";
  v.binaryIR = "gpu.binary @kernels [#gpu.object<...>]\n";
  v.replayMs = 1.25 + index;
  v.objectHash = 0x1234 + index;
  VariantObject &object = v.objects.emplace_back();
  object.gpuModule = "kernels";
  object.target = "#rocdl.target<chip = \"gfx942\">";
  object.family = "rocdl";
  object.chip = "gfx942";
  object.format = "bin";
  object.extension = ".hsaco";
  object.bytes = std::string(64, char('a' + index % 26));
  object.registerSource = "kernel table";
  for (unsigned k = 0; k < kernels; ++k)
    object.kernels.push_back(
        {"kernel_" + std::to_string(k),
         llvm::json::Object{{"vgpr_count", int64_t(32 + (k + index) % 64)},
                            {"sgpr_count", int64_t(16)},
                            {"agpr_count", int64_t(0)},
                            {"vgpr_spill_count", int64_t(0)},
                            {"sgpr_spill_count", int64_t(0)},
                            {"private_segment_fixed_size", int64_t(0)},
                            {"group_segment_fixed_size", int64_t(0)},
                            {"wavefront_size", int64_t(64)}}});
  return v;
}

class ManifestTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("fly-manifest-test", root));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  std::string path(llvm::StringRef name) {
    llvm::SmallString<256> p(root);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }

  /// The heap's high-water mark above what was live before, while writing
  /// `results` into a fresh out-dir.
  size_t heapWhileWriting(llvm::ArrayRef<VariantResult> results,
                          llvm::StringRef name) {
    SweepHeader header;
    header.tool = "fly-test";
    header.binaryPass = results.front().binaryPass;
    size_t before = heapLive.load();
    heapHighWater = before;
    llvm::Error err = writeSweepOutputs(path(name), results, header);
    size_t high = heapHighWater.load();
    EXPECT_FALSE(err) << llvm::toString(std::move(err));
    return high - before;
  }

  llvm::SmallString<128> root;
};

TEST_F(ManifestTest, ManifestIsTheCanonicalPrintingOfTheWholeObject) {
  std::vector<VariantResult> results = {makeVariant(0, 3), makeVariant(1, 3)};
  VariantResult failed;
  failed.index = 2;
  failed.id = "v2";
  failed.error = "error: ptxas said no";
  results.push_back(std::move(failed));
  SweepHeader header;
  header.tool = "fly-test";
  header.input = "k.mlir";
  header.binaryPass = "gpu-module-to-binary{format=bin}";
  header.warnings = {"a warning"};
  ASSERT_FALSE(writeSweepOutputs(path("out"), results, header));

  auto buffer = llvm::MemoryBuffer::getFile(path("out/manifest.json"));
  ASSERT_TRUE(buffer);
  llvm::StringRef text = (*buffer)->getBuffer();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  // Keys sorted at every level, two-space indent, one trailing newline:
  // what formatv("{0:2}") makes of the whole manifest as one json::Value.
  EXPECT_EQ(text.str(), llvm::formatv("{0:2}", *parsed).str() + "\n");

  const llvm::json::Array *variants =
      parsed->getAsObject()->getArray("variants");
  ASSERT_TRUE(variants);
  ASSERT_EQ(variants->size(), 3u);
  for (auto [entry, result] : llvm::zip_equal(*variants, results)) {
    EXPECT_EQ(entry.getAsObject()->getString("id"), result.id);
    const llvm::json::Array *files = entry.getAsObject()->getArray("files");
    ASSERT_TRUE(files);
    EXPECT_EQ(files->size(), result.succeeded() ? 2u : 0u);
  }
  EXPECT_EQ(parsed->getAsObject()->getInteger("variant_count"), 3);
  EXPECT_TRUE(llvm::sys::fs::exists(path("out/v1.kernels.gfx942.hsaco")));
  EXPECT_FALSE(llvm::sys::fs::exists(path("out/v2.mlir")));
}

TEST_F(ManifestTest, WritingHoldsOneVariantsManifestEntryAtATime) {
  constexpr unsigned kKernels = 400;
  std::vector<VariantResult> one = {makeVariant(0, kKernels)};
  std::vector<VariantResult> many;
  for (unsigned i = 0; i < 16; ++i)
    many.push_back(makeVariant(i, kKernels));
  size_t forOne = heapWhileWriting(one, "one");
  size_t forMany = heapWhileWriting(many, "many");
  EXPECT_GT(forOne, 0u);
  // The whole manifest as one tree, or its whole text, would be 16 times
  // one variant's.
  EXPECT_LT(forMany, 2 * forOne)
      << "one variant: " << forOne << " bytes, 16 variants: " << forMany;
}

TEST_F(ManifestTest, VariantTextIsPrintedIntoItsFileNotHeld) {
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<
      mlir::ModuleOp>(
      R"mlir(gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx942">,
    bin = "\7FELF object bytes">])mlir",
      &context);
  ASSERT_TRUE(module);
  VariantResult variant = makeVariant(0, 1);
  variant.binaryIR.clear();
  recordBinaries(variant, *module);
  ASSERT_EQ(variant.binaries.size(), 1u);
  EXPECT_TRUE(variant.binaryIR.empty());
  std::string printed = printBinaryIR(variant);
  EXPECT_NE(printed.find("gpu.binary @kernels"), std::string::npos) << printed;

  SweepHeader header;
  header.tool = "fly-test";
  ASSERT_FALSE(writeSweepOutputs(path("out"), {variant}, header));
  auto file = llvm::MemoryBuffer::getFile(path("out/" + variant.id + ".mlir"));
  ASSERT_TRUE(file);
  EXPECT_EQ((*file)->getBuffer().str(), printed);

  // What outlives the context keeps the same text.
  keepBinaryIR(variant);
  EXPECT_EQ(variant.binaryIR, printed);
}

/// Every file of the out-dir `dir`, by name, with its bytes.
std::map<std::string, std::string> readOutDir(llvm::StringRef dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    auto buffer = llvm::MemoryBuffer::getFile(it->path());
    EXPECT_TRUE(bool(buffer)) << it->path();
    if (buffer)
      files[llvm::sys::path::filename(it->path()).str()] =
          (*buffer)->getBuffer().str();
  }
  EXPECT_FALSE(ec) << ec.message();
  return files;
}

/// The names directly in `dir`.
std::vector<std::string> listDir(llvm::StringRef dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    names.push_back(llvm::sys::path::filename(it->path()).str());
  llvm::sort(names);
  return names;
}

TEST_F(ManifestTest, FilesStagedWhileCompilingMakeTheSameOutDir) {
  std::vector<VariantResult> results;
  for (unsigned i = 0; i < 6; ++i)
    results.push_back(makeVariant(i, 2));
  results[3].objects.clear();
  results[3].error = "error: ptxas said no";
  SweepHeader header;
  header.tool = "fly-test";
  header.binaryPass = results.front().binaryPass;
  ASSERT_FALSE(writeSweepOutputs(path("at-end"), results, header));

  auto writer = SweepOutputWriter::create(path("staged"));
  ASSERT_TRUE(bool(writer)) << llvm::toString(writer.takeError());
  // In another order than the variants', from threads of their own, as
  // variants finish; variant 1 is left to finish().
  std::vector<std::thread> finishing;
  for (unsigned i : {5u, 0u, 3u, 2u, 4u})
    finishing.emplace_back([&, i] { (*writer)->add(results[i]); });
  for (std::thread &thread : finishing)
    thread.join();
  ASSERT_FALSE((*writer)->finish(results, header));

  std::map<std::string, std::string> atEnd = readOutDir(path("at-end"));
  EXPECT_EQ(atEnd.size(), 12u); // 5 x (.mlir, object), manifest, record
  EXPECT_EQ(readOutDir(path("staged")), atEnd);
}

TEST_F(ManifestTest, BigOutDirsWrittenAtTheEndMatchStagedOnes) {
  // 512 KiB of objects: written on threads when left to the end.
  std::vector<VariantResult> results;
  for (unsigned i = 0; i < 8; ++i) {
    results.push_back(makeVariant(i, 2));
    results.back().objects.front().bytes = std::string(64 << 10, char('a' + i));
  }
  SweepHeader header;
  header.tool = "fly-test";
  ASSERT_FALSE(writeSweepOutputs(path("at-end"), results, header));
  auto writer = SweepOutputWriter::create(path("staged"));
  ASSERT_TRUE(bool(writer)) << llvm::toString(writer.takeError());
  for (const VariantResult &result : results)
    (*writer)->add(result);
  ASSERT_FALSE((*writer)->finish(results, header));
  std::map<std::string, std::string> atEnd = readOutDir(path("at-end"));
  EXPECT_EQ(atEnd.size(), 18u);
  EXPECT_EQ(readOutDir(path("staged")), atEnd);
}

TEST_F(ManifestTest, AResultThatChangedAfterStagingReplacesNothing) {
  std::vector<VariantResult> results = {makeVariant(0, 1), makeVariant(1, 1)};
  SweepHeader header;
  header.tool = "fly-test";
  auto writer = SweepOutputWriter::create(path("out"));
  ASSERT_TRUE(bool(writer)) << llvm::toString(writer.takeError());
  (*writer)->add(results[1]);
  results[1].objects.front().bytes = "other bytes";
  results[1].objectHash ^= 1;
  llvm::Error err = (*writer)->finish(results, header);
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            "variant v1 changed after its files were staged");
  writer->reset();
  // No out-dir, and no staging directory beside it.
  EXPECT_EQ(listDir(root), std::vector<std::string>{});
}

TEST_F(ManifestTest, AWriterNeverFinishedLeavesThePreviousOutDir) {
  std::vector<VariantResult> results = {makeVariant(0, 1)};
  SweepHeader header;
  header.tool = "fly-test";
  ASSERT_FALSE(writeSweepOutputs(path("out"), results, header));
  std::map<std::string, std::string> before = readOutDir(path("out"));
  {
    auto writer = SweepOutputWriter::create(path("out"));
    ASSERT_TRUE(bool(writer)) << llvm::toString(writer.takeError());
    VariantResult other = makeVariant(1, 1);
    (*writer)->add(other);
  }
  EXPECT_EQ(readOutDir(path("out")), before);
  EXPECT_EQ(listDir(root), (std::vector<std::string>{".out.fly-lock", "out"}));
}

} // namespace
