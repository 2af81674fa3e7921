//===- CacheTest.cpp - Cache keys and the on-disk compile cache -----------===//

#include "fly/Cache/CacheKey.h"
#include "fly/Cache/CompileCache.h"
#include "fly/Cache/VariantCodec.h"
#include "fly/Compiler/Registration.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Base64.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

using namespace fly;
using llvm::StringRef;

namespace {

HintSet hints(StringRef text) {
  llvm::Expected<HintSet> set = HintSet::parse(text);
  EXPECT_TRUE(static_cast<bool>(set)) << llvm::toString(set.takeError());
  return set ? *set : HintSet();
}

constexpr StringRef kSource = "module { gpu.module @k {} }";
constexpr StringRef kPrefix = "rocdl-attach-target{chip=gfx942}";
constexpr StringRef kBinary = "gpu-module-to-binary{format=fatbin toolkit=/x}";
constexpr StringRef kToolkit = "toolkit=/x";

TEST(CacheKey, BaseKeyCoversInputPrefixAndChip) {
  std::string base = makeBaseKey(kSource, kPrefix, "gfx942").digest();
  EXPECT_EQ(base, makeBaseKey(kSource, kPrefix, "gfx942").digest());
  EXPECT_NE(base, makeBaseKey("module {}", kPrefix, "gfx942").digest());
  EXPECT_NE(base, makeBaseKey(kSource, "canonicalize", "gfx942").digest());
  EXPECT_NE(base, makeBaseKey(kSource, kPrefix, "gfx90a").digest());
  EXPECT_EQ(base.size(), 64u);
}

TEST(CacheKey, FullKeyChangesWithEachHintAndBinaryOptions) {
  CacheKey base = makeBaseKey(kSource, kPrefix, "gfx942");
  std::vector<std::string> sets = {"",
                                   "waves_per_eu=1",
                                   "waves_per_eu=2",
                                   "maxnreg=64",
                                   "maxnreg=64,waves_per_eu=2",
                                   "O=1",
                                   "fast_fp_math=1",
                                   "unsafe_fp_math=1",
                                   "func.foo=1 : i32",
                                   "passthrough.bar=x",
                                   "target.chip=gfx90a",
                                   "opts=-v"};
  std::set<std::string> keys;
  for (const std::string &set : sets)
    keys.insert(makeBinaryKey(base, hints(set), kBinary, kToolkit).digest());
  EXPECT_EQ(keys.size(), sets.size()) << "two hint sets share a binary key";

  std::string key =
      makeBinaryKey(base, hints("maxnreg=64"), kBinary, kToolkit).digest();
  EXPECT_NE(key, makeBinaryKey(base, hints("maxnreg=64"),
                               "gpu-module-to-binary{format=isa toolkit=/x}",
                               kToolkit)
                     .digest());
  // The canonical form, not the spelling, is keyed.
  EXPECT_EQ(
      makeBinaryKey(base, hints("waves_per_eu=2,maxnreg=64"), kBinary, kToolkit)
          .digest(),
      makeBinaryKey(base, hints(" maxnreg=64 , waves_per_eu=2"), kBinary,
                    kToolkit)
          .digest());
}

TEST(CacheKey, ChipChangesBothKeys) {
  CacheKey a = makeBaseKey(kSource, kPrefix, "gfx942");
  CacheKey b = makeBaseKey(kSource, kPrefix, "gfx90a");
  EXPECT_NE(a.digest(), b.digest());
  EXPECT_NE(makeBinaryKey(a, hints("maxnreg=64"), kBinary, kToolkit).digest(),
            makeBinaryKey(b, hints("maxnreg=64"), kBinary, kToolkit).digest());
}

TEST(CacheKey, BaseKeyIgnoresHints) {
  // The base key has no hint input at all: what the split compiler keys
  // phase 1 by is the same for every hint set (checked end to end by
  // test/Tools/fly-tune-cache.test, where new hints reuse phase 1).
  CacheKey base = makeBaseKey(kSource, kPrefix, "gfx942");
  for (const char *set : {"", "waves_per_eu=8", "maxnreg=32,O=0"}) {
    CacheKey full = makeBinaryKey(base, hints(set), kBinary, kToolkit);
    EXPECT_EQ(full.parts().front().first, "base");
    EXPECT_EQ(makeBaseKey(kSource, kPrefix, "gfx942").digest(), base.digest());
  }
}

TEST(CacheKey, EqualInputsGiveEqualKeysAcrossProcesses) {
  std::string here = makeBinaryKey(makeBaseKey(kSource, kPrefix, "gfx942"),
                                   hints("maxnreg=64"), kBinary, kToolkit)
                         .digest();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string there = makeBinaryKey(makeBaseKey(kSource, kPrefix, "gfx942"),
                                      hints("maxnreg=64"), kBinary, kToolkit)
                            .digest();
    (void)!write(fds[1], there.data(), there.size());
    _exit(0);
  }
  close(fds[1]);
  char buffer[128] = {};
  ssize_t n = read(fds[0], buffer, sizeof(buffer));
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  EXPECT_EQ(here, std::string(buffer, n > 0 ? n : 0));
}

