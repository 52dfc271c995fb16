// Reductions across ranks (docs/distributed.md, "Reductions across ranks"): adds accumulate on
// the ranks that run them and meet at the owner when another access ends their run, with one
// message per other rank that took part; the value equals the sequential sum; a failed add
// spoils the sum on every rank's wait_all.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi/rank_config.hpp"
#include "versa/mpi.hpp"
#include "versa/versa.hpp"

namespace {

using versa::testing::rank_config;

// Every rank adds to a handle owned by rank 0 whose value is there: each other rank sends its
// contribution once, whatever the number of its adds, and the owner holds the sum.
TEST(DistributedReduction, EveryRankAddsAndTheOwnerHoldsTheSum) {
  versa::mpi::Runtime rt(rank_config());
  const int ranks = rt.size();
  std::vector<std::int64_t> total(5, 0);
  if (rt.rank() == 0)
    for (std::size_t i = 0; i < total.size(); ++i) total[i] = static_cast<std::int64_t>(100 * i);
  auto h = rt.data(total, 0, "total");
  h.set_reduction(versa::sum<std::int64_t>());
  for (int pass = 0; pass < 3; ++pass)
    for (int r = 0; r < ranks; ++r)
      rt.submit(
          "add",
          [r, pass](versa::Span<std::int64_t> v) {
            for (std::size_t i = 0; i < v.size(); ++i) v[i] += (r + 1) * 10 + pass + 1000 * i;
          },
          versa::add(h), versa::mpi::on_rank(r));
  rt.fetch(h, 0);
  rt.wait_all();
  if (rt.rank() == 0)
    for (std::size_t i = 0; i < total.size(); ++i) {
      std::int64_t expected = static_cast<std::int64_t>(100 * i);
      for (int pass = 0; pass < 3; ++pass)
        for (int r = 0; r < ranks; ++r) expected += (r + 1) * 10 + pass + 1000 * i;
      EXPECT_EQ(total[i], expected) << "element " << i;
    }
  const versa::mpi::Statistics s = rt.statistics();
  const auto others = static_cast<std::uint64_t>(ranks - 1);
  EXPECT_EQ(s.messages_sent, rt.rank() == 0 ? 0u : 1u);
  EXPECT_EQ(s.messages_received, rt.rank() == 0 ? others : 0u);
  EXPECT_EQ(s.bytes_sent, rt.rank() == 0 ? 0u : total.size() * sizeof(std::int64_t));
  EXPECT_EQ(rt.holder(h), 0);
}

// A handle destroyed while its run of adds is open (no wait_all between): the run ends first, so
// the owner's memory holds the sum, as after a wait_all. Destroying a handle whose accesses are
// pending is a misuse, which the next wait_all may report (the ranks whose transfers were still
// pending do); the runtime waits for them, and no record of the handle is used after it is gone.
TEST(DistributedReduction, AHandleDestroyedInARunOfAddsLeavesTheSumAtItsOwner) {
  versa::mpi::Runtime rt(rank_config());
  const int ranks = rt.size();
  std::vector<std::int64_t> total(3, rt.rank() == 0 ? 7 : 0);
  {
    auto h = rt.data(total, 0, "total");
    h.set_reduction(versa::sum<std::int64_t>());
    for (int r = 0; r < ranks; ++r)
      rt.submit(
          "add",
          [r](versa::Span<std::int64_t> v) {
            for (std::int64_t& e : v) e += r + 1;
          },
          versa::add(h), versa::mpi::on_rank(r));
  }
  try {
    rt.wait_all();
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("'total' was destroyed while"), std::string::npos)
        << e.what();
  }
  if (rt.rank() == 0) {
    for (std::int64_t e : total) EXPECT_EQ(e, 7 + ranks * (ranks + 1) / 2);
  }
  // The runtime goes on: a later handle and its run of adds.
  std::vector<std::int64_t> next(1, 0);
  auto h = rt.data(next, 0, "next");
  h.set_reduction(versa::sum<std::int64_t>());
  for (int r = 0; r < ranks; ++r)
    rt.submit(
        "add", [](versa::Span<std::int64_t> v) { v[0] += 1; }, versa::add(h),
        versa::mpi::on_rank(r));
  rt.wait_all();
  if (rt.rank() == 0) {
    EXPECT_EQ(next[0], ranks);
  }
}

