//===- LaunchSpec.cpp - Parse and check a launch spec ---------------------===//

#include "fly/Runtime/LaunchSpec.h"

#include "fly/Support/BoundedJSON.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <new>

using namespace llvm;

namespace fly::rt {

static const char *const kTypeNames[] = {"i8",  "i16",  "i32", "i64",
                                         "f16", "bf16", "f32", "f64"};
static const size_t kTypeSizes[] = {1, 2, 4, 8, 2, 2, 4, 8};

StringRef elementTypeName(ElementType type) {
  return kTypeNames[static_cast<int>(type)];
}
size_t elementSize(ElementType type) {
  return kTypeSizes[static_cast<int>(type)];
}
static bool isFloat(ElementType type) { return type >= ElementType::F16; }

static const fltSemantics &semantics(ElementType type) {
  return type == ElementType::F16    ? APFloat::IEEEhalf()
         : type == ElementType::BF16 ? APFloat::BFloat()
         : type == ElementType::F32  ? APFloat::IEEEsingle()
                                     : APFloat::IEEEdouble();
}

/// The bits of `value` as `type`, in the low bytes; false if it does not fit.
static bool encode(ElementType type, double value, uint64_t &bits) {
  if (type == ElementType::F32 || type == ElementType::F64) { // fast paths
    float f = static_cast<float>(value);
    bits = type == ElementType::F64 ? bit_cast<uint64_t>(value)
                                    : bit_cast<uint32_t>(f);
    return std::isfinite(f) || !std::isfinite(value) ||
           type == ElementType::F64;
  }
  if (isFloat(type)) {
    APFloat f(value);
    bool lost;
    f.convert(semantics(type), APFloat::rmNearestTiesToEven, &lost);
    bits = f.bitcastToAPInt().getZExtValue();
    return f.isFinite() || !std::isfinite(value);
  }
  unsigned width = 8 * elementSize(type);
  // Signed or unsigned: both spellings of the bits are accepted.
  double lo = -std::ldexp(1.0, width - 1), hi = std::ldexp(1.0, width);
  if (!(value >= lo && value < hi) || value != std::floor(value))
    return false;
  bits = value < 0 ? static_cast<uint64_t>(static_cast<int64_t>(value))
                   : static_cast<uint64_t>(value);
  return true;
}

double readElement(ElementType type, const uint8_t *data, size_t i) {
  size_t size = elementSize(type);
  uint64_t bits = 0;
  std::memcpy(&bits, data + i * size, size); // little-endian host
  if (type == ElementType::F32 || type == ElementType::F64)
    return type == ElementType::F32 ? bit_cast<float>(uint32_t(bits))
                                    : bit_cast<double>(bits);
  if (isFloat(type))
    return APFloat(semantics(type), APInt(8 * size, bits)).convertToDouble();
  return static_cast<double>(SignExtend64(bits, 8 * size));
}

namespace {

/// The dynamic part of the first error; json::Path carries where it is.
struct Context {
  std::string detail;
  StringMap<int> bufferIndex;
  const std::vector<BufferSpec> *buffers = nullptr;
  std::string specDir;