/// A scratch directory removed at the end of the test.
class ScratchDir {
public:
  ScratchDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-key-test", path));
  }
  ~ScratchDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(StringRef name, StringRef contents,
                   unsigned mode = 0644) const {
    llvm::SmallString<256> at(path);
    llvm::sys::path::append(at, name);
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(at));
    std::error_code ec;
    {
      llvm::raw_fd_ostream os(at, ec);
      os << contents;
    }
    EXPECT_FALSE(ec) << ec.message();
    llvm::sys::fs::setPermissions(at, static_cast<llvm::sys::fs::perms>(mode));
    return std::string(at);
  }
  /// Gives `file` a modification time `seconds` after the epoch, as a
  /// rewrite in another second would.
  static void stamp(StringRef file, int seconds) {
    int fd;
    ASSERT_FALSE(llvm::sys::fs::openFileForWrite(
        file, fd, llvm::sys::fs::CD_OpenExisting, llvm::sys::fs::OF_Append));
    llvm::sys::TimePoint<> when{std::chrono::seconds(seconds)};
    EXPECT_FALSE(
        llvm::sys::fs::setLastAccessAndModificationTime(fd, when, when));
    close(fd);
  }
  llvm::SmallString<128> path;
};

BinaryPassOptions parsePass(mlir::MLIRContext &context, StringRef text) {
  mlir::FailureOr<BinaryPassOptions> options =
      parseBinaryPass(text, mlir::UnknownLoc::get(&context));
  EXPECT_TRUE(mlir::succeeded(options)) << text.str();
  return mlir::succeeded(options) ? *options : BinaryPassOptions();
}

TEST(CacheKey, ToolkitWithASpaceKeysItsOwnTools) {
  // The typed toolkit option, not the printed pass cut at its first space:
  // ptxas under "<dir>/a b" is hashed (path, version and contents).
  ScratchDir scratch;
  std::string toolkit = (scratch.path + "/a b").str();
  std::string ptxas =
      scratch.file("a b/bin/ptxas", "#!/bin/sh\necho v1\n", 0755);
  mlir::MLIRContext context;
  BinaryPassOptions pass = parsePass(context, "gpu-module-to-binary{toolkit={" +
                                                  toolkit + "} format=bin}");
  ASSERT_EQ(pass.toolkitPath, toolkit);
  BinaryPassInputs nvvm;
  nvvm.nvvm = true;
  std::string before = getToolkitFingerprint(pass, nvvm);
  EXPECT_NE(before.find("ptxas=" + ptxas + " "), std::string::npos) << before;
  EXPECT_NE(before.find(" v1"), std::string::npos) << before;
  // Same size, new bytes, new mtime: a new ptxas.
  scratch.file("a b/bin/ptxas", "#!/bin/sh\necho v2\n", 0755);
  ScratchDir::stamp(ptxas, 1000);
  std::string after = getToolkitFingerprint(pass, nvvm);
  EXPECT_NE(before, after);
  EXPECT_NE(after.find(" v2"), std::string::npos) << after;
}

