//===- Environment.cpp - FLY_* environment variables, parsed strictly -----===//

#include "Support/Environment.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"

#include <mutex>

#include <unistd.h>

using namespace llvm;

namespace fly {

void warnOnce(StringRef key, StringRef message) {
  static std::mutex mutex;
  static StringSet<> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (!warned.insert(key).second)
    return;
  WithColor::warning(errs(), "fly-snapshot") << message << "\n";
}

static std::optional<bool> parseFlag(StringRef v) {
  for (StringRef yes : {"1", "true", "yes", "on"})
    if (v.equals_insensitive(yes))
      return true;
  for (StringRef no : {"0", "false", "no", "off"})
    if (v.equals_insensitive(no))
      return false;
  return std::nullopt;
}

std::optional<bool> getEnvFlag(StringRef name) {
  std::optional<std::string> value = sys::Process::GetEnv(name);
  if (!value || value->empty())
    return std::nullopt;
  if (std::optional<bool> flag = parseFlag(StringRef(*value).trim()))
    return flag;
  warnOnce(name, (name + "='" + *value +
                  "' is not understood and is ignored; accepted: 1, true, "
                  "yes, on or 0, false, no, off")
                     .str());
  return std::nullopt;
}

std::optional<std::string> getEnvFlagOrWord(StringRef name, StringRef word) {
  std::optional<std::string> value = sys::Process::GetEnv(name);
  if (!value || value->empty())
    return std::nullopt;
  StringRef v = StringRef(*value).trim();
  if (v.equals_insensitive(word))
    return word.str();
  if (std::optional<bool> flag = parseFlag(v))
    return std::string(*flag ? "1" : "0");
  warnOnce(name, (name + "='" + *value +
                  "' is not understood and is ignored; accepted: 1, true, "
                  "yes, on, 0, false, no, off or " +
                  word)
                     .str());
  return std::nullopt;
}

std::optional<uint64_t> getEnvUnsigned(StringRef name) {
  std::optional<std::string> value = sys::Process::GetEnv(name);
  if (!value || value->empty())
    return std::nullopt;
  uint64_t number;
  if (!StringRef(*value).trim().getAsInteger(10, number))
    return number;
  warnOnce(name, (name + "='" + *value +
                  "' is not understood and is ignored; accepted: a "
                  "non-negative whole number")
                     .str());
  return std::nullopt;
}

std::string getHostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1))
    return "localhost";
  return name;
}

} // namespace fly
