// The DOT export of the task graph (Config::dot_file, VERSA_DOT): written when the runtime is
// destroyed, one node per task (flushes and host accesses of their own kind), one edge per
// direct dependency the versions imply, labelled with the handle. Small programs whose graph is
// known are run, and the file is parsed back into node and edge sets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "support/scoped_environment.hpp"
#include "support/temporary_path.hpp"
#include "versa/versa.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using versa::Span;
using versa::testing::eventually;
using versa::testing::workers;
using versa::testing_support::ScopedEnvironment;
using versa::testing_support::TemporaryPath;

struct Node {
  std::map<std::string, std::string> attributes;
  const std::string& operator[](const std::string& key) const { return attributes.at(key); }
};

// The graph as the file gives it: nodes by id, edges as (from name, to name, label).
struct Graph {
  std::map<std::string, Node> nodes;
  std::multiset<std::tuple<std::string, std::string, std::string>> edges;
  bool well_formed = false;

  // Node names, sorted, with repeats.
  std::multiset<std::string> names() const {
    std::multiset<std::string> out;
    for (const auto& [id, node] : nodes) out.insert(node["name"]);
    return out;
  }
  const Node& named(const std::string& name) const {
    for (const auto& [id, node] : nodes)
      if (node["name"] == name) return node;
    throw std::runtime_error("no node named " + name);
  }
};

