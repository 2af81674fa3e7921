//===- LaunchSpec.cpp - Parse and check a launch spec ---------------------===//

#include "fly/Runtime/LaunchSpec.h"

#include "fly/Runtime/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace fly::rt {

const char *elementTypeName(ElementType type) {
  return type == ElementType::F32 ? "f32" : "i32";
}
size_t elementSize(ElementType) { return 4; }

bool readFile(const std::string &path, std::string &contents,
              std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  contents = ss.str();
  return true;
}

namespace {

using json::Value;

/// Collects the first error with its JSON location ("args[2].shape").
class Checker {
public:
  std::string error;

  bool fail(const std::string &where, const std::string &what) {
    if (error.empty())
      error = where.empty() ? what : where + ": " + what;
    return false;
  }

  bool knownKeys(const Value &obj, const std::string &where,
                 std::initializer_list<const char *> keys) {
    for (const auto &[key, value] : obj.asObject()) {
      bool known = false;
      for (const char *k : keys)
        known |= key == k;
      if (!known) {
        std::string list;
        for (const char *k : keys)
          list += std::string(list.empty() ? "" : ", ") + k;
        return fail(where, "unknown key '" + key + "' (expected one of: " +
                               list + ")");
      }
    }
    return true;
  }

  bool object(const Value *v, const std::string &where) {
    if (!v || !v->isObject())
      return fail(where, std::string("expected an object, got ") +
                             (v ? Value::kindName(v->kind()) : "nothing"));
    return true;
  }

  bool integer(const Value &v, const std::string &where, int64_t &out,
               int64_t min = std::numeric_limits<int64_t>::min(),
               int64_t max = std::numeric_limits<int64_t>::max()) {
    if (!v.isInteger())
      return fail(where, std::string("expected an integer, got ") +
                             (v.isNumber() ? std::to_string(v.asNumber())
                                           : Value::kindName(v.kind())));
    out = v.asInteger();
    if (out < min || out > max)
      return fail(where, std::to_string(out) + " is out of range [" +
                             std::to_string(min) + ", " + std::to_string(max) +
                             "]");
    return true;
  }

  bool number(const Value &v, const std::string &where, double &out) {
    if (!v.isNumber())
      return fail(where, std::string("expected a number, got ") +
                             Value::kindName(v.kind()));
    out = v.asNumber();
    return true;
  }

  bool string(const Value &v, const std::string &where, std::string &out) {
    if (!v.isString())
      return fail(where, std::string("expected a string, got ") +
                             Value::kindName(v.kind()));
    out = v.asString();
    return true;
  }

  bool boolean(const Value &v, const std::string &where, bool &out) {
    if (!v.isBool())
      return fail(where, std::string("expected true or false, got ") +
                             Value::kindName(v.kind()));
    out = v.asBool();
    return true;
  }

  /// [x], [x, y] or [x, y, z] of positive integers (or one integer).
  bool dim3(const Value &v, const std::string &where, Dim3 &out) {
    std::vector<int64_t> dims;
    if (v.isArray()) {
      if (v.asArray().empty() || v.asArray().size() > 3)
        return fail(where, "expected 1 to 3 dimensions, got " +
                               std::to_string(v.asArray().size()));
      for (size_t i = 0; i < v.asArray().size(); ++i) {
        int64_t d;
        if (!integer(v.asArray()[i], where + "[" + std::to_string(i) + "]", d,
                     1, std::numeric_limits<unsigned>::max()))
          return false;
        dims.push_back(d);
      }
    } else {
      int64_t d;
      if (!integer(v, where, d, 1, std::numeric_limits<unsigned>::max()))
        return false;
      dims.push_back(d);
    }
    dims.resize(3, 1);
    out = {static_cast<unsigned>(dims[0]), static_cast<unsigned>(dims[1]),
           static_cast<unsigned>(dims[2])};
    return true;
  }