TEST(CacheKey, LinkedLibrariesAreKeyedByContents) {
  ScratchDir scratch;
  std::string helper = scratch.file("helper.bc", "BC-one");
  std::string extra = scratch.file("extra.bc", "EX-one");
  mlir::MLIRContext context;
  BinaryPassOptions pass =
      parsePass(context, "gpu-module-to-binary{l=" + extra + "}");
  BinaryPassInputs inputs;
  inputs.rocdl = true;
  inputs.targetLinkFiles = {helper};
  std::string first = getToolkitFingerprint(pass, inputs);
  EXPECT_EQ(first, getToolkitFingerprint(pass, inputs));
  // Same size, other contents (size + mtime alone would not tell).
  scratch.file("helper.bc", "BC-two");
  ScratchDir::stamp(helper, 2000);
  std::string second = getToolkitFingerprint(pass, inputs);
  EXPECT_NE(first, second) << "a changed link library keeps its key";
  scratch.file("extra.bc", "EX-two");
  ScratchDir::stamp(extra, 2000);
  EXPECT_NE(second, getToolkitFingerprint(pass, inputs))
      << "a changed l= library keeps its key";
}

TEST(CacheKey, DeviceLibrariesAreKeyedByContents) {
  ScratchDir scratch;
  std::string ocml = scratch.file("rocm/amdgcn/bitcode/ocml.bc", "ocml-1");
  mlir::MLIRContext context;
  BinaryPassOptions pass = parsePass(
      context,
      ("gpu-module-to-binary{toolkit=" + scratch.path + "/rocm}").str());
  BinaryPassInputs inputs;
  inputs.rocdl = true;
  std::string first = getToolkitFingerprint(pass, inputs);
  EXPECT_NE(first.find("ocml.bc="), std::string::npos) << first;
  scratch.file("rocm/amdgcn/bitcode/ocml.bc", "ocml-2");
  ScratchDir::stamp(ocml, 3000);
  EXPECT_NE(first, getToolkitFingerprint(pass, inputs));
}

TEST(CacheKey, TargetsNameTheirLinkLibraries) {
  mlir::MLIRContext context;
  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(
          R"(module {
  gpu.module @a [#rocdl.target<chip = "gfx942", link = ["h.bc", "g.bc"]>] {}
  gpu.module @b [#nvvm.target<chip = "sm_90", link = ["h.bc"]>] {}
})",
          &context);
  ASSERT_TRUE(module);
  BinaryPassInputs inputs = getBinaryPassInputs(*module);
  EXPECT_TRUE(inputs.rocdl);
  EXPECT_TRUE(inputs.nvvm);
  EXPECT_EQ(inputs.targetLinkFiles, (std::vector<std::string>{"g.bc", "h.bc"}));
}

llvm::cl::OptionCategory keyTestCategory("fly cache key test");
llvm::cl::opt<unsigned> keyTestKnob("fly-key-test-knob", llvm::cl::init(0),
                                    llvm::cl::Hidden);
llvm::cl::list<std::string> keyTestList("fly-key-test-list", llvm::cl::Hidden);
llvm::cl::opt<std::string> keyTestOutput("fly-key-test-output",
                                         llvm::cl::cat(keyTestCategory),
                                         llvm::cl::Hidden);

void parseArguments(std::vector<const char *> args) {
  args.insert(args.begin(), "CacheTest");
  ASSERT_TRUE(llvm::cl::ParseCommandLineOptions(args.size(), args.data(), "",
                                                &llvm::errs()));
}

TEST(CacheKey, NonDefaultCommandLineOptionsAreKeyed) {
  excludeFromCacheKey(keyTestCategory);
  CommandLineFingerprint plain = getCommandLineFingerprint();
  EXPECT_TRUE(plain.incomparable.empty());
  EXPECT_EQ(plain.text, getCommandLineFingerprint().text) << "unstable";
  EXPECT_EQ(plain.text.find("fly-key-test"), std::string::npos) << plain.text;

  // LLVM's own: the cache-poisoning flag of the report.
  ASSERT_TRUE(llvm::cl::getRegisteredOptions().count("stress-regalloc"));
  parseArguments({"--stress-regalloc=8"});
  CommandLineFingerprint stressed = getCommandLineFingerprint();
  EXPECT_NE(stressed.text.find("stress-regalloc"), std::string::npos);
  EXPECT_NE(makeBaseKey(kSource, kPrefix, "gfx942", plain.text).digest(),
            makeBaseKey(kSource, kPrefix, "gfx942", stressed.text).digest());
  // Given again at its default: the key of a plain run.
  parseArguments({"--stress-regalloc=0"});
  EXPECT_EQ(getCommandLineFingerprint().text, plain.text);
  llvm::cl::getRegisteredOptions()["stress-regalloc"]->reset();

  parseArguments({"--fly-key-test-knob=3"});
  EXPECT_NE(getCommandLineFingerprint().text.find("fly-key-test-knob"),
            std::string::npos);
  llvm::cl::getRegisteredOptions()["fly-key-test-knob"]->reset();
  // A tool's own options (an output path) never reach the key.
  parseArguments({"--fly-key-test-output=/some/where"});
  EXPECT_EQ(getCommandLineFingerprint().text, plain.text);
  // A list cannot be compared with its default: the cache is bypassed.
  parseArguments({"--fly-key-test-list=a"});
  EXPECT_EQ(getCommandLineFingerprint().incomparable,
            std::vector<std::string>{"fly-key-test-list"});
  // The other tests of this process see default options.
  keyTestList.reset();
  keyTestOutput.reset();
  EXPECT_EQ(getCommandLineFingerprint().text, plain.text);
  EXPECT_TRUE(getCommandLineFingerprint().incomparable.empty());
}

