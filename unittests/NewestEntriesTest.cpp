//===- NewestEntriesTest.cpp - The backend's bounded reuse tables ---------===//

#include "Backend/NewestEntries.h"

#include "gtest/gtest.h"

#include <string>

using namespace fly;

TEST(NewestEntriesTest, DropsTheOldestOverTheByteBound) {
  NewestEntries<std::string, int> entries(/*maxBytes=*/10);
  EXPECT_TRUE(entries.insert("a", 1, 4));
  EXPECT_TRUE(entries.insert("b", 2, 4));
  EXPECT_EQ(entries.bytes(), 8u);
  // 12 bytes: "a", the oldest, goes.
  EXPECT_TRUE(entries.insert("c", 3, 4));
  EXPECT_EQ(entries.find("a"), nullptr);
  ASSERT_NE(entries.find("b"), nullptr);
  EXPECT_EQ(*entries.find("b"), 2);
  EXPECT_EQ(*entries.find("c"), 3);
  EXPECT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries.bytes(), 8u);
}

TEST(NewestEntriesTest, FindingDoesNotMakeAnEntryNewer) {
  NewestEntries<std::string, int> entries(/*maxBytes=*/8);
  entries.insert("a", 1, 4);
  entries.insert("b", 2, 4);
  ASSERT_NE(entries.find("a"), nullptr);
  entries.insert("c", 3, 4);
  EXPECT_EQ(entries.find("a"), nullptr);
  EXPECT_NE(entries.find("b"), nullptr);
}

TEST(NewestEntriesTest, KeepsTheFirstValueOfAKey) {
  NewestEntries<std::string, int> entries(/*maxBytes=*/100);
  EXPECT_TRUE(entries.insert("a", 1, 4));
  EXPECT_FALSE(entries.insert("a", 2, 50));
  EXPECT_EQ(*entries.find("a"), 1);
  EXPECT_EQ(entries.bytes(), 4u);
  EXPECT_EQ(entries.size(), 1u);
}

TEST(NewestEntriesTest, BoundsTheNumberOfEntries) {
  NewestEntries<int, int> entries(/*maxBytes=*/1000, /*maxEntries=*/3);
  for (int i = 0; i < 5; ++i)
    entries.insert(i, i * 10, 1);
  EXPECT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries.bytes(), 3u);
  EXPECT_EQ(entries.find(0), nullptr);
  EXPECT_EQ(entries.find(1), nullptr);
  for (int i = 2; i < 5; ++i) {
    ASSERT_NE(entries.find(i), nullptr);
    EXPECT_EQ(*entries.find(i), i * 10);
  }
}

TEST(NewestEntriesTest, TheNewestStaysAloneOverTheBound) {
  NewestEntries<std::string, int> entries(/*maxBytes=*/10);
  entries.insert("a", 1, 4);
  entries.insert("b", 2, 4);
  entries.insert("big", 3, 25);
  EXPECT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries.bytes(), 25u);
  EXPECT_NE(entries.find("big"), nullptr);
  // The next insert drops it.
  entries.insert("d", 4, 1);
  EXPECT_EQ(entries.find("big"), nullptr);
  EXPECT_EQ(entries.bytes(), 1u);
}
