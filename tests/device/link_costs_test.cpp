// LinkCosts: what one start measures, the next one reads back; a damaged file costs a
// measurement, never a failure.
#include "device/link_costs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/temporary_path.hpp"

namespace versa::detail {
namespace {

class LinkCostsTest : public ::testing::Test {
 protected:
  // In a directory that does not exist yet: save() makes it.
  std::string path() const { return (directory_.path() / "cache" / "link-costs").string(); }

 private:
  const testing_support::TemporaryPath directory_{"link_costs"};
};

TEST_F(LinkCostsTest, WhatIsSavedIsFoundByTheNextStart) {
  {
    LinkCosts costs(path());
    EXPECT_FALSE(costs.find("host-to:GPU-1").has_value());
    costs.put("host-to:GPU-1", {24.5e9, 8e-6});
    costs.put("peer:GPU-1:GPU-2", {3.0e11, 2.5e-6});
    costs.put("host-to:GPU-1", {25.5e9, 9e-6});  // measured again: the later figure stays
    EXPECT_EQ(costs.save(), "");
  }
  const LinkCosts read(path());
  ASSERT_TRUE(read.find("host-to:GPU-1").has_value());
  EXPECT_DOUBLE_EQ(read.find("host-to:GPU-1")->bandwidth, 25.5e9);
  EXPECT_DOUBLE_EQ(read.find("host-to:GPU-1")->latency, 9e-6);
  ASSERT_TRUE(read.find("peer:GPU-1:GPU-2").has_value());
  EXPECT_DOUBLE_EQ(read.find("peer:GPU-1:GPU-2")->bandwidth, 3.0e11);
  EXPECT_FALSE(read.find("peer:GPU-2:GPU-1").has_value());
}

TEST_F(LinkCostsTest, LinesThatDoNotParseAreMeasuredAgain) {
  {
    LinkCosts costs(path());
    costs.put("good", {1e9, 1e-6});
    ASSERT_EQ(costs.save(), "");
  }
  {
    std::ofstream out(path(), std::ios::app);
    out << "no-figures\n"
        << "words 1e9 fast\n"
        << "negative -5 1e-6\n"
        << "extra 1e9 1e-6 more\n";
  }
  const LinkCosts read(path());
  EXPECT_TRUE(read.find("good").has_value());
  for (const char* key : {"no-figures", "words", "negative", "extra"})
    EXPECT_FALSE(read.find(key).has_value()) << key;
}

TEST_F(LinkCostsTest, AFileThatCannotBeWrittenIsReportedNotFatal) {
  std::filesystem::create_directories(std::filesystem::path(path()).parent_path());
  std::filesystem::create_directories(path());  // a directory where the file should be
  LinkCosts costs(path());
  costs.put("key", {1e9, 1e-6});
  EXPECT_NE(costs.save(), "");
  EXPECT_TRUE(std::filesystem::is_directory(path()));
}

TEST_F(LinkCostsTest, NothingIsWrittenWhenNothingChanged) {
  const LinkCosts costs(path());
  EXPECT_EQ(costs.save(), "");
  EXPECT_FALSE(std::filesystem::exists(path()));
}

}  // namespace
}  // namespace versa::detail