TEST(CacheEntry, FrameRoundTripsAndRejectsDamage) {
  std::string payload = "pre-binary module bytes \x00\x01\x02 end";
  std::string framed = frameCacheEntry("prebinary:abc", payload);
  ASSERT_TRUE(unframeCacheEntry(framed).has_value());
  EXPECT_EQ(unframeCacheEntry(framed)->payload, payload);
  EXPECT_EQ(unframeCacheEntry(framed)->key, "prebinary:abc");
  EXPECT_EQ(unframeCacheEntry(framed)->toolchain, getToolchainFingerprint());
  // The checksum covers the key: a key edited in place is damage.
  std::string rekeyed = framed;
  rekeyed.replace(rekeyed.find("abc"), 3, "abd");
  EXPECT_FALSE(unframeCacheEntry(rekeyed));
  EXPECT_FALSE(unframeCacheEntry(framed.substr(0, framed.size() - 1)));
  std::string flipped = framed;
  flipped.back() ^= 1;
  EXPECT_FALSE(unframeCacheEntry(flipped));
  EXPECT_FALSE(unframeCacheEntry("garbage\n"));
  EXPECT_FALSE(unframeCacheEntry(""));
}

class CompileCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("fly-cache-test", dir));
    // Trusted whatever the umask: the user's own, not group-writable.
    ASSERT_FALSE(llvm::sys::fs::setPermissions(dir, llvm::sys::fs::owner_all));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  CacheConfig config() {
    CacheConfig c;
    c.directory = std::string(dir);
    return c;
  }
  std::vector<std::string> entries() {
    std::vector<std::string> out;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      out.push_back(llvm::sys::path::filename(it->path()).str());
    return out;
  }
  llvm::SmallString<128> dir;
  CacheKey key = makeBaseKey(kSource, kPrefix, "gfx942");
};

TEST_F(CompileCacheTest, StoredEntryIsFoundByANewCache) {
  CompileCache(config()).store("prebinary", key, "payload");
  CompileCache fresh(config());
  std::optional<std::string> got = fresh.lookup("prebinary", key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, "payload");
  EXPECT_FALSE(fresh.lookup("binary", key).has_value());
}

TEST_F(CompileCacheTest, DamagedEntryIsDiscardedWithAWarning) {
  CompileCache(config()).store("prebinary", key, "payload");
  ASSERT_EQ(entries().size(), 1u);
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, entries().front());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << "FLYCACHE1\ntruncated";
  }
  CompileCache fresh(config());
  EXPECT_FALSE(fresh.lookup("prebinary", key).has_value());
  std::vector<std::string> warnings = fresh.takeWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.front().find("truncated or corrupt"), std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists(path)) << "damaged entry kept";
}

TEST_F(CompileCacheTest, DisabledCacheNeitherReadsNorWrites) {
  CacheConfig off = config();
  off.enabled = false;
  CompileCache cache(off);
  cache.store("prebinary", key, "payload");
  EXPECT_FALSE(cache.lookup("prebinary", key).has_value());
  EXPECT_TRUE(entries().empty());
  int computed = 0;
  bool hit = true;
  // Disabled, a second call with the same key computes again.
  for (int call = 0; call < 2; ++call)
    cache.getOrCompute(
        "prebinary", key,
        [&] {
          ++computed;
          return std::optional<std::string>("x");
        },
        hit);
  EXPECT_EQ(computed, 2);
  EXPECT_FALSE(hit);
}

