//===- CodeFile.cpp - The files the running code was loaded from ----------===//

#include "Location/CodeFile.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace fly::location {

namespace {

bool isRegularFile(const std::string &path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// The file mapped at `base` as the kernel names it (absolute, fixed when it
/// was mapped): /proc/self/maps' "start-end perms offset dev inode path".
std::string getMappedFile(const void *base) {
  std::unique_ptr<FILE, int (*)(FILE *)> maps(
      std::fopen("/proc/self/maps", "r"), &std::fclose);
  if (!maps)
    return "";
  auto wanted = reinterpret_cast<std::uintptr_t>(base);
  char line[4096 + 128];
  // A line longer than `line` comes in pieces; only a line's first is read.
  for (bool lineStart = true; std::fgets(line, sizeof line, maps.get());
       lineStart = std::strchr(line, '\n') != nullptr) {
    unsigned long start = 0, end = 0;
    if (!lineStart || std::sscanf(line, "%lx-%lx", &start, &end) != 2 ||
        wanted < start || wanted >= end)
      continue;
    const char *path = std::strchr(line, '/');
    if (!path)
      return "";
    std::string file(path, std::strcspn(path, "\n"));
    // A file replaced or removed since it was mapped is no longer there.
    const char *deleted = " (deleted)";
    if (file.size() > std::strlen(deleted) &&
        file.compare(file.size() - std::strlen(deleted), std::string::npos,
                     deleted) == 0)
      return "";
    return file;
  }
  return "";
}

} // namespace

std::string getExecutablePath() {
  std::unique_ptr<char, void (*)(void *)> real(
      realpath("/proc/self/exe", nullptr), &std::free);
  return real ? std::string(real.get()) : "";
}

std::string getCodeFilePath(const void *address) {
  Dl_info info;
  link_map *object = nullptr;
  if (!address ||
      !dladdr1(address, &info, reinterpret_cast<void **>(&object),
               RTLD_DL_LINKMAP) ||
      !object)
    return "";
  // For the program, dladdr names argv[0], which may be a bare name found on
  // PATH or anything its parent chose.
  void *program = dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD);
  link_map *programObject = nullptr;
  if (program) {
    dlinfo(program, RTLD_DI_LINKMAP, &programObject);
    dlclose(program);
  }
  if (object == programObject)
    return getExecutablePath();
  std::string loaded = info.dli_fname ? info.dli_fname : "";
  // A relative name (dlopen("lib/libFlySnapshotCAPI.so")) was relative to
  // the working directory of that dlopen, which may have changed since.
  if (!loaded.empty() && loaded.front() != '/')
    loaded = getMappedFile(info.dli_fbase);
  return isRegularFile(loaded) ? loaded : "";
}

std::string getDirectoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

} // namespace fly::location