  /// [a, b] of integers.
  bool pair(const Value &v, const std::string &where, int64_t out[2],
            int64_t min = 0) {
    if (!v.isArray() || v.asArray().size() != 2)
      return fail(where, "expected an array of 2 integers");
    return integer(v.asArray()[0], where + "[0]", out[0], min) &&
           integer(v.asArray()[1], where + "[1]", out[1], min);
  }
};

bool parseBuffer(Checker &c, const std::string &name, const Value &v,
                 BufferSpec &b) {
  std::string where = "buffers." + name;
  if (!c.object(&v, where) ||
      !c.knownKeys(v, where,
                   {"type", "size", "init", "seed", "range", "output"}))
    return false;
  b.name = name;
  const Value *type = v.get("type");
  std::string typeName = "f32";
  if (type && !c.string(*type, where + ".type", typeName))
    return false;
  if (typeName == "f32")
    b.type = ElementType::F32;
  else if (typeName == "i32")
    b.type = ElementType::I32;
  else
    return c.fail(where + ".type",
                  "unknown element type '" + typeName + "' (expected f32 or i32)");
  const Value *size = v.get("size");
  if (!size)
    return c.fail(where, "missing \"size\" (elements, or an array of dims)");
  int64_t elements = 1;
  if (size->isArray()) {
    if (size->asArray().empty())
      return c.fail(where + ".size", "empty shape");
    for (size_t i = 0; i < size->asArray().size(); ++i) {
      int64_t d;
      if (!c.integer(size->asArray()[i],
                     where + ".size[" + std::to_string(i) + "]", d, 1,
                     int64_t(1) << 40))
        return false;
      elements *= d;
      if (elements > (int64_t(1) << 40))
        return c.fail(where + ".size", "buffer too large");
    }
  } else if (!c.integer(*size, where + ".size", elements, 1, int64_t(1) << 40)) {
    return false;
  }
  b.elements = static_cast<size_t>(elements);
  if (b.type == ElementType::F32)
    b.low = -1, b.high = 1;
  else
    b.low = 0, b.high = 100;
  std::string init = "zeros";
  if (const Value *i = v.get("init"); i && !c.string(*i, where + ".init", init))
    return false;
  if (init == "zeros") {
    b.init = BufferSpec::Init::Zeros;
  } else if (init == "iota") {
    b.init = BufferSpec::Init::Iota;
  } else if (init == "random") {
    b.init = BufferSpec::Init::Random;
  } else if (init.rfind("constant:", 0) == 0) {
    b.init = BufferSpec::Init::Constant;
    const char *text = init.c_str() + 9;
    char *end = nullptr;
    b.constant = std::strtod(text, &end);
    if (end == text || *end)
      return c.fail(where + ".init", "bad constant in '" + init +
                                         "' (expected e.g. constant:1.5)");
  } else {
    return c.fail(where + ".init",
                  "unknown initializer '" + init +
                      "' (expected zeros, iota, random or constant:<value>)");
  }
  if (const Value *s = v.get("seed")) {
    int64_t seed;
    if (!c.integer(*s, where + ".seed", seed, 0))
      return false;
    b.seed = static_cast<uint64_t>(seed);
  }
  if (const Value *r = v.get("range")) {
    if (!r->isArray() || r->asArray().size() != 2)
      return c.fail(where + ".range", "expected [low, high]");
    if (!c.number(r->asArray()[0], where + ".range[0]", b.low) ||
        !c.number(r->asArray()[1], where + ".range[1]", b.high))
      return false;
    if (!(b.low <= b.high))
      return c.fail(where + ".range", "low is above high");
  }
  if (const Value *o = v.get("output"); o && !c.boolean(*o, where + ".output", b.output))
    return false;
  return true;
}

bool bufferRef(Checker &c, const LaunchSpec &spec, const Value &v,
               const std::string &where, int &out) {
  std::string name;
  if (!c.string(v, where, name))
    return false;
  out = spec.findBuffer(name);
  if (out < 0) {
    std::string known;
    for (const BufferSpec &b : spec.buffers)
      known += (known.empty() ? "" : ", ") + b.name;
    return c.fail(where, "unknown buffer '" + name + "' (buffers: " +
                             (known.empty() ? "none" : known) + ")");
  }
  return true;
}

bool parseArg(Checker &c, const LaunchSpec &spec, size_t index, const Value &v,
              ArgSpec &a) {
  std::string where = "args[" + std::to_string(index) + "]";
  if (!c.object(&v, where))
    return false;
  const Value *kind = v.get("kind");
  std::string kindName;
  if (!kind)
    return c.fail(where, "missing \"kind\" (buffer, memref2d or scalar)");
  if (!c.string(*kind, where + ".kind", kindName))
    return false;
  if (kindName == "scalar") {
    if (!c.knownKeys(v, where, {"kind", "type", "value"}))
      return false;
    a.kind = ArgSpec::Kind::Scalar;
    std::string type = "i64";
    if (const Value *t = v.get("type"); t && !c.string(*t, where + ".type", type))
      return false;
    const Value *value = v.get("value");
    if (!value)
      return c.fail(where, "missing \"value\"");
    if (type == "i64" || type == "i32") {
      a.scalarType = type == "i64" ? ScalarType::I64 : ScalarType::I32;
      int64_t lo = type == "i64" ? std::numeric_limits<int64_t>::min()
                                 : std::numeric_limits<int32_t>::min();
      int64_t hi = type == "i64" ? std::numeric_limits<int64_t>::max()
                                 : std::numeric_limits<uint32_t>::max();
      return c.integer(*value, where + ".value", a.intValue, lo, hi);
    }
    if (type == "f32") {
      a.scalarType = ScalarType::F32;
      return c.number(*value, where + ".value", a.floatValue);
    }
    return c.fail(where + ".type", "unknown scalar type '" + type +
                                       "' (expected i64, i32 or f32)");
  }
  if (kindName == "buffer") {
    if (!c.knownKeys(v, where, {"kind", "buffer", "offset"}))
      return false;
    a.kind = ArgSpec::Kind::Buffer;
    const Value *b = v.get("buffer");
    if (!b)
      return c.fail(where, "missing \"buffer\"");
    if (!bufferRef(c, spec, *b, where + ".buffer", a.buffer))
      return false;
    if (const Value *o = v.get("offset");
        o && !c.integer(*o, where + ".offset", a.offset, 0,
                        static_cast<int64_t>(spec.buffers[a.buffer].elements) - 1))
      return false;
    return true;
  }
  if (kindName == "memref2d") {
    if (!c.knownKeys(v, where, {"kind", "buffer", "shape", "strides", "offset"}))
      return false;
    a.kind = ArgSpec::Kind::Memref2D;
    const Value *b = v.get("buffer");
    if (!b)
      return c.fail(where, "missing \"buffer\"");
    if (!bufferRef(c, spec, *b, where + ".buffer", a.buffer))
      return false;
    const Value *shape = v.get("shape");
    if (!shape)
      return c.fail(where, "missing \"shape\": [rows, cols]");
    if (!c.pair(*shape, where + ".shape", a.sizes, 1))
      return false;
    a.strides[0] = a.sizes[1];
    a.strides[1] = 1;
    if (const Value *s = v.get("strides");
        s && !c.pair(*s, where + ".strides", a.strides, 0))
      return false;
    if (const Value *o = v.get("offset");
        o && !c.integer(*o, where + ".offset", a.offset, 0))
      return false;
    const BufferSpec &buffer = spec.buffers[a.buffer];
    int64_t last = a.offset + (a.sizes[0] - 1) * a.strides[0] +
                   (a.sizes[1] - 1) * a.strides[1];
    if (last >= static_cast<int64_t>(buffer.elements))
      return c.fail(where,
                    "memref2d " + std::to_string(a.sizes[0]) + "x" +
                        std::to_string(a.sizes[1]) + " (offset " +
                        std::to_string(a.offset) + ", strides [" +
                        std::to_string(a.strides[0]) + ", " +
                        std::to_string(a.strides[1]) + "]) reaches element " +
                        std::to_string(last) + ", but buffer '" + buffer.name +
                        "' has only " + std::to_string(buffer.elements));
    return true;
  }
  return c.fail(where + ".kind", "unknown argument kind '" + kindName +
                                     "' (expected buffer, memref2d or scalar)");
}

bool parseReference(Checker &c, const LaunchSpec &spec, const Value &v,
                    MatmulReference &r) {
  const std::string where = "reference";
  if (!c.object(&v, where) ||
      !c.knownKeys(v, where, {"kind", "a", "b", "c", "m", "n", "k", "rows",
                              "cols", "samples", "seed"}))
    return false;
  std::string kind;
  const Value *k = v.get("kind");
  if (!k)
    return c.fail(where, "missing \"kind\" (the only host reference is "
                         "\"matmul\")");
  if (!c.string(*k, where + ".kind", kind))
    return false;
  if (kind != "matmul")
    return c.fail(where + ".kind", "unknown host reference '" + kind +
                                       "' (the only one is \"matmul\")");
  for (const char *key : {"a", "b", "c", "m", "n", "k"})
    if (!v.get(key))
      return c.fail(where, std::string("missing \"") + key + "\"");
  if (!bufferRef(c, spec, *v.get("a"), where + ".a", r.a) ||
      !bufferRef(c, spec, *v.get("b"), where + ".b", r.b) ||
      !bufferRef(c, spec, *v.get("c"), where + ".c", r.c))
    return false;
  if (!c.integer(*v.get("m"), where + ".m", r.m, 1) ||
      !c.integer(*v.get("n"), where + ".n", r.n, 1) ||
      !c.integer(*v.get("k"), where + ".k", r.k, 1))
    return false;
  struct Need {
    int buffer;
    int64_t elements;
    const char *what;
  };
  for (Need need : {Need{r.a, r.m * r.k, "a (m x k)"},
                    Need{r.b, r.k * r.n, "b (k x n)"},
                    Need{r.c, r.m * r.n, "c (m x n)"}}) {
    const BufferSpec &b = spec.buffers[need.buffer];
    if (b.type != ElementType::F32)
      return c.fail(where, "matmul buffer '" + b.name + "' must be f32");
    if (static_cast<int64_t>(b.elements) < need.elements)
      return c.fail(where, std::string("matmul ") + need.what + " needs " +
                               std::to_string(need.elements) +
                               " elements, but buffer '" + b.name + "' has " +
                               std::to_string(b.elements));
  }
  r.rows[0] = 0, r.rows[1] = r.m;
  r.cols[0] = 0, r.cols[1] = r.n;
  if (const Value *rows = v.get("rows"); rows && !c.pair(*rows, where + ".rows", r.rows))
    return false;
  if (const Value *cols = v.get("cols"); cols && !c.pair(*cols, where + ".cols", r.cols))
    return false;
  if (r.rows[0] >= r.rows[1] || r.rows[1] > r.m || r.cols[0] >= r.cols[1] ||
      r.cols[1] > r.n)
    return c.fail(where, "rows/cols must be non-empty [begin, end) ranges "
                         "inside m x n");
  if (const Value *s = v.get("samples");
      s && !c.integer(*s, where + ".samples", r.samples, 0))
    return false;
  if (const Value *s = v.get("seed")) {
    int64_t seed;
    if (!c.integer(*s, where + ".seed", seed, 0))
      return false;
    r.seed = static_cast<uint64_t>(seed);
  }
  return true;
}

} // namespace