TEST_F(CompileCacheTest, UnusableDirectoryDegradesToMemoryWithAWarning) {
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, "a-file");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
  }
  CacheConfig bad = config();
  bad.directory = (file + "/cache").str();
  CompileCache cache(bad);
  cache.store("prebinary", key, "payload");
  EXPECT_EQ(cache.lookup("prebinary", key).value_or(""), "payload");
  std::vector<std::string> warnings = cache.takeWarnings();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings.front().find("unusable"), std::string::npos);
}

TEST_F(CompileCacheTest, ConcurrentProcessesComputeAKeyOnce) {
  llvm::SmallString<256> counter(dir);
  llvm::sys::path::append(counter, "computed.txt");
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      CompileCache cache(config());
      bool hit = false;
      std::optional<std::string> got = cache.getOrCompute(
          "prebinary", key,
          [&]() -> std::optional<std::string> {
            std::error_code ec;
            llvm::raw_fd_ostream os(counter, ec, llvm::sys::fs::OF_Append);
            os << getpid() << "\n";
            os.close();
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            return std::string("the payload");
          },
          hit);
      _exit(got && *got == "the payload" ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto text = llvm::MemoryBuffer::getFile(counter);
  ASSERT_TRUE(static_cast<bool>(text));
  EXPECT_EQ(StringRef((*text)->getBuffer()).count('\n'), 1u)
      << "computed by: " << (*text)->getBuffer().str();
}

TEST_F(CompileCacheTest, KeyStoredBetweenLookupAndLockIsRead) {
  // Another process stores the key and lets go of its lock after our lookup
  // missed, before we lock it.
  CompileCache ours(config()), theirs(config());
  ASSERT_FALSE(ours.lookup("prebinary", key));
  theirs.store("prebinary", key, "their payload");
  bool hit = false;
  bool computed = false;
  std::optional<std::string> got = ours.computeAfterMiss(
      "prebinary", key,
      [&]() -> std::optional<std::string> {
        computed = true;
        return std::string("our payload");
      },
      hit);
  EXPECT_FALSE(computed);
  EXPECT_TRUE(hit);
  EXPECT_EQ(got.value_or(""), "their payload");
}

/// Variants with typed gpu.binary ops, in a context that knows the targets.
class VariantCodecTest : public ::testing::Test {
protected:
  VariantCodecTest() {
    mlir::DialectRegistry registry;
    registerCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  template <typename T> T parse(StringRef text) {
    return llvm::cast<T>(mlir::parseAttribute(text, &context));
  }

  /// A variant whose gpu.binary @k holds one #rocdl.target object with
  /// `bytes`, properties and a kernel table.
  VariantResult makeVariant(StringRef bytes) {
    VariantResult result;
    result.binaryPass = kBinary.str();
    result.replayMs = 12.5;
    auto object = mlir::gpu::ObjectAttr::get(
        &context, parse<mlir::Attribute>(R"(#rocdl.target<chip = "gfx942">)"),
        mlir::gpu::CompilationTarget::Binary,
        mlir::StringAttr::get(&context, bytes),
        parse<mlir::DictionaryAttr>("{O = 3 : i32, zero = -0.0 : f32}"),
        parse<mlir::gpu::KernelTableAttr>(
            R"(#gpu.kernel_table<[#gpu.kernel_metadata<"kern", () -> (), )"
            R"(metadata = {vgpr_count = 64 : i64}>]>)"));
    setBinaries(result,
                {{"k", nullptr, mlir::ArrayAttr::get(&context, {object})}});
    return result;
  }

  mlir::MLIRContext context;
};

TEST_F(VariantCodecTest, RoundTripsTypedBinaries) {
  std::string elf("\x7f"
                  "ELF\x00\xff",
                  6);
  VariantResult result = makeVariant(elf);
  std::optional<VariantResult> back =
      decodeVariant(encodeVariant(result), context);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->objectHash, result.objectHash);
  EXPECT_EQ(back->replayMs, 12.5);
  ASSERT_EQ(back->binaries.size(), 1u);
  // The same uniqued attributes: the gpu.binary built from them is the same.
  EXPECT_EQ(back->binaries[0].objects, result.binaries[0].objects);
  EXPECT_EQ(printBinaries(back->binaries), printBinaries(result.binaries));
  ASSERT_EQ(back->objects.size(), 1u);
  EXPECT_EQ(back->objects[0].bytes, elf);
  EXPECT_EQ(back->objects[0].format, "bin");
  ASSERT_EQ(back->objects[0].kernels.size(), 1u);
  EXPECT_EQ(back->objects[0].kernels[0].metadata.getInteger("vgpr_count"), 64);
  // encode is a fixed point (CacheEntryFuzzer's invariant), -0.0 included
  // (llvm::json once turned it into 0).
  EXPECT_EQ(encodeVariant(*back), encodeVariant(result));
}

TEST_F(VariantCodecTest, CarriesWhereTheIsaCameFrom) {
  VariantResult result = makeVariant("obj");
  result.isaFrom = 3;
  result.codegenContinued = 2;
  std::optional<VariantResult> back =
      decodeVariant(encodeVariant(result), context);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->isaFrom, std::optional<unsigned>(3));
  EXPECT_EQ(back->codegenContinued, 2u);
  // A whole compile says nothing of it.
  std::string whole = encodeVariant(makeVariant("obj"));
  EXPECT_EQ(whole.find("codegen_continued"), std::string::npos);
  back = decodeVariant(whole, context);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->codegenContinued, 0u);
}