Graph parse(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Graph graph;
  const std::string all = text.str();
  graph.well_formed = all.rfind("digraph versa {\n", 0) == 0 && all.size() > 2 &&
                      all.compare(all.size() - 2, 2, "}\n") == 0;
  const std::regex node_line(R"re(^  (t\d+) \[(.*)\];$)re");
  const std::regex edge_line(R"re(^  (t\d+) -> (t\d+) \[label="((?:[^"\\]|\\.)*)"\];$)re");
  const std::regex attribute(R"re((\w+)=(?:"((?:[^"\\]|\\.)*)"|(\w+)))re");
  std::istringstream lines(all);
  std::vector<std::tuple<std::string, std::string, std::string>> raw_edges;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_match(line, m, edge_line)) {
      raw_edges.emplace_back(m[1], m[2], m[3]);
    } else if (std::regex_match(line, m, node_line)) {
      Node node;
      const std::string list = m[2];
      for (std::sregex_iterator a(list.begin(), list.end(), attribute), end; a != end; ++a)
        node.attributes[(*a)[1]] = (*a)[2].matched ? (*a)[2].str() : (*a)[3].str();
      graph.nodes[m[1]] = node;
    }
  }
  for (const auto& [from, to, label] : raw_edges)
    graph.edges.emplace(graph.nodes.at(from)["name"], graph.nodes.at(to)["name"], label);
  return graph;
}

using Edges = std::multiset<std::tuple<std::string, std::string, std::string>>;

versa::Config dot_config(const TemporaryPath& file, int n = 2) {
  versa::Config config = workers(n);
  config.dot_file = file.path();
  return config;
}

TEST(Dot, AChainGivesOneEdgePerStep) {
  const TemporaryPath file("graph.dot");
  {
    versa::Runtime rt{dot_config(file)};
    int x = 0;
    auto h = rt.data(x, "x");
    rt.submit(
        "a", [](Span<int> v) { v[0] = 1; }, versa::write(h));
    rt.submit(
        "b", [](Span<int> v) { v[0] += 1; }, versa::write(h));
    rt.submit(
        "c", [](Span<const int>) {}, versa::read(h));
    rt.wait_all();
    EXPECT_FALSE(fs::exists(file.path())) << "written when the runtime is destroyed";
  }
  const Graph graph = parse(file.path());
  EXPECT_TRUE(graph.well_formed);
  EXPECT_EQ(graph.names(), (std::multiset<std::string>{"a", "b", "c"}));
  EXPECT_EQ(graph.edges, (Edges{{"a", "b", "x"}, {"b", "c", "x"}}));
  for (const auto& [id, node] : graph.nodes) {
    EXPECT_EQ(node["kind"], "task");
    EXPECT_EQ(node["shape"], "box");
    EXPECT_THAT(node["where"], testing::MatchesRegex("cpu worker [01]"));
    EXPECT_EQ(node.attributes.count("start_us"), 0u) << "times are asked for separately";
  }
}

TEST(Dot, ReadsForkAfterAWriteAndJoinBeforeTheNext) {
  const TemporaryPath file("graph.dot");
  {
    versa::Runtime rt{dot_config(file)};
    int x = 0;
    auto h = rt.data(x, "x");
    rt.submit(
        "w", [](Span<int> v) { v[0] = 1; }, versa::write(h));
    for (const char* name : {"r1", "r2", "r3"})
      rt.submit(
          name, [](Span<const int>) {}, versa::read(h));
    rt.submit(
        "j", [](Span<int> v) { v[0] = 2; }, versa::write(h));
    rt.wait_all();
  }
  const Graph graph = parse(file.path());
  EXPECT_EQ(graph.edges, (Edges{{"w", "r1", "x"},
                                {"w", "r2", "x"},
                                {"w", "r3", "x"},
                                {"r1", "j", "x"},
                                {"r2", "j", "x"},
                                {"r3", "j", "x"}}));
}

TEST(Dot, ACommuteRunHasNoEdgesInsideIt) {
  const TemporaryPath file("graph.dot");
  {
    versa::Runtime rt{dot_config(file)};
    int x = 0, y = 0;
    auto hx = rt.data(x, "x");
    auto hy = rt.data(y);  // unnamed: labelled with its number
    rt.submit(
        "init", [](Span<int> v, Span<int>) { v[0] = 1; }, versa::write(hx), versa::write(hy));
    rt.submit(
        "c1", [](Span<int> v) { v[0] += 1; }, versa::commute(hx));
    rt.submit(
        "c2", [](Span<int> v) { v[0] += 2; }, versa::commute(hx));
    rt.submit(
        "use", [](Span<const int>, Span<const int>) {}, versa::read(hx), versa::read(hy));
    rt.wait_all();
  }
  const Graph graph = parse(file.path());
  EXPECT_EQ(graph.edges, (Edges{{"init", "c1", "x"},
                                {"init", "c2", "x"},
                                {"c1", "use", "x"},
                                {"c2", "use", "x"},
                                {"init", "use", "#2"}}));
}

TEST(Dot, AddsThenAReadGoThroughTheirFlush) {
  const TemporaryPath file("graph.dot");
  {
    versa::Runtime rt{dot_config(file)};
    long x = 0;
    auto h = rt.data(x, "sum");
    h.set_reduction(versa::sum<long>());
    rt.submit(
        "init", [](Span<long> v) { v[0] = 1; }, versa::write(h));
    for (const char* name : {"add1", "add2"})
      rt.submit(
          name, [](Span<long> v) { v[0] += 1; }, versa::add(h));
    long seen = 0;
    rt.submit(
        "read", [&seen](Span<const long> v) { seen = v[0]; }, versa::read(h));
    rt.wait_all();
    EXPECT_EQ(seen, 3);
  }
  const Graph graph = parse(file.path());
  EXPECT_EQ(graph.names(),
            (std::multiset<std::string>{"init", "add1", "add2", "reduction flush", "read"}));
  EXPECT_EQ(graph.edges, (Edges{{"init", "add1", "sum"},
                                {"init", "add2", "sum"},
                                {"add1", "reduction flush", "sum"},
                                {"add2", "reduction flush", "sum"},
                                {"reduction flush", "read", "sum"}}));
  EXPECT_EQ(graph.named("reduction flush")["kind"], "flush");
  EXPECT_EQ(graph.named("reduction flush")["shape"], "diamond");
}

TEST(Dot, AHostAccessIsANodeOfItsOwnKind) {
  const TemporaryPath file("graph.dot");
  {
    versa::Runtime rt{dot_config(file)};
    int x = 0;
    auto h = rt.data(x, "x");
    rt.submit(
        "before", [](Span<int> v) { v[0] = 1; }, versa::write(h));
    {
      auto view = rt.acquire(versa::read(h));
      EXPECT_EQ(view[0], 1);
    }
    rt.submit(
        "after", [](Span<int> v) { v[0] = 2; }, versa::write(h));
    rt.wait_all();
  }
  const Graph graph = parse(file.path());
  EXPECT_EQ(graph.edges, (Edges{{"before", "host acquire", "x"}, {"host acquire", "after", "x"}}));
  const Node& host = graph.named("host acquire");
  EXPECT_EQ(host["kind"], "host_access");
  EXPECT_EQ(host["shape"], "ellipse");
  EXPECT_EQ(host["where"], "host");
}

// A renamed write_only starts a new line of versions (its edges are labelled as the renamed
// handle), with no edge from the reader it did not wait for; bringing the data home (here at
// wait_all) joins the two lines.
TEST(Dot, ARenamedWriteOnlyWaitsForNobodyAndComesHomeAtTheEnd) {
  const TemporaryPath file("graph.dot");
  {
    versa::Runtime rt{dot_config(file)};
    int x = 0;
    auto h = rt.data(x, "x");
    std::atomic<bool> written{false};
    rt.submit(
        "w", [](Span<int> v) { v[0] = 1; }, versa::write(h));
    rt.submit(
        "slow", [&](Span<const int>) { eventually(written); }, versa::read(h));
    rt.submit(
        "wo",
        [&](Span<int> v) {
          v[0] = 2;
          written = true;
        },
        versa::write_only(h));
    rt.submit(
        "r", [](Span<const int>) {}, versa::read(h));
    rt.wait_all();
    EXPECT_EQ(x, 2);
    EXPECT_EQ(rt.renamed_accesses(), 1u);
  }
  const Graph graph = parse(file.path());
  EXPECT_EQ(graph.edges, (Edges{{"w", "slow", "x"},
                                {"wo", "r", "x (renamed)"},
                                {"r", "bring home", "x (renamed)"},
                                {"slow", "bring home", "x"}}));
  EXPECT_EQ(graph.named("bring home")["kind"], "host_access");
}

TEST(Dot, TimesAreWrittenWhenAskedFor) {
  const TemporaryPath file("graph.dot");
  {
    versa::Config config = dot_config(file);
    config.dot_times = true;
    versa::Runtime rt{config};
    int x = 0;
    auto h = rt.data(x, "x");
    rt.submit(
        "slow",
        [](Span<int> v) { std::this_thread::sleep_for(std::chrono::milliseconds(5)), v[0] = 1; },
        versa::write(h));
    rt.submit(
        "next", [](Span<int> v) { v[0] = 2; }, versa::write(h));
    rt.wait_all();
  }
  const Graph graph = parse(file.path());
  const Node& slow = graph.named("slow");
  const Node& next = graph.named("next");
  const double slow_start = std::stod(slow["start_us"]), slow_end = std::stod(slow["end_us"]);
  EXPECT_GE(slow_start, 0);
  EXPECT_GE(slow_end - slow_start, 5000 * 0.9);
  EXPECT_GE(std::stod(next["start_us"]), slow_end);
  EXPECT_THAT(slow["label"], HasSubstr(" us"));
}

TEST(Dot, ADeviceTaskNamesItsDevice) {
  const TemporaryPath file("graph.dot");
  {
    versa::Runtime rt{versa::testing::with_emulated(dot_config(file), 1)};
    std::vector<double> data(16, 1.0);
    auto h = rt.data(data, "tile");
    auto on_device = versa::task_type("scale")
                         .cpu([](Span<double>) {})
                         .emulated([](Span<double> v) { v[0] = 2; })
                         .placement(versa::Placement::gpu_only);
    rt.submit(on_device, versa::write(h));
    rt.submit(
        "check", [](Span<const double>) {}, versa::read(h));
    rt.wait_all();
    EXPECT_EQ(data[0], 2.0);
  }
  const Graph graph = parse(file.path());
  EXPECT_EQ(graph.named("scale")["where"], "emulated:0");
  EXPECT_THAT(graph.named("check")["where"], testing::StartsWith("cpu worker"));
  EXPECT_EQ(graph.edges.count({"scale", "check", "tile"}), 1u);
}

TEST(Dot, TheEnvironmentAsksForTheFileAndItsTimes) {
  const TemporaryPath file("graph.dot");
  {
    ScopedEnvironment dot("VERSA_DOT", file.path().c_str());
    ScopedEnvironment times("VERSA_DOT_TIMES", "1");
    versa::Runtime rt{workers(1)};
    int x = 0;
    auto h = rt.data(x, "x");
    rt.submit(
        "only", [](Span<int> v) { v[0] = 1; }, versa::write(h));
    rt.wait_all();
  }
  const Graph graph = parse(file.path());
  EXPECT_EQ(graph.names(), (std::multiset<std::string>{"only"}));
  EXPECT_EQ(graph.named("only").attributes.count("start_us"), 1u);
  ScopedEnvironment times("VERSA_DOT_TIMES", "yes");
  EXPECT_THROW(versa::Config::from_environment(versa::Config{}), std::invalid_argument);
}

// Refused when the runtime starts; a file that could not be written at the end after all (its
// folder removed meanwhile) is reported through the diagnostics.
TEST(Dot, AnUnwritableFileIsRefusedAtTheStartAndReportedAtTheEnd) {
  versa::Config config = workers(1);
  config.dot_file = "/nonexistent-directory/graph.dot";
  EXPECT_THAT([&config] { versa::Runtime rt{config}; },
              testing::ThrowsMessage<std::invalid_argument>(
                  HasSubstr("Config::dot_file (VERSA_DOT) = '/nonexistent-directory/graph.dot' "
                            "cannot be written: No such file or directory")));
  const TemporaryPath folder("folder");
  fs::create_directories(folder.path());
  config.dot_file = (folder.path() / "graph.dot").string();
  std::vector<std::string> messages;
  config.diagnostics = [&messages](const std::string& message) { messages.push_back(message); };
  {
    versa::Runtime rt{config};
    rt.submit("task", [] {});
    rt.wait_all();
    fs::remove_all(folder.path());
  }
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_THAT(messages[0], HasSubstr("cannot write the DOT file '" + config.dot_file + "'"));
}

}  // namespace