int LaunchSpec::findBuffer(const std::string &name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name)
      return static_cast<int>(i);
  return -1;
}

std::vector<int> LaunchSpec::outputs() const {
  std::vector<int> out;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].output)
      out.push_back(static_cast<int>(i));
  if (out.empty())
    for (size_t i = 0; i < buffers.size(); ++i)
      out.push_back(static_cast<int>(i));
  return out;
}

std::vector<ParamSlot> LaunchSpec::params() const {
  std::vector<ParamSlot> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec &a = args[i];
    switch (a.kind) {
    case ArgSpec::Kind::Buffer:
      out.push_back({8, buffers[a.buffer].name + " (ptr)"});
      break;
    case ArgSpec::Kind::Memref2D: {
      const std::string &n = buffers[a.buffer].name;
      for (const char *part : {".allocated", ".aligned", ".offset", ".size0",
                               ".size1", ".stride0", ".stride1"})
        out.push_back({8, n + part});
      break;
    }
    case ArgSpec::Kind::Scalar:
      out.push_back({a.scalarType == ScalarType::I64 ? 8 : 4,
                     "args[" + std::to_string(i) + "] (" +
                         (a.scalarType == ScalarType::I64   ? "i64"
                          : a.scalarType == ScalarType::I32 ? "i32"
                                                            : "f32") +
                         ")"});
      break;
    }
  }
  return out;
}

