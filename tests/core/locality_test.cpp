// Config::locality: a ready task goes to the worker that last wrote its largest input. Results
// equal the sequential program's whatever the placement (the fuzzers, fuzz_test.cpp); here, how
// it is turned on and that a dependent chain over several handles computes what it should.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "versa/versa.hpp"

namespace {

TEST(Locality, EnvironmentTurnsItOnAndOff) {
  {
    const versa::testing_support::ScopedEnvironment env("VERSA_LOCALITY", "1");
    EXPECT_TRUE(versa::Config::from_environment({}).locality);
  }
  {
    const versa::testing_support::ScopedEnvironment env("VERSA_LOCALITY", "0");
    versa::Config base;
    base.locality = true;
    EXPECT_FALSE(versa::Config::from_environment(base).locality);
  }
  const versa::testing_support::ScopedEnvironment env("VERSA_LOCALITY", "2");
  EXPECT_THROW(versa::Config::from_environment({}), std::invalid_argument);
}

// Blocks of different sizes, each updated from its neighbours many times: every task's largest
// input has a last writer, and the tasks submitted by the main program and those woken by a
// finishing task are both placed by it.
TEST(Locality, StencilOverBlocksOfDifferentSizesEqualsTheSequentialRun) {
  constexpr int blocks = 12;
  constexpr int steps = 40;
  auto run = [&](bool parallel, bool caller) {
    std::vector<std::vector<std::uint64_t>> data;
    for (int b = 0; b < blocks; ++b)
      data.emplace_back(static_cast<std::size_t>(16 + 8 * b), static_cast<std::uint64_t>(b));
    auto update = [](std::vector<std::uint64_t>& own, const std::vector<std::uint64_t>& left,
                     int step) {
      for (std::size_t i = 0; i < own.size(); ++i)
        own[i] = own[i] * 3 + left[i % left.size()] + step;
    };
    if (!parallel) {
      for (int s = 0; s < steps; ++s)
        for (int b = 0; b < blocks; ++b) update(data[b], data[(b + blocks - 1) % blocks], s);
      return data;
    }
    versa::Config config = versa::testing::workers(4);
    config.locality = true;
    config.caller_runs_tasks = caller;
    versa::Runtime rt{config};
    std::vector<versa::Handle<std::uint64_t>> handles;
    for (auto& block : data) handles.push_back(rt.data(block));
    for (int s = 0; s < steps; ++s)
      for (int b = 0; b < blocks; ++b)
        rt.submit(
            "update",
            [s, update](versa::Span<std::uint64_t> own, versa::Span<const std::uint64_t> left) {
              std::vector<std::uint64_t> own_copy(own.begin(), own.end());
              update(own_copy, std::vector<std::uint64_t>(left.begin(), left.end()), s);
              std::copy(own_copy.begin(), own_copy.end(), own.begin());
            },
            versa::write(handles[b]), versa::read(handles[(b + blocks - 1) % blocks]));
    rt.wait_all();
    handles.clear();
    return data;
  };
  const auto expected = run(false, false);
  EXPECT_EQ(run(true, false), expected);
  EXPECT_EQ(run(true, true), expected);
}

}  // namespace
