// The Unbalanced Tree Search of examples/uts: the SHA-1 random numbers against values computed
// independently from the reference's definition, the sequential search against the published
// sample trees, and the Versa search (a task per node and per chunk) against both on 1, 2, 4 and
// 8 workers.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "base/thread_annotations.hpp"  // VERSA_TSAN
#include "sample_trees.hpp"
#include "sequential_search.hpp"
#include "sha1_rng.hpp"
#include "support/config.hpp"
#include "versa_search.hpp"

namespace {

using versa::testing::workers;

// Under ThreadSanitizer the small binomial tree (112,169 nodes) takes 0.15-0.26 s with a task per
// chunk and 0.7-1 s with a task per node; the 4-million-node trees would take 6-10 s a search, 8
// searches, so only the small trees run there (all of this file: about 4 s).
constexpr bool thread_sanitizer = VERSA_TSAN;

std::string hex(const uts::RngState& state) {
  std::string text;
  char byte[3];
  for (std::uint8_t b : state.bytes) {
    std::snprintf(byte, sizeof byte, "%02x", b);
    text += byte;
  }
  return text;
}

// Python's hashlib: sha1(bytes(16) + seed.to_bytes(4, 'big')) for the root, and
// sha1(root + i.to_bytes(4, 'big')) for child i; the number is the last four bytes, big-endian,
// & 0x7fffffff.
TEST(UtsRng, RootAndChildrenAreTheReferenceDigests) {
  const uts::RngState root19 = uts::rng_root(19);
  EXPECT_EQ(hex(root19), "c6988ab70cc9559ae4d6cba254e29a845a85f86b");
  EXPECT_EQ(uts::rng_rand(root19), 1518729323);
  EXPECT_EQ(hex(uts::rng_child(root19, 0)), "2fb3131030280c1617a81d6a49c1e29effb19645");
  EXPECT_EQ(uts::rng_rand(uts::rng_child(root19, 0)), 2142344773);
  EXPECT_EQ(hex(uts::rng_child(root19, 1)), "4a8304c7c88f903ac06b01b07c7b2590e9397b5b");
  EXPECT_EQ(hex(uts::rng_child(root19, 99)), "a1abdb6f91f695c966cb1b10f6d1e5672932a8ff");

  const uts::RngState root0 = uts::rng_root(0);
  EXPECT_EQ(hex(root0), "6768033e216468247bd031a0a2d9876d79818f8f");
  EXPECT_EQ(uts::rng_rand(root0), 2038534031);
  EXPECT_EQ(hex(uts::rng_child(root0, 0)), "f6b4e21a6db7135e161960a04c6bd6cab35bd8d3");
  EXPECT_EQ(uts::rng_rand(uts::rng_child(root0, 1)), 17294612);

  const uts::RngState root42 = uts::rng_root(42);
  EXPECT_EQ(hex(root42), "a11dabbcec7aab309c890ab3dbc256eaeb582782");
  EXPECT_EQ(hex(uts::rng_child(root42, 99)), "003427d2bae2a3a03329a14a9401c34d7ff16ec7");
  EXPECT_EQ(uts::rng_rand(uts::rng_child(root42, 99)), 2146528967);
}

TEST(UtsRng, ChildrenDependOnTheirIndexAndParentOnly) {
  const uts::RngState root = uts::rng_root(7);
  EXPECT_EQ(uts::rng_child(root, 3), uts::rng_child(root, 3));
  EXPECT_NE(uts::rng_child(root, 3), uts::rng_child(root, 4));
  EXPECT_NE(uts::rng_child(root, 3), uts::rng_child(uts::rng_root(8), 3));
}

TEST(UtsTree, BinomialRootHasItsBranchingFactorOfChildren) {
  const uts::TreeShape t3 = uts::sample_tree("T3").shape;
  EXPECT_EQ(uts::child_count(t3, uts::root_node(t3)), 2000);
  const uts::Node child = uts::child_node(uts::root_node(t3), 5);
  EXPECT_EQ(child.height, 1);
  const int children = uts::child_count(t3, child);
  EXPECT_TRUE(children == 0 || children == 8);
}

// The sequential search of each tree, computed once per test program.
const uts::TreeStats& sequential(const std::string& tree) {
  static std::map<std::string, uts::TreeStats> done;
  auto found = done.find(tree);
  if (found == done.end())
    found = done.emplace(tree, uts::search_sequential(uts::sample_tree(tree).shape)).first;
  return found->second;
}

// The sequential search finds the published figures: nodes, leaves and depth.
TEST(UtsSequential, FindsThePublishedFigures) {
  for (const uts::SampleTree& tree : uts::sample_trees()) {
    const bool large = tree.expected.nodes > 1'000'000;
    if (thread_sanitizer && large) continue;
    SCOPED_TRACE(tree.name);
    const uts::TreeStats& found = sequential(tree.name);
    EXPECT_EQ(found.nodes, tree.expected.nodes);
    EXPECT_EQ(found.leaves, tree.expected.leaves);
    EXPECT_EQ(found.max_depth, tree.expected.max_depth);
  }
}

// How a search cuts its tree into tasks: a task per node, or per chunk released when the
// worker has none queued (the default) or at every chunk.
enum class Cut { node, chunk_on_demand, chunk_steady };

uts::SearchOptions options_for(Cut cut) {
  uts::SearchOptions options;
  options.granularity = cut == Cut::node ? uts::TaskGranularity::node : uts::TaskGranularity::chunk;
  options.on_demand = cut == Cut::chunk_on_demand;
  options.chunk_nodes = 8;  // small chunks: many tasks and steals even on the small trees
  return options;
}

const char* to_string(Cut cut) {
  switch (cut) {
    case Cut::node:
      return "node";
    case Cut::chunk_on_demand:
      return "chunk";
    case Cut::chunk_steady:
      return "steady_chunk";
  }
  return "";
}

using VersaCase = std::tuple<int, Cut, std::string>;

class UtsVersa : public testing::TestWithParam<VersaCase> {};

TEST_P(UtsVersa, MatchesSequentialAndPublished) {
  const auto& [worker_count, cut, tree_name] = GetParam();
  const uts::SampleTree& tree = uts::sample_tree(tree_name);
  const bool sample = tree.expected.nodes > 1'000'000;  // T1, T3: 4 million nodes each
  if (thread_sanitizer && sample)
    GTEST_SKIP() << "4-million-node trees are left to the Release build";
  // The sample trees run untracked, as the benchmarks do (tasks without accesses then take the
  // runtime's short paths); the small ones tracked, so that a stall would be reported.
  versa::Runtime rt{sample ? versa::testing::untracked(workers(worker_count))
                           : workers(worker_count)};
  const uts::TreeStats found = uts::search_versa(rt, tree.shape, options_for(cut));
  EXPECT_EQ(found, sequential(tree_name));
  EXPECT_EQ(found.nodes, tree.expected.nodes);
  EXPECT_EQ(found.leaves, tree.expected.leaves);
  EXPECT_EQ(found.max_depth, tree.expected.max_depth);
}

std::string case_name(const testing::TestParamInfo<VersaCase>& info) {
  std::string tree = std::get<2>(info.param);
  for (char& c : tree)
    if (c == '-') c = '_';
  return tree + "_" + to_string(std::get<1>(info.param)) + "_" +
         std::to_string(std::get<0>(info.param)) + "_workers";
}

INSTANTIATE_TEST_SUITE_P(SmallTrees, UtsVersa,
                         testing::Combine(testing::Values(1, 2, 4, 8),
                                          testing::Values(Cut::node, Cut::chunk_on_demand,
                                                          Cut::chunk_steady),
                                          testing::Values("small-geometric", "small-binomial")),
                         case_name);

// A task per node of T3 (1572 levels) is slow on this runtime (docs/uts.md): the sample trees
// run with a task per chunk.
INSTANTIATE_TEST_SUITE_P(SampleTrees, UtsVersa,
                         testing::Combine(testing::Values(1, 2, 4, 8),
                                          testing::Values(Cut::chunk_on_demand, Cut::chunk_steady),
                                          testing::Values("T1", "T3")),
                         case_name);

TEST(UtsVersaOptions, RefusesEmptyChunks) {
  versa::Runtime rt{workers(1)};
  uts::SearchOptions options;
  options.chunk_nodes = 0;
  EXPECT_THROW(uts::search_versa(rt, uts::sample_tree("small-geometric").shape, options),
               std::invalid_argument);
}

TEST(UtsSampleTrees, UnknownNameListsTheKnownOnes) {
  try {
    uts::sample_tree("T9");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("T1, T2, T3"), std::string::npos) << e.what();
  }
}

}  // namespace