// The value before the run is on the last rank (it wrote it; the owner's copy is stale): that
// rank carries it, the owner starts from the identity, and a reader on rank 1 after the run
// gets the combined version from the owner. Tiles with a leading dimension combine column by
// column (the padding stays untouched).
TEST(DistributedReduction, ARunStartsWhereTheValueIsAndEndsAtTheOwner) {
  versa::mpi::Runtime rt(rank_config());
  const int ranks = rt.size();
  const int last = ranks - 1;
  constexpr std::size_t rows = 3, cols = 2, ld = 4;
  std::vector<double> tile(ld * cols, -7.0);
  auto ht = rt.tile(tile.data(), rows, cols, ld, 0, "tile");
  ht.set_reduction(versa::sum<double>());
  double seen = 0;
  auto hseen = rt.data(seen, ranks > 1 ? 1 : 0, "seen");
  rt.submit(
      "set",
      [](versa::Tile<double> t) {
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) t(i, j) = static_cast<double>(i + 10 * j);
      },
      versa::write_only(ht), versa::mpi::on_rank(last));
  for (int r = 0; r < ranks; ++r)
    rt.submit(
        "add",
        [r](versa::Tile<double> t) {
          for (std::size_t j = 0; j < t.cols(); ++j)
            for (std::size_t i = 0; i < t.rows(); ++i) t(i, j) += 0.5 * (r + 1);
        },
        versa::add(ht), versa::mpi::on_rank(r));
  rt.submit(
      "look",
      [](versa::Tile<const double> t, versa::Span<double> s) {
        for (std::size_t j = 0; j < t.cols(); ++j)
          for (std::size_t i = 0; i < t.rows(); ++i) s[0] += t(i, j);
      },
      versa::read(ht), versa::write(hseen));
  rt.fetch(ht, 0);
  rt.wait_all();
  double added = 0;
  for (int r = 0; r < ranks; ++r) added += 0.5 * (r + 1);
  if (rt.rank() == 0)
    for (std::size_t j = 0; j < cols; ++j) {
      for (std::size_t i = 0; i < rows; ++i)
        EXPECT_EQ(tile[j * ld + i], static_cast<double>(i + 10 * j) + added);
      for (std::size_t i = rows; i < ld && j + 1 < cols; ++i) EXPECT_EQ(tile[j * ld + i], -7.0);
    }
  if (rt.rank() == (ranks > 1 ? 1 : 0)) {
    EXPECT_EQ(seen, (0 + 1 + 2 + 10 + 11 + 12) + static_cast<double>(rows * cols) * added);
  }
  // Messages: the tile to nobody for "set" (write_only); at the run's end every rank but the
  // owner sends it once (the last rank carries the value, the others their adds); then the
  // owner sends the new version to rank 1 for "look".
  const versa::mpi::Statistics s = rt.statistics();
  const auto others = static_cast<std::uint64_t>(ranks - 1);
  if (rt.rank() == 0) {
    EXPECT_EQ(s.messages_received, others);
    EXPECT_EQ(s.messages_sent, ranks > 1 ? 1u : 0u);
  } else {
    EXPECT_EQ(s.messages_sent, 1u);
    EXPECT_EQ(s.messages_received, rt.rank() == 1 ? 1u : 0u);
  }
}

// An add that throws on the last rank spoils the sum: wait_all throws on every rank, and an
// overwrite makes the handle usable again.
TEST(DistributedReduction, AFailedAddSpoilsTheSumEverywhere) {
  versa::mpi::Runtime rt(rank_config());
  const int ranks = rt.size();
  std::int64_t x = 1;
  auto h = rt.data(x, 0, "x");
  h.set_reduction(versa::sum<std::int64_t>());
  for (int r = 0; r < ranks; ++r)
    rt.submit(
        "add",
        [r, ranks](versa::Span<std::int64_t> v) {
          if (r == ranks - 1) throw std::runtime_error("bad add");
          v[0] += 1;
        },
        versa::add(h), versa::mpi::on_rank(r));
  rt.fetch(h, 0);
  bool threw = false;
  try {
    rt.wait_all();
  } catch (const versa::mpi::RemoteFailure&) {
    threw = true;
  } catch (const versa::TaskFailure& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("bad add"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(threw);
  rt.submit(
      "reset", [](versa::Span<std::int64_t> v) { v[0] = 5; }, versa::write_only(h));
  for (int r = 0; r < ranks; ++r)
    rt.submit(
        "add", [](versa::Span<std::int64_t> v) { v[0] += 2; }, versa::add(h),
        versa::mpi::on_rank(r));
  rt.fetch(h, 0);
  EXPECT_NO_THROW(rt.wait_all());
  if (rt.rank() == 0) {
    EXPECT_EQ(x, 5 + 2 * ranks);
  }
}

}  // namespace
