//===- Verification.cpp - Check a variant's outputs -----------------------===//

#include "Runtime/Verification.h"

#include "fly/Object/CubinInfo.h"
#include "fly/Support/SafeFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace llvm;

namespace fly::rt {

const char *stateName(VariantState state) {
  static const char *const names[] = {"pending", "ok",          "not compiled",
                                      "skipped", "load failed", "FAULT",
                                      "WRONG"};
  return names[static_cast<int>(state)];
}

Stats computeStats(std::vector<double> s) {
  Stats st;
  st.count = static_cast<int>(s.size());
  if (s.empty())
    return st;
  llvm::sort(s);
  auto quantile = [&](double q) {
    double pos = q * static_cast<double>(s.size() - 1);
    size_t lo = static_cast<size_t>(pos), hi = std::min(lo + 1, s.size() - 1);
    return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
  };
  st.min = s.front(), st.max = s.back();
  st.median = quantile(0.5), st.q1 = quantile(0.25), st.q3 = quantile(0.75);
  st.mean = sum_of(s) / static_cast<double>(s.size());
  return st;
}

Expected<std::string> checkSpecAgainstManifest(const LaunchSpec &spec,
                                               const SweepManifest &manifest) {
  std::vector<std::string> names = manifest.kernelNames();
  std::string where = manifest.dir + "/manifest.json", list = join(names, ", ");
  if (names.empty() && none_of(manifest.variants, [](const ManifestVariant &v) {
        return v.ok && !v.objects.empty();
      }))
    return createStringError(where + ": no variant has an object (did every "
                                     "variant fail to compile?)");
  if (names.empty() && spec.kernel.empty())
    return createStringError(spec.path + ": the manifest lists no kernel names "
                                         "(PTX objects?): name the kernel with "
                                         "\"kernel\"");
  if (!names.empty() && !spec.kernel.empty() &&
      !is_contained(names, spec.kernel))
    return createStringError(spec.path + ": kernel '" + spec.kernel +
                             "' is not in " + where + " (kernels: " + list +
                             ")");
  if (spec.kernel.empty() && names.size() > 1)
    return createStringError(spec.path +
                             ": the manifest has several kernels (" + list +
                             "): name one with \"kernel\"");
  std::string kernel = spec.kernel.empty() ? names.front() : spec.kernel;
  if (manifest.family != "nvvm")
    return kernel;
  // The parameter layout comes from the first cubin that holds the kernel.
  for (const ManifestVariant &v : manifest.variants) {
    const ManifestObject *object = v.ok ? v.findKernel(kernel) : nullptr;
    if (!object || object->file.empty())
      continue;
    Expected<std::string> image = readObject(*object);
    if (!image) { // reported when the variant is loaded
      consumeError(image.takeError());
      continue;
    }
    Expected<std::vector<CubinKernel>> kernels = readCubinKernels(*image);
    if (!kernels) { // not a cubin (PTX, fatbin): nothing to check here
      consumeError(kernels.takeError());
      return kernel;
    }
    for (const CubinKernel &k : *kernels) {
      if (k.name != kernel)
        continue;
      // The block size the kernel was compiled for: a launch outside it
      // fails in the driver with a bare "invalid argument".
      const Dim3 &b = spec.block;
      uint64_t threads = uint64_t(b.x) * b.y * b.z;
      auto dims = [](ArrayRef<int64_t> d) {
        std::string out;
        raw_string_ostream(out) << "[" << interleaved(d) << "]";
        return out;
      };
      std::vector<int64_t> block = {b.x, b.y, b.z};
      if (!k.reqntid.empty()) {
        std::vector<int64_t> want(k.reqntid);
        want.resize(3, 1);
        if (want != block)
          return createStringError(spec.path + ": block " + dims(block) +
                                   ", but '" + kernel + "' in " + object->file +
                                   " requires block " + dims(k.reqntid) +
                                   " (.reqntid)");
      }
      if (!k.maxntid.empty()) {
        int64_t most = 1;
        for (int64_t d : k.maxntid)
          most *= d;
        if (threads > uint64_t(most))
          return createStringError(
              spec.path + ": block " + dims(block) + " is " +
              Twine(threads).str() + " threads, but '" + kernel + "' in " +
              object->file + " allows at most " + Twine(most).str() +
              " (.maxntid " + dims(k.maxntid) + ")");
      }
      if (k.params.empty())
        continue;
      std::vector<unsigned> got = spec.params(), want;
      for (const CubinParam &p : k.params)
        want.push_back(p.size);
      if (got == want)
        return kernel;
      auto describe = [](ArrayRef<unsigned> sizes) {
        std::string out;
        raw_string_ostream(out)
            << sizes.size() << " parameters (" << sum_of(sizes)
            << " bytes; sizes " << interleaved(sizes.take_front(12))
            << (sizes.size() > 12 ? ", ...)" : ")");
        return out;
      };
      // As many parameters but other sizes: a scalar of the wrong type
      // (an `index` is 8 bytes), not a memref spelled as a pointer.
      std::string advice =
          ". A memref<...> argument of an MLIR kernel is 3 + 2 x rank "
          "parameters: use {\"kind\": \"memref\", \"shape\": [...]}";
      if (got.size() == want.size()) {
        size_t i = 0;
        while (got[i] == want[i])
          ++i;
        advice = (". Parameter " + Twine(i) + " is " + Twine(got[i]) +
                  " bytes in the args but " + Twine(want[i]) +
                  " in the kernel: a scalar's \"type\" sets its size (" +
                  (want[i] == 8 ? "an index or i64 argument is \"i64\""
                                : "i8, i16, i32, i64, f16, bf16, f32, f64") +
                  ")")
                     .str();
      }
      return createStringError(spec.path + ": the args expand to " +
                               describe(got) + ", but '" + kernel + "' in " +
                               object->file + " takes " + describe(want) +
                               advice);
    }
    return kernel;
  }
  return kernel;
}

Expected<HostReference>
computeHostReference(const LaunchSpec &spec,
                     const std::vector<std::string> &host) {
  HostReference ref;
  if (!spec.reference)
    return ref;
  const ReferenceSpec &r = *spec.reference;
  ref.buffer = r.c;
  if (r.kind == ReferenceSpec::Kind::File) {
    uint64_t bytes = spec.buffers[r.c].bytes();
    Expected<std::string> data =
        readRegularFileText(r.file, bytes, FinalSymlink::Refuse);
    if (!data)
      return data.takeError();
    if (data->size() != bytes)
      return createStringError("%s: reference.file '%s' has %zu bytes, buffer "
                               "'%s' %llu",
                               spec.path.c_str(), r.file.c_str(), data->size(),
                               spec.buffers[r.c].name.c_str(),
                               (unsigned long long)bytes);
    ref.bytes = std::move(*data);
    ref.entries = spec.buffers[r.c].elements;
    return ref;
  }
  const BufferSpec &a = spec.buffers[r.a], &b = spec.buffers[r.b];
  auto A = reinterpret_cast<const uint8_t *>(host[r.a].data());
  auto B = reinterpret_cast<const uint8_t *>(host[r.b].data());
  int64_t rows = r.rows[1] - r.rows[0], cols = r.cols[1] - r.cols[0];
  auto add = [&](int64_t i, int64_t j) {
    double sum = 0;
    for (int64_t k = 0; k < r.k; ++k)
      sum += readElement(a.type, A, i * r.k + k) *
             readElement(b.type, B, k * r.n + j);
    ref.index.push_back(i * r.n + j);
    ref.expected.push_back(sum);
  };
  if (r.samples == 0 || r.samples / rows >= cols) {
    for (int64_t i = r.rows[0]; i < r.rows[1]; ++i)
      for (int64_t j = r.cols[0]; j < r.cols[1]; ++j)
        add(i, j);
    ref.entries = ref.index.size();
    return ref;
  }
  // Deterministic samples; the region's corners always included.
  uint64_t state = r.seed * 0x9E3779B97F4A7C15ull + 7;
  add(r.rows[0], r.cols[0]);
  add(r.rows[1] - 1, r.cols[1] - 1);
  for (int64_t s = 2; s < r.samples; ++s) {
    int64_t i =
        r.rows[0] + static_cast<int64_t>(splitMix64(state) % uint64_t(rows));
    add(i,
        r.cols[0] + static_cast<int64_t>(splitMix64(state) % uint64_t(cols)));
  }
  ref.entries = ref.index.size();
  return ref;
}

static void compare(Comparison &c, const BufferSpec &b, uint64_t i, double got,
                    double want, const Tolerance &tol) {
  ++c.checked;
  if (!std::isnan(got) && !std::isnan(want))
    c.maxAbsError = std::max(c.maxAbsError, std::fabs(got - want));
  bool ok =
      std::isnan(got) || std::isnan(want)
          ? std::isnan(got) && std::isnan(want)
          : std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
  if (ok || c.mismatches++)
    return;
  raw_string_ostream(c.firstMismatch)
      << b.name << "[" << i << "]: " << format("%.9g", got) << ", expected "
      << format("%.9g", want);
}

void compareWithHost(const HostReference &ref, const BufferSpec &b,
                     StringRef got, const Tolerance &tol, Comparison &c) {
  auto data = reinterpret_cast<const uint8_t *>(got.data());
  if (!ref.bytes.empty())
    return compareBuffers(b, got, ref.bytes, tol, c);
  for (size_t s = 0; s < ref.index.size(); ++s)
    compare(c, b, ref.index[s], readElement(b.type, data, ref.index[s]),
            ref.expected[s], tol);
}

void compareBuffers(const BufferSpec &b, StringRef got, StringRef want,
                    const Tolerance &tol, Comparison &c) {
  if (got == want) { // bit-identical
    c.checked += b.elements;
    return;
  }
  auto g = reinterpret_cast<const uint8_t *>(got.data());
  auto w = reinterpret_cast<const uint8_t *>(want.data());
  for (uint64_t i = 0; i < b.elements; ++i)
    compare(c, b, i, readElement(b.type, g, i), readElement(b.type, w, i), tol);
}

} // namespace fly::rt