TEST_F(VariantCodecTest, StoresEachObjectOnce) {
  std::string bytes;
  for (unsigned i = 0; i < 64 * 1024; ++i)
    bytes.push_back(static_cast<char>((i * 2654435761u) >> 13));
  VariantResult result = makeVariant(bytes);
  std::string payload = encodeVariant(result);
  std::string base64 = llvm::encodeBase64(bytes);
  size_t at = payload.find(base64);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(payload.find(base64, at + 1), std::string::npos);
  // Nothing else of that size: the printed gpu.binary (the `.mlir`, bytes
  // escaped) is not stored.
  EXPECT_LT(payload.size(), base64.size() + 1024);
  EXPECT_GT(printBinaries(result.binaries).size(), bytes.size() * 2);
}

TEST_F(VariantCodecTest, IntermediatesOnlyWhenAsked) {
  VariantResult result = makeVariant("obj");
  result.intermediates.push_back({"k", 0, "define void @f()", "s_endpgm"});
  std::string cached = encodeVariant(result);
  EXPECT_EQ(cached.find("s_endpgm"), std::string::npos);
  std::optional<VariantResult> back =
      decodeVariant(encodeVariant(result, /*withIntermediates=*/true), context);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->intermediates.size(), 1u);
  EXPECT_EQ(back->intermediates[0].llvmIR, "define void @f()");
  EXPECT_EQ(back->intermediates[0].isa, "s_endpgm");
}

TEST_F(VariantCodecTest, RejectsBadPayloadsSilently) {
  unsigned diagnostics = 0;
  mlir::ScopedDiagnosticHandler count(&context, [&](mlir::Diagnostic &) {
    ++diagnostics;
    return mlir::success();
  });
  std::string good = encodeVariant(makeVariant("obj"));
  ASSERT_TRUE(decodeVariant(good, context).has_value());
  EXPECT_FALSE(decodeVariant("{\"binaries\": 3}", context).has_value());
  EXPECT_FALSE(decodeVariant("not json", context).has_value());
  // An object whose bytes do not hash to the stored hash.
  std::string changed = good;
  size_t bytes = changed.find("\"b2Jq\"");
  ASSERT_NE(bytes, std::string::npos);
  changed.replace(bytes, 6, "\"b2Jr\"");
  EXPECT_FALSE(decodeVariant(changed, context).has_value());
  // Attributes that do not parse, or parse to the wrong kind.
  for (auto [from, to] :
       {std::pair<StringRef, StringRef>{"#rocdl.target<", "#rocdl.targt<"},
        {"#gpu.kernel_table", "#gpu.kernel_tabel"},
        {"\"format\":\"bin\"", "\"format\":\"bogus\""}}) {
    std::string bad = good;
    size_t pos = bad.find(from);
    ASSERT_NE(pos, std::string::npos) << from.str();
    bad.replace(pos, from.size(), to);
    EXPECT_FALSE(decodeVariant(bad, context).has_value()) << bad;
  }
  EXPECT_EQ(diagnostics, 0u);
}

TEST(CacheKey, BinaryKeyNamesThePayloadLayout) {
  CacheKey key = makeBinaryKey(makeBaseKey(kSource, kPrefix, "gfx942"),
                               hints("maxnreg=64"), kBinary, kToolkit);
  EXPECT_TRUE(key.explain().get("variant_codec"));
}

} // namespace