  bool fail(json::Path path, const Twine &message) {
    if (detail.empty())
      detail = message.str();
    path.report("invalid value");
    return false;
  }
  bool knownKeys(const json::Value &value, json::Path path,
                 ArrayRef<StringRef> keys) {
    const json::Object *object = value.getAsObject();
    if (!object)
      return fail(path, "expected an object");
    for (const auto &entry : *object)
      if (!is_contained(keys, StringRef(entry.first)))
        return fail(path.field(entry.first),
                    "unknown key (expected one of: " + join(keys, ", ") + ")");
    return true;
  }
  bool integer(const json::Value *value, json::Path path, int64_t &out,
               int64_t min, int64_t max) {
    std::optional<int64_t> v = value ? value->getAsInteger() : std::nullopt;
    if (!v)
      return fail(path, "expected an integer");
    if (*v < min || *v > max)
      return fail(path, Twine(*v) + " is out of range [" + Twine(min) + ", " +
                            Twine(max) + "]");
    out = *v;
    return true;
  }
  bool type(const json::Value *value, json::Path path, ElementType &out) {
    std::optional<StringRef> name = value ? value->getAsString() : std::nullopt;
    const char *const *found =
        name ? find(kTypeNames, *name) : std::end(kTypeNames);
    if (found == std::end(kTypeNames))
      return fail(path,
                  "unknown type" + (name ? " '" + *name + "'" : Twine()) +
                      " (expected " +
                      join(std::begin(kTypeNames), std::end(kTypeNames), ", ") +
                      ")");
    out = static_cast<ElementType>(found - kTypeNames);
    return true;
  }
  bool buffer(const json::Value *value, json::Path path, int &out) {
    std::optional<StringRef> name = value ? value->getAsString() : std::nullopt;
    auto it = name ? bufferIndex.find(*name) : bufferIndex.end();
    if (it != bufferIndex.end()) {
      out = it->second;
      return true;
    }
    std::vector<StringRef> known;
    for (const BufferSpec &b : *buffers)
      known.push_back(b.name);
    return fail(path, "unknown buffer" + (name ? " '" + *name + "'" : Twine()) +
                          " (buffers: " +
                          (known.empty() ? "none" : join(known, ", ")) + ")");
  }
  /// An array of `count` (if not 0) integers in [min, max].
  bool integers(const json::Value *value, json::Path path, size_t count,
                int64_t min, std::vector<int64_t> &out) {
    const json::Array *array = value ? value->getAsArray() : nullptr;
    if (!array || (count && array->size() != count) || array->size() > kMaxRank)
      return fail(
          path, "expected an array of " +
                    (count ? Twine(count) : Twine("up to ") + Twine(kMaxRank)) +
                    " integers");
    out.resize(array->size());
    for (size_t i = 0; i < array->size(); ++i)
      if (!integer(&(*array)[i], path.index(i), out[i], min, INT64_MAX))
        return false;
    return true;
  }
  std::string resolve(StringRef file) {
    SmallString<256> path(file);
    sys::path::make_absolute(specDir, path);
    return std::string(path);
  }
};

bool fromJSON(const json::Value &value, Dim3 &out, json::Path path,
              Context &c) {
  std::vector<int64_t> dims(1, value.getAsInteger().value_or(0));
  if (!value.getAsInteger() && !c.integers(&value, path, 0, 1, dims))
    return false;
  if (dims.empty() || dims.size() > 3 || dims[0] < 1 ||
      any_of(dims, [](int64_t d) { return d > UINT32_MAX; }))
    return c.fail(path, "expected 1 to 3 integers in [1, 4294967295]");
  dims.resize(3, 1);
  out = {unsigned(dims[0]), unsigned(dims[1]), unsigned(dims[2])};
  return true;
}

bool parseBuffer(Context &c, StringRef name, const json::Value &value,
                 json::Path path, BufferSpec &b) {
  if (!c.knownKeys(value, path,
                   {"type", "size", "init", "seed", "range", "output", "file"}))
    return false;
  const json::Object &o = *value.getAsObject();
  b.name = name.str();
  if (o.get("type") && !c.type(o.get("type"), path.field("type"), b.type))
    return false;
  const json::Value *size = o.get("size");
  std::vector<int64_t> dims(1, size ? size->getAsInteger().value_or(0) : 0);
  if (!size ||
      (!size->getAsInteger() &&
       (!c.integers(size, path.field("size"), 0, 1, dims) || dims.empty())))
    return c.fail(path.field("size"), "expected elements, or an array of dims");
  uint64_t elements = 1;
  bool overflow = false;
  for (int64_t d : dims)
    if (d < 1 ||
        (elements = SaturatingMultiply(elements, uint64_t(d), &overflow),
         overflow) ||
        elements > kMaxBufferElements)
      return c.fail(path.field("size"), "expected 1 to 2^40 elements (" +
                                            Twine(kMaxBufferElements) + ")");
  b.elements = elements;
  b.low = isFloat(b.type) ? -1 : 0;
  b.high = isFloat(b.type) ? 1 : 100;
  json::ObjectMapper map(value, path);
  std::string init = o.get("file") ? "file" : "zeros";
  if (!map.mapOptional("init", init))
    return c.fail(path.field("init"), "expected a string");
  StringRef rest = init;
  bool constant = rest.consume_front("constant:");
  b.init = StringSwitch<BufferSpec::Init>(init)
               .Case("zeros", BufferSpec::Init::Zeros)
               .Case("iota", BufferSpec::Init::Iota)
               .Case("random", BufferSpec::Init::Random)
               .Case("file", BufferSpec::Init::File)
               .Default(BufferSpec::Init::Constant);
  uint64_t bits;
  if (b.init == BufferSpec::Init::Constant &&
      (!constant || rest.getAsDouble(b.constant) ||
       !std::isfinite(b.constant) || !encode(b.type, b.constant, bits)))
    return c.fail(path.field("init"),
                  constant ? "bad constant '" + rest + "' (expected a finite " +
                                 elementTypeName(b.type) + " value)"
                           : "unknown initializer '" + init +
                                 "' (expected zeros, iota, random, file or "
                                 "constant:<value>)");
  if ((b.init == BufferSpec::Init::File) != (o.get("file") != nullptr))
    return c.fail(path, "\"init\": \"file\" and \"file\" go together");
  if (!map.mapOptional("file", b.file))
    return c.fail(path.field("file"), "expected a string");
  b.file = b.file.empty() ? "" : c.resolve(b.file);
  if (!map.mapOptional("seed", b.seed))
    return c.fail(path.field("seed"), "expected an integer >= 0");
  if (const json::Value *r = o.get("range")) {
    const json::Array *a = r->getAsArray();
    std::optional<double> lo, hi;
    if (a && a->size() == 2)
      lo = (*a)[0].getAsNumber(), hi = (*a)[1].getAsNumber();
    if (!lo || !hi || !(*lo <= *hi) || !encode(b.type, std::floor(*lo), bits) ||
        !encode(b.type, std::floor(*hi), bits))
      return c.fail(path.field("range"),
                    "expected [low, high], low <= high, both within " +
                        elementTypeName(b.type));
    b.low = *lo, b.high = *hi;
  }
  return map.mapOptional("output", b.output) ||
         c.fail(path.field("output"), "expected true or false");
}

bool parseArg(Context &c, const json::Value &value, json::Path path,
              ArgSpec &a) {
  const json::Object *o = value.getAsObject();
  std::optional<StringRef> kind = o ? o->getString("kind") : std::nullopt;
  if (!kind || !is_contained({"buffer", "memref", "memref2d", "scalar"}, *kind))
    return c.fail(path.field("kind"), "expected \"kind\": buffer, memref, "
                                      "memref2d or scalar");
  if (*kind == "scalar") {
    a.kind = ArgSpec::Kind::Scalar;
    if (!c.knownKeys(value, path, {"kind", "type", "value"}) ||
        (o->get("type") &&
         !c.type(o->get("type"), path.field("type"), a.scalarType)))
      return false;
    std::optional<double> v = o->getNumber("value");
    uint64_t bits;
    if (a.scalarType == ElementType::I64 && o->getInteger("value"))
      return a.intValue = *o->getInteger("value"), true; // exact
    if (!v || !encode(a.scalarType, *v, bits))
      return c.fail(path.field("value"),
                    "expected a " + elementTypeName(a.scalarType) + " value");
    a.intValue = static_cast<int64_t>(bits);
    return true;
  }
  bool memref = kind->starts_with("memref");
  a.kind = memref ? ArgSpec::Kind::Memref : ArgSpec::Kind::Buffer;
  std::initializer_list<StringRef> keys = {"kind", "buffer", "offset", "shape",
                                           "strides"};
  if (!c.knownKeys(value, path, memref ? keys : ArrayRef(keys).take_front(3)) ||
      !c.buffer(o->get("buffer"), path.field("buffer"), a.buffer))
    return false;
  const BufferSpec &b = (*c.buffers)[a.buffer];
  if (o->get("offset") && !c.integer(o->get("offset"), path.field("offset"),
                                     a.offset, 0, b.elements - 1))
    return false;
  if (!memref)
    return true;
  if (!c.integers(o->get("shape"), path.field("shape"),
                  *kind == "memref2d" ? 2 : 0, 1, a.sizes))
    return false;
  size_t rank = a.sizes.size();
  a.strides.assign(rank, 1);
  for (size_t d = rank; d-- > 1;)
    if (MulOverflow(a.strides[d], a.sizes[d], a.strides[d - 1]))
      return c.fail(path.field("shape"), "the row-major strides overflow");
  if (o->get("strides") &&
      !c.integers(o->get("strides"), path.field("strides"), rank, 0, a.strides))
    return false;
  // The last element reached, overflow-checked: it must be in the buffer.
  int64_t last = a.offset, step;
  bool overflow = false;
  for (size_t d = 0; d < rank && !overflow; ++d)
    overflow = MulOverflow(a.sizes[d] - 1, a.strides[d], step) ||
               AddOverflow(last, step, last);
  std::string what;
  raw_string_ostream(what) << "memref " << interleaved_array(a.sizes)
                           << " (offset " << a.offset << ", strides "
                           << interleaved_array(a.strides) << ") reaches ";
  if (overflow || static_cast<uint64_t>(last) >= b.elements)
    return c.fail(path,
                  what + (overflow ? "past 2^63" : "element " + Twine(last)) +
                      ", but buffer '" + b.name + "' has only " +
                      Twine(b.elements));
  return true;
}

bool parseReference(Context &c, const json::Value &value, json::Path path,
                    ReferenceSpec &r) {
  const json::Object *o = value.getAsObject();
  std::optional<StringRef> kind = o ? o->getString("kind") : std::nullopt;
  if (kind == "file") {
    r.kind = ReferenceSpec::Kind::File;
    std::optional<StringRef> file = o->getString("file");
    if (!c.knownKeys(value, path, {"kind", "buffer", "file"}) ||
        !c.buffer(o->get("buffer"), path.field("buffer"), r.c))
      return false;
    if (!file)
      return c.fail(path.field("file"), "expected the expected bytes' file");
    r.file = c.resolve(*file);
    return true;
  }
  if (kind != "matmul")
    return c.fail(path.field("kind"), "expected \"kind\": matmul or file");
  if (!c.knownKeys(value, path,
                   {"kind", "a", "b", "c", "m", "n", "k", "rows", "cols",
                    "samples", "seed"}) ||
      !c.buffer(o->get("a"), path.field("a"), r.a) ||
      !c.buffer(o->get("b"), path.field("b"), r.b) ||
      !c.buffer(o->get("c"), path.field("c"), r.c) ||
      !c.integer(o->get("m"), path.field("m"), r.m, 1, INT64_MAX) ||
      !c.integer(o->get("n"), path.field("n"), r.n, 1, INT64_MAX) ||
      !c.integer(o->get("k"), path.field("k"), r.k, 1, INT64_MAX))
    return false;
  struct Need {
    int buffer;
    int64_t x, y;
    const char *what;
  };
  for (Need need :
       {Need{r.a, r.m, r.k, "a (m x k)"}, Need{r.b, r.k, r.n, "b (k x n)"},
        Need{r.c, r.m, r.n, "c (m x n)"}}) {
    const BufferSpec &b = (*c.buffers)[need.buffer];
    int64_t elements;
    if (MulOverflow(need.x, need.y, elements) ||
        static_cast<uint64_t>(elements) > b.elements)
      return c.fail(path, "matmul " + Twine(need.what) + " needs " +
                              Twine(need.x) + " x " + Twine(need.y) +
                              " elements, but buffer '" + b.name + "' has " +
                              Twine(b.elements));
  }
  std::vector<int64_t> rows = {0, r.m}, cols = {0, r.n};
  if ((o->get("rows") &&
       !c.integers(o->get("rows"), path.field("rows"), 2, 0, rows)) ||
      (o->get("cols") &&
       !c.integers(o->get("cols"), path.field("cols"), 2, 0, cols)))
    return false;
  if (rows[0] >= rows[1] || rows[1] > r.m || cols[0] >= cols[1] ||
      cols[1] > r.n)
    return c.fail(path, "rows/cols must be non-empty [begin, end) ranges "
                        "inside m x n");
  r.rows[0] = rows[0], r.rows[1] = rows[1], r.cols[0] = cols[0],
  r.cols[1] = cols[1];
  json::ObjectMapper map(value, path);
  if (!map.mapOptional("seed", r.seed))
    return c.fail(path.field("seed"), "expected an integer >= 0");
  return !o->get("samples") ||
         c.integer(o->get("samples"), path.field("samples"), r.samples, 0,
                   1 << 30);
}

bool parseSpec(Context &c, const json::Value &root, json::Path path,
               LaunchSpec &spec) {
  if (!c.knownKeys(root, path,
                   {"kernel", "grid", "block", "shared_bytes", "buffers",
                    "args", "reference", "tolerance", "timing", "comment"}))
    return false;
  const json::Object &o = *root.getAsObject();
  json::ObjectMapper map(root, path);
  if (!map.mapOptional("kernel", spec.kernel))
    return c.fail(path.field("kernel"), "expected a string");
  for (const char *key : {"grid", "block", "args"})
    if (!o.get(key))
      return c.fail(path, "missing \"" + Twine(key) + "\"");
  if (!fromJSON(*o.get("grid"), spec.grid, path.field("grid"), c) ||
      !fromJSON(*o.get("block"), spec.block, path.field("block"), c))
    return false;
  uint64_t threads = uint64_t(spec.block.x) * spec.block.y * spec.block.z;
  if (threads > 1024)
    return c.fail(path.field("block"),
                  Twine(threads) + " threads; a block has at most 1024");
  int64_t shared = 0;
  if (o.get("shared_bytes") &&
      !c.integer(o.get("shared_bytes"), path.field("shared_bytes"), shared, 0,
                 1 << 30))
    return false;
  spec.sharedBytes = static_cast<unsigned>(shared);

  if (const json::Value *buffers = o.get("buffers")) {
    const json::Object *object = buffers->getAsObject();
    if (!object)
      return c.fail(path.field("buffers"), "expected an object");
    if (object->size() > kMaxBuffers)
      return c.fail(path.field("buffers"), Twine(object->size()) +
                                               " buffers; at most " +
                                               Twine(kMaxBuffers));
    std::vector<StringRef> names;
    for (const auto &entry : *object)
      names.push_back(entry.first);
    llvm::sort(names);
    spec.buffers.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      c.bufferIndex[names[i]] = static_cast<int>(i);
      if (!parseBuffer(c, names[i], *object->get(names[i]),
                       path.field("buffers").field(names[i]), spec.buffers[i]))
        return false;
    }
  }
  const json::Array *args = o.getArray("args");
  if (!args || args->size() > kMaxArgs)
    return c.fail(path.field("args"), "expected an array of at most " +
                                          Twine(kMaxArgs) + " arguments");
  spec.args.resize(args->size());
  for (size_t i = 0; i < args->size(); ++i)
    if (!parseArg(c, (*args)[i], path.field("args").index(i), spec.args[i]))
      return false;
  if (const json::Value *r = o.get("reference"))
    if (!parseReference(c, *r, path.field("reference"),
                        spec.reference.emplace()))
      return false;
  if (const json::Value *t = o.get("tolerance")) {
    json::ObjectMapper tol(*t, path.field("tolerance"));
    if (!c.knownKeys(*t, path.field("tolerance"), {"rtol", "atol"}) ||
        !tol.mapOptional("rtol", spec.tolerance.rtol) ||
        !tol.mapOptional("atol", spec.tolerance.atol) ||
        !(spec.tolerance.rtol >= 0) || !(spec.tolerance.atol >= 0))
      return c.fail(path.field("tolerance"), "rtol and atol are numbers >= 0");
  }
  if (const json::Value *t = o.get("timing")) {
    TimingSpec &timing = spec.timing;
    json::ObjectMapper tm(*t, path.field("timing"));
    if (!c.knownKeys(
            *t, path.field("timing"),
            {"warmup", "repetitions", "min_time_ms", "max_repetitions"}) ||
        !tm.mapOptional("warmup", timing.warmup) ||
        !tm.mapOptional("repetitions", timing.repetitions) ||
        !tm.mapOptional("max_repetitions", timing.maxRepetitions) ||
        !tm.mapOptional("min_time_ms", timing.minTimeMs) || timing.warmup < 0 ||
        timing.warmup > 1000 || timing.repetitions < 1 ||
        timing.repetitions > 100000 || timing.maxRepetitions < 1 ||
        timing.maxRepetitions > 100000 || !(timing.minTimeMs >= 0))
      return c.fail(path.field("timing"),
                    "warmup in [0, 1000], repetitions and max_repetitions in "
                    "[1, 100000], min_time_ms >= 0");
    timing.maxRepetitions = std::max(timing.maxRepetitions, timing.repetitions);
  }
  return true;
}

} // namespace

