//===- CacheKey.cpp - Keys of the two-level compile cache -----------------===//

#include "fly/Cache/CacheKey.h"

#include "Backend/PtxAssembler.h"
#include "Support/ChildProcess.h"
#include "Support/LLVMCompat.h"
#include "fly/Cache/VariantCodec.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

using namespace llvm;

#ifndef FLY_VERSION
#define FLY_VERSION "0.0.0"
#endif
// The fuzzers compile this file alone, with a fixed id.
#ifdef FLY_BUILD_ID
static const char *buildId() { return FLY_BUILD_ID; }
#else
#include "BuildId/BuildId.h"
static const char *buildId() { return fly::getBuildId(); }
#endif

namespace fly {

CacheKey &CacheKey::add(StringRef name, StringRef value) {
  // Parts can be megabytes of source: XXH3-128 hashes them ~80 times as fast
  // as SHA-256 (4 MiB: 0.2 ms vs 17-19 ms here; a local cache guards against
  // accidents, not adversaries, and entries are verified after loading).
  // The digest over the parts stays SHA-256.
  llvm::XXH128_hash_t hash = llvm::xxh3_128bits(
      ArrayRef(reinterpret_cast<const uint8_t *>(value.data()), value.size()));
  parts_.emplace_back(name.str(), utohexstr(hash.high64, /*LowerCase=*/true,
                                            /*Width=*/16) +
                                      utohexstr(hash.low64, /*LowerCase=*/true,
                                                /*Width=*/16));
  return *this;
}

std::string CacheKey::digest() const {
  SHA256 hash;
  for (const auto &[name, value] : parts_) {
    hash.update(name);
    hash.update("=");
    hash.update(value);
    hash.update("\n");
  }
  return toHex(hash.final(), /*LowerCase=*/true);
}

json::Object CacheKey::explain() const {
  json::Object obj;
  for (const auto &[name, value] : parts_)
    obj[name] = value.substr(0, 16);
  return obj;
}

std::string getToolchainFingerprint() {
  return std::string("llvm=" LLVM_VERSION_STRING " fly=" FLY_VERSION
                     " build=") +
         buildId();
}

/// A file's contents as a hash, "-" if absent, "not-a-regular-file" for a
/// FIFO, device or directory (never opened: it could block or never end).
/// Memoised by path, size and mtime: a toolkit is hashed once per process.
static std::string hashFile(StringRef path) {
  sys::fs::file_status status;
  if (sys::fs::status(path, status) || !sys::fs::exists(status))
    return "-";
  if (!sys::fs::is_regular_file(status))
    return "not-a-regular-file";
  std::string stamp =
      std::to_string(status.getSize()) + "@" +
      std::to_string(
          status.getLastModificationTime().time_since_epoch().count());
  static std::mutex mutex;
  static StringMap<std::pair<std::string, std::string>> memo; // stamp, hash
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(path);
        it != memo.end() && it->second.first == stamp)
      return it->second.second;
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getFile(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "unreadable:" + buffer.getError().message();
  StringRef bytes = (*buffer)->getBuffer();
  XXH128_hash_t hash = xxh3_128bits(
      ArrayRef(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  std::string text = utohexstr(hash.high64, /*LowerCase=*/true, /*Width=*/16) +
                     utohexstr(hash.low64, /*LowerCase=*/true, /*Width=*/16);
  std::lock_guard<std::mutex> lock(mutex);
  memo[path] = {stamp, text};
  return text;
}

// Memoised like hashFile: a wrapper script that runs another binary keeps its
// own bytes when that binary changes.
std::string getToolVersion(StringRef tool) {
  static std::mutex mutex;
  static StringMap<std::pair<std::string, std::string>> memo; // hash, version
  std::string hash = hashFile(tool);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(tool); it != memo.end() && it->second.first == hash)
      return it->second.second;
  }
  SmallString<128> output;
  if (sys::fs::createTemporaryFile("fly-tool-version", "txt", output))
    return "?";
  FileRemover remover(output);
  std::optional<StringRef> redirects[] = {StringRef(""), output.str(),
                                          StringRef("")};
  std::string version = "?";
  // Bounded, and in a process group of its own: a tool that hangs does not
  // hang the run, and a wrapper script's children end with it.
  if (runChildProcess(tool, {tool, "--version"}, redirects,
                      /*timeoutSeconds=*/30)
          .succeeded())
    if (ErrorOr<std::unique_ptr<MemoryBuffer>> text =
            MemoryBuffer::getFile(output, /*IsText=*/true))
      version = (*text)->getBuffer().take_back(4096).trim().str();
  std::lock_guard<std::mutex> lock(mutex);
  memo[tool] = {hash, version};
  return version;
}

BinaryPassInputs getBinaryPassInputs(mlir::ModuleOp module) {
  BinaryPassInputs inputs;
  auto addLinks = [&](mlir::ArrayAttr link) {
    if (!link)
      return;
    for (mlir::Attribute file : link)
      if (auto path = dyn_cast<mlir::StringAttr>(file))
        inputs.targetLinkFiles.push_back(path.str());
  };
  module.walk([&](mlir::gpu::GPUModuleOp gpuModule) {
    mlir::ArrayAttr targets = gpuModule.getTargetsAttr();
    if (!targets)
      return;
    for (mlir::Attribute target : targets) {
      if (auto rocdl = dyn_cast<mlir::ROCDL::ROCDLTargetAttr>(target)) {
        inputs.rocdl = true;
        addLinks(rocdl.getLink());
      } else if (auto nvvm = dyn_cast<mlir::NVVM::NVVMTargetAttr>(target)) {
        inputs.nvvm = true;
        addLinks(nvvm.getLink());
      }
    }
  });
  llvm::sort(inputs.targetLinkFiles);
  inputs.targetLinkFiles.erase(llvm::unique(inputs.targetLinkFiles),
                               inputs.targetLinkFiles.end());
  return inputs;
}

std::string getToolkitFingerprint(const BinaryPassOptions &pass,
                                  const BinaryPassInputs &inputs) {
  std::string out;
  raw_string_ostream os(out);
  const std::string &toolkit = pass.toolkitPath;
  os << "toolkit=" << toolkit << "\n";
  for (const std::string &file : pass.linkFiles)
    os << "l " << file << "=" << hashFile(file) << "\n";
  for (const std::string &file : inputs.targetLinkFiles)
    os << "link " << file << "=" << hashFile(file) << "\n";
  if (inputs.nvvm) {
    for (const char *tool : {"ptxas", "fatbinary"}) {
      std::optional<std::string> path = findCudaTool(tool, toolkit);
      os << tool << "=" << path.value_or("-");
      if (path)
        os << " " << hashFile(*path) << " " << getToolVersion(*path);
      os << "\n";
    }
  }
  if (inputs.rocdl) {
    // Upstream links the device libraries it needs from
    // <toolkit>/amdgcn/bitcode; every one there is keyed, by content.
    SmallString<256> rocm(toolkit.empty() ? mlir::ROCDL::getROCMPath()
                                          : StringRef(toolkit));
    os << "rocm=" << rocm << "\n";
    SmallString<256> bitcode(rocm);
    sys::path::append(bitcode, "amdgcn", "bitcode");
    std::vector<std::string> libraries;
    std::error_code ec;
    for (sys::fs::directory_iterator it(bitcode, ec), end; !ec && it != end;
         it.increment(ec))
      if (StringRef(it->path()).ends_with(".bc"))
        libraries.push_back(it->path());
    llvm::sort(libraries);
    for (const std::string &library : libraries)
      os << sys::path::filename(library) << "=" << hashFile(library) << "\n";
    SmallString<256> lld(rocm);
    sys::path::append(lld, "llvm", "bin", "ld.lld");
    os << "ld.lld=" << hashFile(lld) << "\n";
  }
  // PATH stays out: the tools it finds are keyed above, by path and bytes.
  for (const char *var :
       {"CUDA_PATH", "CUDA_HOME", "CUDA_ROOT", "ROCM_PATH", "HIP_PATH"})
    os << var << "=" << sys::Process::GetEnv(var).value_or("") << "\n";
  return out;
}

namespace {
/// The option categories getCommandLineFingerprint leaves out.
struct ExcludedCategories {
  std::mutex mutex;
  SmallPtrSet<const cl::OptionCategory *, 8> categories;
};
} // namespace

static ExcludedCategories &excludedCategories() {
  static ExcludedCategories excluded;
  return excluded;
}

void excludeFromCacheKey(const cl::OptionCategory &category) {
  ExcludedCategories &excluded = excludedCategories();
  std::lock_guard<std::mutex> lock(excluded.mutex);
  excluded.categories.insert(&category);
}

/// LLVM and MLIR options that change what is printed, timed or where it
/// goes, never the code made: they stay out of the key.
static bool isReportingOption(StringRef name) {
  static constexpr StringLiteral exact[] = {
      "help",
      "help-hidden",
      "help-list",
      "help-list-hidden",
      "version",
      "print-options",
      "print-all-options",
      "color",
      "info-output-file",
      "stats",
      "stats-json",
      "time-passes",
      "time-passes-per-run",
      "time-trace",
      "track-memory",
      "debug",
      "debug-only",
      "o",
      "mlir-timing",
      "mlir-timing-display",
      "mlir-disable-threading",
      "mlir-pass-statistics",
      "mlir-pass-statistics-display",
      "mlir-pretty-debuginfo",
      "mlir-print-debuginfo",
      "mlir-print-op-on-diagnostic",
      "mlir-print-stacktrace-on-diagnostic",
      "mlir-elide-elementsattrs-if-larger",
      "mlir-elide-resource-strings-if-larger",
      "mlir-print-local-scope",
      "mlir-print-value-users",
      "mlir-print-unique-ssa-ids",
      "mlir-print-assume-verified",
      "mlir-print-skip-regions",
      "mlir-print-elementsattrs-with-hex-if-larger",
      "mlir-print-op-generic",
      "mlir-use-nameloc-as-prefix"};
  if (llvm::is_contained(exact, name))
    return true;
  return name.starts_with("print-after") || name.starts_with("print-before") ||
         name.starts_with("mlir-print-ir-") || name.starts_with("view-") ||
         name.starts_with("filter-print-funcs");
}

/// Runs `print` with stdout (llvm::outs()) captured. LLVM prints an option's
/// value only to outs(); nothing else reads its value through cl::Option.
/// Held under one mutex: two captures must not interleave.
static std::string captureStdout(function_ref<void()> print) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  outs().flush();
  int capture = ::memfd_create("fly-cl-options", MFD_CLOEXEC);
  int saved = capture < 0 ? -1 : ::dup(STDOUT_FILENO);
  if (saved < 0 || ::dup2(capture, STDOUT_FILENO) < 0) {
    if (capture >= 0)
      ::close(capture);
    if (saved >= 0)
      ::close(saved);
    return "";
  }
  print();
  outs().flush();
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::string text;
  off_t size = ::lseek(capture, 0, SEEK_END);
  if (size > 0) {
    text.resize(size);
    if (::pread(capture, text.data(), size, 0) != size)
      text.clear();
  }
  ::close(capture);
  return text;
}

