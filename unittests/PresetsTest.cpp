//===- PresetsTest.cpp - One preset builder, one target parser ------------===//

#include "fly/Compiler/Presets.h"
#include "fly/Compiler/TargetName.h"
#include "fly/Pipeline/TargetPresets.h"
#include "fly/Support/InstallLocation.h"

#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace fly;

namespace {

// The C API's preset is buildPresetPipeline's kernel-only one, string for
// string what it was when Presets.cpp built its own.
TEST(PresetsTest, CAPIPresetIsTheKernelOnlyPreset) {
  EXPECT_EQ(getPresetPipeline({"rocdl", "gfx942"}, "/tk"),
            "builtin.module(canonicalize,cse,rocdl-attach-target{chip=gfx942 "
            "O=2},gpu.module(convert-scf-to-cf,convert-gpu-to-rocdl{chipset="
            "gfx942}),reconcile-unrealized-casts,gpu-module-to-binary{format="
            "fatbin toolkit=/tk})");
  EXPECT_EQ(getPresetPipeline({"nvvm", "sm_80"}, "/tk", "isa"),
            "builtin.module(canonicalize,cse,nvvm-attach-target{chip=sm_80 "
            "O=2},gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm),"
            "reconcile-unrealized-casts,gpu-module-to-binary{format=isa "
            "toolkit=/tk})");
  TargetSpec rocdl{"rocdl", "gfx90a"};
  PresetOptions preset{"rocdl", "gfx90a", getDefaultObjectFormat("rocdl"),
                       "/tk", getPresetFeatures(rocdl, "/tk")};
  EXPECT_EQ(getPresetPipeline(rocdl, "/tk"),
            buildPresetPipeline(preset, InputShape()));
}

TEST(PresetsTest, OneTargetParser) {
  llvm::Expected<TargetSpec> ok = parseTargetSpec("nvvm:sm_90a");
  ASSERT_TRUE(static_cast<bool>(ok)) << llvm::toString(ok.takeError());
  EXPECT_EQ(ok->family, "nvvm");
  EXPECT_EQ(ok->chip, "sm_90a");
  // The chip is checked against LLVM's processor table, not only the form.
  llvm::Expected<TargetSpec> typo = parseTargetSpec("rocdl:gfx9422");
  ASSERT_FALSE(static_cast<bool>(typo));
  EXPECT_NE(llvm::toString(typo.takeError()).find("did you mean 'gfx942'"),
            std::string::npos);
  for (const char *bad : {"spirv:x", "rocdl:", "gfx942", ""}) {
    llvm::Expected<TargetSpec> spec = parseTargetSpec(bad);
    ASSERT_FALSE(static_cast<bool>(spec)) << bad;
    EXPECT_NE(llvm::toString(spec.takeError()).find("must be rocdl:<chip>"),
              std::string::npos)
        << bad;
  }
}

int localFunction() { return 1; }

// Code linked into the program is found in the program's own file, by its
// absolute path, whatever argv[0] was.
TEST(InstallLocationTest, CodeInTheProgramIsInTheProgram) {
  std::string program = getProgramPath();
  ASSERT_FALSE(program.empty());
  EXPECT_TRUE(llvm::sys::path::is_absolute(program));
  EXPECT_EQ(llvm::sys::path::filename(program), "FlySnapshotUnitTests");
  EXPECT_EQ(getProgramDir(), llvm::sys::path::parent_path(program));
  EXPECT_EQ(getCodeFilePath(reinterpret_cast<const void *>(&localFunction)),
            program);
}

} // namespace