bool parseLaunchSpec(const std::string &text, const std::string &path,
                     LaunchSpec &spec, std::string &error) {
  spec = LaunchSpec();
  spec.path = path;
  Value root;
  std::string jsonError;
  if (!json::parse(text, root, jsonError)) {
    error = path + ":" + jsonError;
    return false;
  }
  Checker c;
  auto done = [&](bool ok) {
    if (!ok)
      error = path + ": " + c.error;
    return ok;
  };
  if (!c.object(&root, "top level") ||
      !c.knownKeys(root, "top level",
                   {"kernel", "grid", "block", "shared_bytes", "buffers",
                    "args", "reference", "tolerance", "timing", "comment"}))
    return done(false);
  if (const Value *k = root.get("kernel"); k && !c.string(*k, "kernel", spec.kernel))
    return done(false);
  const Value *grid = root.get("grid"), *block = root.get("block");
  if (!grid)
    return done(c.fail("", "missing \"grid\" (e.g. [16, 32])"));
  if (!block)
    return done(c.fail("", "missing \"block\" (e.g. [16, 16])"));
  if (!c.dim3(*grid, "grid", spec.grid) || !c.dim3(*block, "block", spec.block))
    return done(false);
  uint64_t threads = uint64_t(spec.block.x) * spec.block.y * spec.block.z;
  if (threads > 1024)
    return done(c.fail("block", std::to_string(spec.block.x) + "x" +
                                    std::to_string(spec.block.y) + "x" +
                                    std::to_string(spec.block.z) + " is " +
                                    std::to_string(threads) +
                                    " threads; a block has at most 1024"));
  if (const Value *s = root.get("shared_bytes")) {
    int64_t bytes;
    if (!c.integer(*s, "shared_bytes", bytes, 0, 1 << 30))
      return done(false);
    spec.sharedBytes = static_cast<unsigned>(bytes);
  }
  if (const Value *buffers = root.get("buffers")) {
    if (!c.object(buffers, "buffers"))
      return done(false);
    for (const auto &[name, value] : buffers->asObject()) {
      BufferSpec b;
      if (!parseBuffer(c, name, value, b))
        return done(false);
      spec.buffers.push_back(std::move(b));
    }
  }
  const Value *args = root.get("args");
  if (!args)
    return done(c.fail("", "missing \"args\" (the kernel's parameters, in "
                           "order)"));
  if (!args->isArray())
    return done(c.fail("args", std::string("expected an array, got ") +
                                   Value::kindName(args->kind())));
  for (size_t i = 0; i < args->asArray().size(); ++i) {
    ArgSpec a;
    if (!parseArg(c, spec, i, args->asArray()[i], a))
      return done(false);
    spec.args.push_back(a);
  }
  if (const Value *r = root.get("reference")) {
    MatmulReference ref;
    if (!parseReference(c, spec, *r, ref))
      return done(false);
    spec.reference = ref;
  }
  if (const Value *t = root.get("tolerance")) {
    if (!c.object(t, "tolerance") ||
        !c.knownKeys(*t, "tolerance", {"rtol", "atol"}))
      return done(false);
    if (const Value *v = t->get("rtol");
        v && !c.number(*v, "tolerance.rtol", spec.tolerance.rtol))
      return done(false);
    if (const Value *v = t->get("atol");
        v && !c.number(*v, "tolerance.atol", spec.tolerance.atol))
      return done(false);
    if (spec.tolerance.rtol < 0 || spec.tolerance.atol < 0)
      return done(c.fail("tolerance", "rtol and atol must be >= 0"));
  }
  if (const Value *t = root.get("timing")) {
    if (!c.object(t, "timing") ||
        !c.knownKeys(*t, "timing",
                     {"warmup", "repetitions", "min_time_ms", "max_repetitions"}))
      return done(false);
    int64_t n;
    if (const Value *v = t->get("warmup")) {
      if (!c.integer(*v, "timing.warmup", n, 0, 1000))
        return done(false);
      spec.timing.warmup = static_cast<int>(n);
    }
    if (const Value *v = t->get("repetitions")) {
      if (!c.integer(*v, "timing.repetitions", n, 1, 100000))
        return done(false);
      spec.timing.repetitions = static_cast<int>(n);
    }
    if (const Value *v = t->get("max_repetitions")) {
      if (!c.integer(*v, "timing.max_repetitions", n, 1, 100000))
        return done(false);
      spec.timing.maxRepetitions = static_cast<int>(n);
    }
    if (const Value *v = t->get("min_time_ms")) {
      if (!c.number(*v, "timing.min_time_ms", spec.timing.minTimeMs))
        return done(false);
    }
    if (spec.timing.maxRepetitions < spec.timing.repetitions)
      spec.timing.maxRepetitions = spec.timing.repetitions;
  }
  return done(true);
}