CommandLineFingerprint getCommandLineFingerprint() {
  auto &registered = cl::getRegisteredOptions();
  std::vector<std::pair<StringRef, cl::Option *>> options;
  {
    ExcludedCategories &excluded = excludedCategories();
    std::lock_guard<std::mutex> lock(excluded.mutex);
    for (auto &[name, option] : registered) {
      // Only options given on a command line are printed: printing every
      // registered option made some print paths write gigabytes.
      if (option->getNumOccurrences() == 0 || option->isPositional() ||
          option->isSink() || option->isConsumeAfter() ||
          isReportingOption(name))
        continue;
      if (llvm::any_of(option->Categories,
                       [&](const cl::OptionCategory *category) {
                         return excluded.categories.contains(category);
                       }))
        continue;
      options.emplace_back(name, option);
    }
  }
  llvm::sort(options, llvm::less_first());

  // Each option prints itself when its value differs from its default; the
  // printout is cut per option at the offsets recorded between them.
  std::vector<size_t> ends;
  std::string printed = captureStdout([&] {
    uint64_t written = 0;
    for (auto &[name, option] : options) {
      // The width pads the name (indent(width - name size)): below the
      // name's size it would pad by ~4 G spaces.
      option->printOptionValue(/*GlobalWidth=*/name.size() + 8,
                               /*Force=*/false);
      outs().flush();
      written = ::lseek(STDOUT_FILENO, 0, SEEK_CUR);
      ends.push_back(written);
    }
  });
  CommandLineFingerprint fingerprint;
  size_t begin = 0;
  for (auto [i, entry] : llvm::enumerate(options)) {
    auto [name, option] = entry;
    size_t end = i < ends.size() ? std::min(ends[i], printed.size()) : begin;
    StringRef diff = StringRef(printed).slice(begin, end).trim();
    begin = std::max(begin, end);
    bool given = option->getNumOccurrences() > 0;
    if (diff.contains("*cannot print option value*")) {
      // A value of a type LLVM cannot compare: known only to differ when
      // given.
      if (given)
        fingerprint.incomparable.push_back(name.str());
      continue;
    }
    if (diff.empty()) {
      // cl::list and cl::bits never print themselves.
      cl::NumOccurrencesFlag flag = option->getNumOccurrencesFlag();
      if (given && (flag == cl::ZeroOrMore || flag == cl::OneOrMore))
        fingerprint.incomparable.push_back(name.str());
      continue;
    }
    // No default to compare with: it counts only when given.
    if (diff.contains("*no default*") && !given)
      continue;
    // One space for each run of padding: the key does not depend on it.
    SmallVector<StringRef> words;
    diff.split(words, ' ', -1, /*KeepEmpty=*/false);
    fingerprint.text += llvm::join(words, " ") + "\n";
  }
  return fingerprint;
}

CacheKey makeBaseKey(StringRef source, StringRef prefixPipeline, StringRef chip,
                     StringRef commandLine) {
  CacheKey key;
  key.add("source", source)
      .add("prefix", prefixPipeline)
      .add("chip", chip)
      .add("toolchain", getToolchainFingerprint())
      .add("cl_options", commandLine);
  return key;
}

CacheKey makeBinaryKey(const CacheKey &baseKey, const HintSet &hints,
                       StringRef binaryPass, StringRef toolkitFingerprint) {
  CacheKey key;
  key.add("base", baseKey.digest())
      .add("hints", hints.canonical())
      .add("binary_pass", binaryPass)
      .add("toolkit", toolkitFingerprint)
      .add("variant_codec", kVariantCodecVersion);
  return key;
}

} // namespace fly
