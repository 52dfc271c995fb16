// flush(handle) (docs/distributed.md, "Flushing cached copies"): the copies of the latest
// version on the ranks other than its holder are dropped, so a later read there receives it
// again, and memory the runtime allocated for them goes back to the system (checked with
// mincore: its pages are no longer resident).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mpi/rank_config.hpp"
#include "versa/mpi.hpp"
#include "versa/versa.hpp"

namespace {

using versa::testing::rank_config;

// Resident pages of `bytes` at the page-aligned `data`.
std::size_t resident_pages(const void* data, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((bytes + page - 1) / page);
  if (mincore(const_cast<void*>(data), bytes, pages.data()) != 0) return SIZE_MAX;
  std::size_t resident = 0;
  for (unsigned char p : pages) resident += p & 1;
  return resident;
}

// Every rank sums a vector owned by rank 0 into its own result.
void sum_everywhere(versa::mpi::Runtime& rt, const versa::Handle<double>& v,
                    std::vector<versa::Handle<double>>& sums) {
  for (int r = 0; r < rt.size(); ++r)
    rt.submit(
        "sum",
        [](versa::Span<const double> x, versa::Span<double> s) {
          for (double e : x) s[0] += e;
        },
        versa::read(v), versa::write(sums[r]));
}

TEST(DistributedFlush, DropsCachedCopiesAndGivesTheirMemoryBack) {
  versa::mpi::Runtime rt(rank_config());
  const int ranks = rt.size();
  constexpr std::size_t n = 1 << 14;  // 128 KiB
  std::vector<double> owned(rt.rank() == 0 ? n : 0, 1.0);
  auto v = rt.data(rt.rank() == 0 ? owned.data() : static_cast<double*>(nullptr), n, 0, "v");
  std::vector<std::vector<double>> results(static_cast<std::size_t>(ranks),
                                           std::vector<double>(1, 0.0));
  std::vector<versa::Handle<double>> sums;
  for (int r = 0; r < ranks; ++r) sums.push_back(rt.data(results[r], r, "sum"));
  sum_everywhere(rt, v, sums);
  rt.wait_all();
  const void* copy = rt.local().acquire(versa::read(v)).view().data();
  if (rt.rank() != 0) {
    EXPECT_GT(resident_pages(copy, n * sizeof(double)), 0u);
  }
  rt.flush(v);
  rt.wait_all();
  if (rt.rank() != 0) {
    EXPECT_EQ(resident_pages(copy, n * sizeof(double)), 0u);
  }
  // Read again: every other rank receives the version a second time.
  sum_everywhere(rt, v, sums);
  rt.wait_all();
  EXPECT_EQ(results[static_cast<std::size_t>(rt.rank())][0], 2.0 * n);
  const versa::mpi::Statistics s = rt.statistics();
  EXPECT_EQ(s.messages_sent, rt.rank() == 0 ? 2u * static_cast<std::uint64_t>(ranks - 1) : 0u);
  EXPECT_EQ(s.messages_received, rt.rank() == 0 ? 0u : 2u);
  sums.clear();
}

// One handle of a double per rank, owned by it: at `here` on its rank, without memory elsewhere.
std::vector<versa::Handle<double>> one_per_rank(versa::mpi::Runtime& rt, double* here) {
  std::vector<versa::Handle<double>> handles;
  for (int r = 0; r < rt.size(); ++r)
    handles.push_back(rt.data(r == rt.rank() ? here : static_cast<double*>(nullptr), 1, r, "sum"));
  return handles;
}

// Every rank sums `v` into its own result, as sum_everywhere, but each sum holds its input
// until `go` is set, after saying where it is (`holding`): a flush submitted meanwhile finds it
// pending with the data already there, and the sum reads 20 ms after, when a drop run at once
// would have dropped it.
void held_sum_everywhere(versa::mpi::Runtime& rt, const versa::Handle<double>& v,
                         std::vector<versa::Handle<double>>& sums,
                         std::atomic<const void*>& holding, std::atomic<bool>& go) {
  for (int r = 0; r < rt.size(); ++r)
    rt.submit(
        "held sum",
        [&holding, &go](versa::Span<const double> x, versa::Span<double> s) {
          holding = x.data();
          while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          for (double e : x) s[0] += e;
        },
        versa::read(v), versa::write(sums[r]));
}

// Flushes `v` once this rank's held sum holds its input, then lets the sum go on.
void flush_under_the_held_sum(versa::mpi::Runtime& rt, const versa::Handle<double>& v,
                              std::atomic<const void*>& holding, std::atomic<bool>& go) {
  while (holding == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  rt.flush(v);
  go = true;
}

// A flush while a task still reads the copy: the copy is dropped after it, never under it (the
// runtime may not run the drop at once on a buffer of its own, as it may a write_only task that
// finds readers pending), and the memory still goes back to the system.
TEST(DistributedFlush, WaitsForTheReadersOfTheCopy) {
  versa::Config config = rank_config();
  config.cpu_workers = 2;  // one for the reader, one free for the drop
  versa::mpi::Runtime rt(config);
  constexpr std::size_t n = 1 << 14;  // 128 KiB
  std::vector<double> owned(rt.rank() == 0 ? n : 0, 1.0);
  auto v = rt.data(rt.rank() == 0 ? owned.data() : static_cast<double*>(nullptr), n, 0, "v");
  double result = 0;
  std::vector<versa::Handle<double>> sums = one_per_rank(rt, &result);
  std::atomic<const void*> holding{nullptr};
  std::atomic<bool> go{false};
  held_sum_everywhere(rt, v, sums, holding, go);
  flush_under_the_held_sum(rt, v, holding, go);
  rt.wait_all();
  EXPECT_EQ(result, static_cast<double>(n));
  if (rt.rank() != 0) {
    EXPECT_EQ(resident_pages(holding, n * sizeof(double)), 0u);
  }
  sums.clear();
}

// A flush after a receive that the local runtime renamed (it found the version before still
// read): the readers of both versions read their own values, the drop waiting for them all.
TEST(DistributedFlush, KeepsACopyReadUnderARenamedReceive) {
  versa::Config config = rank_config();
  config.cpu_workers = 2;
  versa::mpi::Runtime rt(config);
  constexpr std::size_t n = 1 << 14;
  std::vector<double> owned(rt.rank() == 0 ? n : 0, 1.0);
  auto v = rt.data(rt.rank() == 0 ? owned.data() : static_cast<double*>(nullptr), n, 0, "v");
  double first = 0, second = 0;  // the sums of the first version and of the second
  std::vector<versa::Handle<double>> first_sums = one_per_rank(rt, &first);
  std::vector<versa::Handle<double>> second_sums = one_per_rank(rt, &second);
  std::atomic<const void*> holding{nullptr};
  std::atomic<bool> go{false};
  held_sum_everywhere(rt, v, first_sums, holding, go);
  rt.submit(
      "double",
      [](versa::Span<double> x) {
        for (double& e : x) e *= 2.0;
      },
      versa::write(v));
  sum_everywhere(rt, v, second_sums);
  flush_under_the_held_sum(rt, v, holding, go);
  rt.wait_all();
  EXPECT_EQ(first, static_cast<double>(n));
  EXPECT_EQ(second, 2.0 * n);
  if (rt.rank() != 0) {
    EXPECT_EQ(rt.local().renamed_accesses(), 1u);  // the second version's receive
  }
  first_sums.clear();
  second_sums.clear();
}

// A flush of a version that a failure spoilt: wait_all reports the failure alone (the drop, a
// write after the spoilt copy, is cancelled without a word), and the next version arrives and
// is read on every rank.
TEST(DistributedFlush, OfASpoiltCopyReportsTheFailureAloneAndTheNextVersionArrives) {
  versa::Config config = rank_config();
  std::vector<std::string> diagnostics;
  std::mutex diagnostics_mutex;
  config.diagnostics = [&](const std::string& message) {
    std::lock_guard lock(diagnostics_mutex);
    diagnostics.push_back(message);
  };
  versa::mpi::Runtime rt(config);
  std::int64_t owned = 1;
  auto v = rt.data(rt.rank() == 0 ? &owned : static_cast<std::int64_t*>(nullptr), 1, 0, "v");
  std::vector<std::int64_t> result(1, 0);
  std::vector<versa::Handle<std::int64_t>> seen;
  for (int r = 0; r < rt.size(); ++r)
    seen.push_back(rt.data(r == rt.rank() ? result.data() : static_cast<std::int64_t*>(nullptr), 1,
                           r, "seen"));
  const auto look_everywhere = [&] {
    for (int r = 0; r < rt.size(); ++r)
      rt.submit(
          "look",
          [](versa::Span<const std::int64_t> x, versa::Span<std::int64_t> y) { y[0] = x[0]; },
          versa::read(v), versa::write_only(seen[r]));
  };
  rt.submit(
      "boom", [](versa::Span<std::int64_t>) { throw std::runtime_error("boom"); }, versa::write(v));
  look_everywhere();
  rt.flush(v);
  try {
    rt.wait_all();
    ADD_FAILURE() << "wait_all did not report the failure";
  } catch (const std::exception& e) {
    if (rt.rank() == 0) {
      EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
    }
  }
  rt.submit(
      "set", [](versa::Span<std::int64_t> x) { x[0] = 7; }, versa::write_only(v));
  look_everywhere();
  rt.flush(v);
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(result[0], 7);
  seen.clear();
  std::lock_guard lock(diagnostics_mutex);
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.front();
}

// Rank r adds r + 1 to `total`: a run of adds on every rank.
void add_on_every_rank(versa::mpi::Runtime& rt, const versa::Handle<std::int64_t>& total) {
  for (int r = 0; r < rt.size(); ++r)
    rt.submit(
        "add", [r](versa::Span<std::int64_t> t) { t[0] += r + 1; }, versa::add(total),
        versa::mpi::on_rank(r));
}

// Rank `rank` sets `value` to 42, becoming the holder of its latest version.
void set_42_on_rank(versa::mpi::Runtime& rt, const versa::Handle<std::int64_t>& value, int rank) {
  rt.submit(
      "set", [](versa::Span<std::int64_t> x) { x[0] = 42; }, versa::write_only(value),
      versa::mpi::on_rank(rank));
}

// A flush ends a run of adds (the contributions meet at the owner), and keeps the holder's copy
// when the holder is not the owner: the owner then receives the latest version to read it.
TEST(DistributedFlush, EndsARunOfAddsAndKeepsTheHoldersCopy) {
  versa::mpi::Runtime rt(rank_config());
  const int ranks = rt.size();
  const int last = ranks - 1;
  std::int64_t total = 0, value = 0, seen = 0;
  auto ht = rt.data(total, 0, "total");
  ht.set_reduction(versa::sum<std::int64_t>());
  auto hv = rt.data(value, 0, "value");
  auto hseen = rt.data(seen, 0, "seen");
  add_on_every_rank(rt, ht);
  rt.flush(ht);
  EXPECT_EQ(rt.holder(ht), 0);
  set_42_on_rank(rt, hv, last);
  rt.flush(hv);
  EXPECT_EQ(rt.holder(hv), last);
  rt.submit(
      "look", [](versa::Span<const std::int64_t> x, versa::Span<std::int64_t> y) { y[0] = x[0]; },
      versa::read(hv), versa::write(hseen));
  rt.wait_all();
  if (rt.rank() == 0) {
    EXPECT_EQ(total, ranks * (ranks + 1) / 2);
    EXPECT_EQ(seen, 42);
  }
  // The adds' contributions (every rank but the owner), and "value" from the last rank.
  const versa::mpi::Statistics s = rt.statistics();
  const auto others = static_cast<std::uint64_t>(ranks - 1);
  if (rt.rank() == 0) {
    EXPECT_EQ(s.messages_received, others + (ranks > 1 ? 1u : 0u));
  } else {
    EXPECT_EQ(s.messages_sent, rt.rank() == last ? 2u : 1u);
  }
}

TEST(DistributedFlush, RefusesAForeignHandle) {
  versa::mpi::Runtime rt(rank_config());
  int y = 0;
  auto foreign = rt.local().data(y, "foreign");
  EXPECT_THROW(rt.flush(foreign), std::invalid_argument);
  EXPECT_NO_THROW(rt.wait_all());
}

// copy_home(handle) runs on the holder of the latest version alone, as a CPU task of its local
// runtime ("copy home"), after ending a run of adds; every value is right; a foreign handle is
// refused.
TEST(DistributedCopyHome, RunsOnTheHolderAlone) {
  versa::Config config = rank_config();
  config.task_statistics = true;
  versa::mpi::Runtime rt(config);
  const int ranks = rt.size();
  const int last = ranks - 1;
  std::int64_t total = 0, value = 0;
  auto ht = rt.data(total, 0, "total");
  ht.set_reduction(versa::sum<std::int64_t>());
  auto hv = rt.data(value, 0, "value");
  add_on_every_rank(rt, ht);
  rt.copy_home(ht);
  EXPECT_EQ(rt.holder(ht), 0);
  set_42_on_rank(rt, hv, last);
  rt.copy_home(hv);
  EXPECT_EQ(rt.holder(hv), last);
  rt.wait_all();
  std::uint64_t copies_home = 0;
  for (const versa::TaskStatistics& t : rt.local().task_statistics())
    if (t.task_type == "copy home") copies_home += t.tasks;
  EXPECT_EQ(copies_home, (rt.rank() == 0 ? 1u : 0u) + (rt.rank() == last ? 1u : 0u));
  if (rt.rank() == 0) {
    EXPECT_EQ(total, ranks * (ranks + 1) / 2);
  }
  if (rt.rank() == last) {
    EXPECT_EQ(value, 42);
  }
  int y = 0;
  auto foreign = rt.local().data(y, "foreign");
  EXPECT_THROW(rt.copy_home(foreign), std::invalid_argument);
  EXPECT_NO_THROW(rt.wait_all());
}

}  // namespace