bool readLaunchSpec(const std::string &path, LaunchSpec &spec,
                    std::string &error) {
  std::string text;
  if (!readFile(path, text, error))
    return false;
  return parseLaunchSpec(text, path, spec, error);
}

namespace {
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};
} // namespace

void initializeBuffer(const BufferSpec &b, std::vector<unsigned char> &out) {
  out.assign(b.bytes(), 0);
  if (b.init == BufferSpec::Init::Zeros)
    return;
  SplitMix64 rng{b.seed * 0x2545F4914F6CDD1Dull + 1};
  for (size_t i = 0; i < b.elements; ++i) {
    double v = 0;
    switch (b.init) {
    case BufferSpec::Init::Zeros:
      break;
    case BufferSpec::Init::Iota:
      v = static_cast<double>(i);
      break;
    case BufferSpec::Init::Constant:
      v = b.constant;
      break;
    case BufferSpec::Init::Random:
      v = b.type == ElementType::F32
              ? b.low + (b.high - b.low) * rng.unit()
              : std::floor(b.low + (b.high - b.low + 1) * rng.unit());
      break;
    }
    if (b.type == ElementType::F32) {
      float f = static_cast<float>(v);
      std::memcpy(&out[i * 4], &f, 4);
    } else {
      int32_t n = static_cast<int32_t>(v);
      std::memcpy(&out[i * 4], &n, 4);
    }
  }
}

} // namespace fly::rt
