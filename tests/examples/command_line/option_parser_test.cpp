// The command-line tools' option parser (examples/common/option_parser.hpp): what it accepts and
// stores, what it refuses and with which words, what a wrong call or --help returns, without
// ending the process.
#include "option_parser.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// A parser and the streams it reports on.
struct Tool {
  example::OptionParser parser{"tool", "test tool"};
  std::ostringstream out, err;

  std::optional<int> parse(const std::vector<std::string>& args) {
    return parser.parse(args, out, err);
  }
};

// A tool with one positive integer option, --n.
struct SizeTool : Tool {
  long n = 4096;
  SizeTool() { parser.option("-n,--n", n, "size").positive(); }
};

TEST(OptionParser, BadIntegersAreRefusedNamingTheOptionAndValue) {
  for (const std::string value : {"12x", "", "-3", "0", "1.5", "0x10", "99999999999999999999"}) {
    SizeTool tool;
    EXPECT_EQ(tool.parse({"--n", value}), 2) << value;
    const std::string message = tool.err.str();
    EXPECT_NE(message.find("tool: --n: "), std::string::npos) << message;
    EXPECT_NE(message.find(value), std::string::npos) << message;
    EXPECT_EQ(tool.n, 4096) << value;
  }
}

TEST(OptionParser, IntegersAreDecimalAndTheLastValueWins) {
  SizeTool tool;
  EXPECT_EQ(tool.parse({"--n", "010"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(tool.n, 10);
  EXPECT_EQ(tool.parse({"-n", "5", "--n", "7"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(tool.n, 7);
}

TEST(OptionParser, IntegersStopAtTheTargetsLargest) {
  Tool tool;
  int small = 1;
  tool.parser.option("--small", small, "an int").positive();
  EXPECT_EQ(tool.parse({"--small", "2147483648"}), 2);
  EXPECT_NE(tool.err.str().find("must be at most 2147483647"), std::string::npos) << tool.err.str();
  EXPECT_EQ(small, 1);
}

TEST(OptionParser, NonNegativeTakesZeroButNotLess) {
  Tool tool;
  int warmup = 3;
  tool.parser.option("--warmup", warmup, "warm-up runs").non_negative();
  EXPECT_EQ(tool.parse({"--warmup", "0"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(warmup, 0);
  Tool wrong;
  wrong.parser.option("--warmup", warmup, "warm-up runs").non_negative();
  EXPECT_EQ(wrong.parse({"--warmup", "-1"}), 2);
  EXPECT_NE(wrong.err.str().find("--warmup: must be at least 0, not -1"), std::string::npos)
      << wrong.err.str();
}

TEST(OptionParser, WholeNumberChecksAreForIntegersOnly) {
  Tool tool;
  double eps = 1e-6;
  EXPECT_THROW(tool.parser.option("--eps", eps, "tolerance").positive(), std::logic_error);
}

TEST(OptionParser, ListItemsAreEachCheckedAsIntegers) {
  Tool tool;
  std::vector<int> counts{2};
  tool.parser.option("--workers", counts, "worker counts").comma_separated().positive();
  EXPECT_EQ(tool.parse({"--workers", "1,04,8"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(counts, (std::vector<int>{1, 4, 8}));
  for (const std::string list : {"1,0", "1,x", "0"}) {
    counts = {2};
    std::ostringstream out, err;
    EXPECT_EQ(tool.parser.parse({"--workers", list}, out, err), 2) << list;
    EXPECT_NE(err.str().find("--workers: "), std::string::npos) << err.str();
  }
}

TEST(OptionParser, OneItemPerUseLeavesTheNextWordToPositionals) {
  Tool tool;
  std::vector<std::string> systems, suites;
  tool.parser.option("--systems", systems, "systems").comma_separated().one_item_per_use();
  tool.parser.option("suites", suites, "suites").one_of({"a", "b"});
  EXPECT_EQ(tool.parse({"--systems", "x,y", "a", "b"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(systems, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(suites, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(tool.parse({"c"}), 2);
  EXPECT_NE(tool.err.str().find("suites: "), std::string::npos) << tool.err.str();
}

TEST(OptionParser, ValueChecksNameTheOption) {
  Tool tool;
  std::string kind = "cpu";
  tool.parser.option("--kind", kind, "kind").check([](const std::string& text) -> std::string {
    return text == "cpu" || text == "gpu" ? "" : "no kind '" + text + "'";
  });
  EXPECT_EQ(tool.parse({"--kind", "gpu"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(kind, "gpu");
  EXPECT_EQ(tool.parse({"--kind", "tpu"}), 2);
  EXPECT_NE(tool.err.str().find("tool: --kind: no kind 'tpu'"), std::string::npos)
      << tool.err.str();
}

TEST(OptionParser, ReadOptionsStoreOrRefuseWithTheOptionsName) {
  Tool tool;
  int level = 0;
  tool.parser.option(
      "--level",
      [&level](const std::string& text) {
        if (text != "low" && text != "high") throw std::invalid_argument("not a level: " + text);
        level = text == "high" ? 2 : 1;
      },
      "level");
  EXPECT_EQ(tool.parse({"--level", "low", "--level", "high"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(level, 2) << "the last value wins";
  EXPECT_EQ(tool.parse({"--level", "mid"}), 2);
  EXPECT_NE(tool.err.str().find("tool: --level: not a level: mid"), std::string::npos)
      << tool.err.str();
}

TEST(OptionParser, FlagsSetTheirTargetOrCallBack) {
  Tool tool;
  bool check = false;
  int quick = 0;
  tool.parser.flag("--check", check, "check");
  tool.parser.flag(
      "--quick", [&quick] { ++quick; }, "quick");
  EXPECT_EQ(tool.parse({"--quick"}), std::nullopt) << tool.err.str();
  EXPECT_FALSE(check);
  EXPECT_EQ(quick, 1);
  EXPECT_TRUE(tool.parser.given("--quick"));
  EXPECT_FALSE(tool.parser.given("--check"));
}

TEST(OptionParser, ChecksOfOptionsTogetherRunInOrderAndNameTheOption) {
  Tool tool;
  long n = 100, tile = 10;
  std::vector<std::string> ran;
  tool.parser.option("--n", n, "n").positive();
  tool.parser.option("--tile", tile, "tile").positive();
  tool.parser.validate([&] {
    ran.push_back("first");
    if (tile > n)
      throw example::OptionError("--tile", std::to_string(tile) + " is larger than --n");
  });
  tool.parser.validate([&] { ran.push_back("second"); });
  EXPECT_EQ(tool.parse({"--tile", "50"}), std::nullopt) << tool.err.str();
  EXPECT_EQ(ran, (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(tool.parse({"--tile", "500"}), 2);
  EXPECT_NE(tool.err.str().find("tool: --tile: 500 is larger than --n"), std::string::npos)
      << tool.err.str();
}

TEST(OptionParser, NeedsRefusesAnOptionWithoutTheOther) {
  Tool tool;
  bool check = false;
  std::string file;
  tool.parser.flag("--check", check, "check");
  tool.parser.option("--save", file, "file").needs("--check");
  EXPECT_EQ(tool.parse({"--save", "x"}), 2);
  EXPECT_NE(tool.err.str().find("--save"), std::string::npos) << tool.err.str();
  Tool right;
  right.parser.flag("--check", check, "check");
  right.parser.option("--save", file, "file").needs("--check");
  EXPECT_EQ(right.parse({"--save", "x", "--check"}), std::nullopt) << right.err.str();
  EXPECT_EQ(file, "x");
}

TEST(OptionParser, UnknownOptionIsAWrongCall) {
  SizeTool tool;
  EXPECT_EQ(tool.parse({"--bogus", "2"}), 2);
  EXPECT_NE(tool.err.str().find("unknown option '--bogus'"), std::string::npos) << tool.err.str();
  EXPECT_EQ(tool.n, 4096);
}

TEST(OptionParser, HelpPrintsTheOptionsAndSucceeds) {
  SizeTool tool;
  tool.parser.option("--shown", tool.n, "shown").type_name("SIZE").show_default();
  EXPECT_EQ(tool.parse({"--n", "5", "--help"}), 0);
  const std::string help = tool.out.str();
  EXPECT_NE(help.find("test tool"), std::string::npos) << help;
  EXPECT_NE(help.find("--n"), std::string::npos) << help;
  EXPECT_NE(help.find("SIZE"), std::string::npos) << help;
  EXPECT_NE(help.find("4096"), std::string::npos) << help;
  EXPECT_TRUE(tool.err.str().empty()) << tool.err.str();
}

}  // namespace