Expected<LaunchSpec> parseLaunchSpec(StringRef text, StringRef path) {
  if (text.size() > kMaxSpecBytes)
    return createStringError("%s: the spec is larger than %llu bytes",
                             path.str().c_str(),
                             (unsigned long long)kMaxSpecBytes);
  Expected<json::Value> root = parseJSONBounded(text, path);
  if (!root)
    return root.takeError();
  LaunchSpec spec;
  spec.path = path.str();
  spec.text = text.str();
  Context c;
  c.buffers = &spec.buffers;
  c.specDir = sys::path::parent_path(path).str();
  json::Path::Root top("spec");
  if (parseSpec(c, *root, top, spec))
    return spec;
  // "<literal> at spec.args[2].shape": keep the place, say what is wrong.
  std::string where = toString(top.getError());
  size_t at = where.find(" at spec");
  where = at == std::string::npos ? "spec" : where.substr(at + 4);
  return createStringError(path + ": " + where + ": " + c.detail);
}

Expected<LaunchSpec> readLaunchSpec(StringRef path) {
  Expected<std::string> text =
      readRegularFileText(path, kMaxSpecBytes, FinalSymlink::Refuse);
  if (!text)
    return text.takeError();
  return parseLaunchSpec(*text, path);
}

std::vector<unsigned> LaunchSpec::params() const {
  std::vector<unsigned> sizes;
  for (const ArgSpec &a : args)
    sizes.resize(
        sizes.size() +
            (a.kind != ArgSpec::Kind::Memref ? 1 : 3 + 2 * a.sizes.size()),
        a.kind == ArgSpec::Kind::Scalar ? elementSize(a.scalarType) : 8);
  return sizes;
}

