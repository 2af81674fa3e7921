//===- BoundedJSONTest.cpp - Every JSON reader refuses deep nesting -------===//
//
// 50,000 '[' overflowed the stack of every reader (llvm::json::parse
// recurses per level). The bounded parser refuses them with the place, and
// the readers built on it return that error instead of crashing.
//
//===----------------------------------------------------------------------===//

#include "fly/Support/BoundedJSON.h"
#include "fly/Cache/VariantCodec.h"
#include "fly/Hints/HintSet.h"
#include "fly/Replay/ReplayPlan.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <string>

using namespace fly;

namespace {

std::string deeplyNested(size_t depth = 50000) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(BoundedJSON, DeepNestingIsRefusedWithItsPlace) {
  llvm::Expected<llvm::json::Value> value =
      parseJSONBounded("\n  " + deeplyNested(), "hints.json");
  ASSERT_FALSE(static_cast<bool>(value));
  EXPECT_EQ(llvm::toString(value.takeError()),
            "hints.json: 2:259: JSON nested deeper than the 256 levels "
            "accepted");
}

TEST(BoundedJSON, NestingWithinTheLimitAndBracketsInStringsParse) {
  JSONLimits limits;
  limits.maxDepth = 3;
  std::string text = R"([[{"a": "[[[[\"[[[[", "b": [1]}]])";
  llvm::Expected<llvm::json::Value> value = parseJSONBounded(text, "", limits);
  ASSERT_TRUE(static_cast<bool>(value)) << llvm::toString(value.takeError());
  limits.maxDepth = 2;
  value = parseJSONBounded(text, "", limits);
  ASSERT_FALSE(static_cast<bool>(value));
  EXPECT_EQ(llvm::toString(value.takeError()),
            "1:3: JSON nested deeper than the 2 levels accepted");
}

TEST(BoundedJSON, SizeIsBoundedAndParseErrorsNameTheSource) {
  JSONLimits limits;
  limits.maxBytes = 4;
  llvm::Expected<llvm::json::Value> value =
      parseJSONBounded("[1, 2]", "plan.json", limits);
  ASSERT_FALSE(static_cast<bool>(value));
  EXPECT_EQ(llvm::toString(value.takeError()),
            "plan.json: the JSON text is 6 bytes, more than the 4 accepted");
  value = parseJSONBounded("[1,", "plan.json");
  ASSERT_FALSE(static_cast<bool>(value));
  EXPECT_TRUE(llvm::StringRef(llvm::toString(value.takeError()))
                  .starts_with("plan.json:"));
}

TEST(BoundedJSON, ReadersReturnTheErrorInsteadOfCrashing) {
  llvm::Expected<std::vector<HintSet>> hints =
      parseHintSetsJSON(deeplyNested());
  ASSERT_FALSE(static_cast<bool>(hints));
  EXPECT_NE(llvm::toString(hints.takeError()).find("nested deeper"),
            std::string::npos);

  llvm::Expected<ReplayPlan> plan = parseReplayPlan(deeplyNested());
  ASSERT_FALSE(static_cast<bool>(plan));
  EXPECT_NE(llvm::toString(plan.takeError()).find("nested deeper"),
            std::string::npos);

  mlir::MLIRContext context;
  EXPECT_FALSE(decodeVariant(deeplyNested(), context).has_value());
}

} // namespace
