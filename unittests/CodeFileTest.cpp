//===- CodeFileTest.cpp - Where the running code lives on disk ------------===//

#include "Location/CodeFile.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <memory>
#include <string>

#include <gtest/gtest.h>

using namespace fly::location;

namespace {

int localFunction() { return 1; }

std::string getCurrentDir() {
  char dir[PATH_MAX];
  return getcwd(dir, sizeof dir) ? dir : "";
}

/// Works in `dir` while alive, then returns to where the test was.
class WorkingDirectory {
public:
  explicit WorkingDirectory(const std::string &dir) : saved(getCurrentDir()) {
    entered = chdir(dir.c_str()) == 0;
  }
  ~WorkingDirectory() {
    if (chdir(saved.c_str()) != 0)
      ADD_FAILURE() << "cannot return to " << saved;
  }
  bool entered;

private:
  std::string saved;
};

// Code linked into the program is in the program's own file, whatever
// argv[0] was.
TEST(CodeFileTest, CodeInTheProgramIsTheProgram) {
  std::string program = getExecutablePath();
  ASSERT_FALSE(program.empty());
  EXPECT_EQ(program.front(), '/');
  EXPECT_EQ(program.substr(program.rfind('/') + 1), "FlySnapshotUnitTests");
  EXPECT_EQ(getCodeFilePath(reinterpret_cast<const void *>(&localFunction)),
            program);
}

TEST(CodeFileTest, AnAddressInNoFileHasNoPath) {
  int onTheStack = 0;
  auto onTheHeap = std::make_unique<int>(0);
  EXPECT_EQ(getCodeFilePath(nullptr), "");
  EXPECT_EQ(getCodeFilePath(&onTheStack), "");
  EXPECT_EQ(getCodeFilePath(onTheHeap.get()), "");
}

// dlopen("lib/libX.so") names the library relative to the working directory
// of that call: its path stays the file loaded after a chdir.
TEST(CodeFileTest, ALibraryLoadedByARelativeNameKeepsItsPath) {
  const std::string root = FLY_TEST_CODE_FILE_LIBRARY_ROOT;
  const std::string name = "lib/libFlyCodeFileTestLibrary.so";
  void *library = nullptr;
  {
    WorkingDirectory inRoot(root);
    ASSERT_TRUE(inRoot.entered) << root;
    library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(library, nullptr) << dlerror();
  }
  Dl_info info;
  void *function = dlsym(library, "flyCodeFileTestFunction");
  ASSERT_NE(function, nullptr);
  ASSERT_TRUE(dladdr(function, &info));
  EXPECT_EQ(std::string(info.dli_fname), name);
  const std::string expected = root + "/" + name;
  EXPECT_EQ(getCodeFilePath(function), expected);
  {
    WorkingDirectory elsewhere("/");
    ASSERT_TRUE(elsewhere.entered);
    EXPECT_EQ(getCodeFilePath(function), expected);
  }
  EXPECT_EQ(getDirectoryOf(getCodeFilePath(function)), root + "/lib/");
  dlclose(library);
}

TEST(CodeFileTest, DirectoryOfKeepsTheSlash) {
  EXPECT_EQ(getDirectoryOf("/a/lib/x.so"), "/a/lib/");
  EXPECT_EQ(getDirectoryOf("/x"), "/");
  EXPECT_EQ(getDirectoryOf("lib/x.so"), "lib/");
  EXPECT_EQ(getDirectoryOf("x.so"), "");
  EXPECT_EQ(getDirectoryOf(""), "");
}

} // namespace