std::vector<int> LaunchSpec::outputs() const {
  std::vector<int> out;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].output)
      out.push_back(static_cast<int>(i));
  for (size_t i = 0; out.empty() && i < buffers.size(); ++i)
    out.push_back(static_cast<int>(i)); // none marked: all of them
  return out;
}

uint64_t LaunchSpec::totalBytes() const {
  uint64_t total = 0;
  for (const BufferSpec &b : buffers)
    total = SaturatingAdd(total, b.bytes());
  return total;
}

Expected<std::vector<std::string>> initializeBuffers(const LaunchSpec &spec) {
  std::vector<std::string> host(spec.buffers.size());
  for (size_t i = 0; i < spec.buffers.size(); ++i) {
    const BufferSpec &b = spec.buffers[i];
    if (b.init == BufferSpec::Init::File) {
      Expected<std::string> data =
          readRegularFileText(b.file, b.bytes(), FinalSymlink::Refuse);
      if (!data)
        return data.takeError();
      if (data->size() != b.bytes())
        return createStringError("%s: buffer '%s' is %llu bytes, '%s' has %zu",
                                 spec.path.c_str(), b.name.c_str(),
                                 (unsigned long long)b.bytes(), b.file.c_str(),
                                 data->size());
      host[i] = std::move(*data);
      continue;
    }
    try {
      host[i].assign(b.bytes(), '\0');
    } catch (const std::bad_alloc &) {
      return createStringError(
          std::make_error_code(std::errc::not_enough_memory),
          "%s: cannot allocate %llu bytes of host memory "
          "for buffer '%s'",
          spec.path.c_str(), (unsigned long long)b.bytes(), b.name.c_str());
    }
    if (b.init == BufferSpec::Init::Zeros)
      continue;
    uint64_t state = b.seed * 0x2545F4914F6CDD1Dull + 1;
    auto unit = [&] { return double(splitMix64(state) >> 11) * 0x1.0p-53; };
    size_t size = elementSize(b.type);
    for (uint64_t e = 0; e < b.elements; ++e) {
      double v = b.init == BufferSpec::Init::Iota       ? static_cast<double>(e)
                 : b.init == BufferSpec::Init::Constant ? b.constant
                 : isFloat(b.type)
                     ? b.low + (b.high - b.low) * unit()
                     : std::floor(b.low + (b.high - b.low + 1) * unit());
      uint64_t bits = static_cast<uint64_t>(static_cast<int64_t>(v)); // wraps
      if (isFloat(b.type))
        encode(b.type, v, bits);
      std::memcpy(&host[i][e * size], &bits, size);
    }
  }
  return host;
}

} // namespace fly::rt
