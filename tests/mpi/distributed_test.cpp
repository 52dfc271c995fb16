// The distributed layer (versa::mpi) on however many ranks mpirun started (1 to 4 in ctest):
// the messages are exactly those the owner-computes rule and the cache predict in cases worked
// by hand, data and order travel, failures reach every rank's wait_all without a hang,
// divergent streams are reported, and refused tasks are refused on every rank. The randomized
// comparison with the sequential run is distributed_fuzz_test.cpp.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_annotations.hpp"  // VERSA_TSAN
#include "mpi/rank_config.hpp"
#include "result_line.hpp"
#include "support/scoped_environment.hpp"
#include "support/temporary_path.hpp"
#include "versa/mpi.hpp"
#include "versa/versa.hpp"

namespace {

versa::Config local_config() { return versa::testing::rank_config(); }

// One writer, every rank reads: one message per reading rank and version (the cache), none for
// a second read of the same version, and again after the writer writes a new version.
TEST(Distributed, BroadcastIsSentOncePerVersionAndRank) {
  versa::mpi::Runtime rt(local_config());
  const int ranks = rt.size();
  std::vector<double> source(1000, 0.0);
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(ranks), std::vector<double>(1));
  auto hs = rt.data(source, 0, "source");
  std::vector<versa::Handle<double>> outs;
  for (int r = 0; r < ranks; ++r) outs.push_back(rt.data(sums[r], r, "sum"));
  for (int version = 1; version <= 2; ++version) {
    rt.submit(
        "fill",
        [version](versa::Span<double> v) {
          for (double& x : v) x = version;
        },
        versa::write_only(hs));
    for (int pass = 0; pass < 2; ++pass)
      for (int r = 0; r < ranks; ++r)
        rt.submit(
            "sum",
            [](versa::Span<const double> v, versa::Span<double> s) {
              for (double x : v) s[0] += x;
            },
            versa::read(hs), versa::write(outs[r]));
  }
  rt.wait_all();
  // Each rank read version 1 twice and version 2 twice: 2 * 1000 + 2 * 2000.
  EXPECT_EQ(sums[rt.rank()][0], 6000.0);
  const versa::mpi::Statistics s = rt.statistics();
  const std::uint64_t peers = static_cast<std::uint64_t>(ranks - 1);
  EXPECT_EQ(s.messages_sent, rt.rank() == 0 ? 2 * peers : 0);
  EXPECT_EQ(s.bytes_sent, rt.rank() == 0 ? 2 * peers * 1000 * sizeof(double) : 0);
  EXPECT_EQ(s.messages_received, rt.rank() == 0 ? 0u : 2u);
  EXPECT_EQ(rt.holder(hs), 0);
  outs.clear();
}

// A pipeline through every rank over a tile with a leading dimension (packed on the wire), and
// a token ordering tasks across ranks: data and order arrive.
TEST(Distributed, TilesAndTokensTravelAroundTheRanks) {
  versa::mpi::Runtime rt(local_config());
  const int ranks = rt.size();
  constexpr std::size_t rows = 3, cols = 4, ld = 5;
  std::vector<int> tile(ld * cols, -1);
  auto ht = rt.tile(tile.data(), rows, cols, ld, 0, "tile");
  auto token = rt.token(0, "order");
  std::vector<int> log(8, 0);
  auto hlog = rt.data(log, 0, "log");
  for (int round = 0; round < 3; ++round)
    for (int r = 0; r < ranks; ++r) {
      rt.submit(
          "touch",
          [r](versa::Tile<int> t) {
            for (std::size_t j = 0; j < t.cols(); ++j)
              for (std::size_t i = 0; i < t.rows(); ++i) t(i, j) = t(i, j) * 3 + r + 1;
          },
          versa::write(ht), versa::mpi::on_rank(r));
      rt.submit(
          "order", [] {}, versa::write(token), versa::mpi::on_rank(r));
    }
  rt.submit(
      "count", [](versa::Span<int> l) { ++l[0]; }, versa::write(hlog), versa::read(token));
  rt.fetch(ht, 0);
  rt.wait_all();
  if (rt.rank() == 0) {
    int expected = -1;  // the tile's memory on the owner
    for (int round = 0; round < 3; ++round)
      for (int r = 0; r < ranks; ++r) expected = expected * 3 + r + 1;
    for (std::size_t j = 0; j < cols; ++j) {
      for (std::size_t i = 0; i < rows; ++i) EXPECT_EQ(tile[j * ld + i], expected);
      for (std::size_t i = rows; i < ld && j + 1 < cols; ++i) EXPECT_EQ(tile[j * ld + i], -1);
    }
    EXPECT_EQ(log[0], 1);
  }
}

// Messages in either order with their receive task: a version that arrives while the receive
// still waits for a slow local reader of the older copy (staged, copied later), and a receive
// that waits before the version exists (received in place). Ranks 0 and 1 take part.
TEST(Distributed, MessagesArriveBeforeOrAfterTheirReceive) {
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  std::vector<long> data(64, 0), seen(2, 0);
  auto h = rt.data(data, 0, "h");
  auto out = rt.data(seen, 1, "seen");
  auto sum = [](versa::Span<const long> v) {
    long s = 0;
    for (long x : v) s += x;
    return s;
  };
  auto fill = [](long value) {
    return [value](versa::Span<long> v) {
      for (long& x : v) x = value;
    };
  };
  rt.submit("fill 1", fill(1), versa::write_only(h));
  // Rank 1 reads version 1 slowly; version 2 is sent meanwhile and waits for its receive.
  rt.submit(
      "slow read",
      [&](versa::Span<const long> v, versa::Span<long> s) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        s[0] = sum(v);
      },
      versa::read(h), versa::write(out));
  rt.submit("fill 2", fill(2), versa::write_only(h));
  rt.submit(
      "read 2", [&](versa::Span<const long> v, versa::Span<long> s) { s[1] = sum(v); },
      versa::read(h), versa::write(out));
  // Rank 1 waits for version 3, which rank 0 produces slowly.
  rt.submit(
      "slow fill 3",
      [](versa::Span<long> v) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        for (long& x : v) x = 3;
      },
      versa::write_only(h));
  rt.submit(
      "read 3", [&](versa::Span<const long> v, versa::Span<long> s) { s[1] += 10 * sum(v); },
      versa::read(h), versa::write(out));
  rt.wait_all();
  if (rt.rank() == 1) {
    EXPECT_EQ(seen[0], 64);
    EXPECT_EQ(seen[1], 128 + 10 * 192);
    EXPECT_EQ(rt.statistics().messages_received, 3u);
  }
}

// A task that throws on one rank makes wait_all throw on every rank: the failure itself where
// it happened and where its spoilt output went, RemoteFailure elsewhere. Afterwards the runtime
// goes on.
TEST(Distributed, FailureOnOneRankReachesEveryRank) {
  versa::mpi::Runtime rt(local_config());
  const int ranks = rt.size();
  const int last = ranks - 1;
  int a = 1, b = 2;
  auto ha = rt.data(a, 0, "a");
  auto hb = rt.data(b, last, "b");
  rt.submit(
      "boom", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(ha));
  rt.submit(
      "use", [](versa::Span<const int> x, versa::Span<int> y) { y[0] += x[0]; }, versa::read(ha),
      versa::write(hb));
  std::string message;
  int failed_rank = -2;
  try {
    rt.wait_all();
  } catch (const versa::mpi::RemoteFailure& e) {
    message = e.what();
    failed_rank = e.rank();
  } catch (const versa::TaskFailure& e) {
    message = e.what();
    failed_rank = -1;
  }
  if (rt.rank() == 0 || rt.rank() == last) {
    EXPECT_EQ(failed_rank, -1) << message;
    EXPECT_NE(message.find("boom"), std::string::npos) << message;
  } else {
    EXPECT_EQ(failed_rank, 0) << message;
  }
  if (rt.rank() == last) {
    EXPECT_EQ(b, 2);  // "use" was cancelled
  }
  // Overwriting makes the data valid again; the next phase succeeds everywhere.
  rt.submit(
      "reset", [](versa::Span<int> x) { x[0] = 10; }, versa::write_only(ha));
  // b stays spoilt until overwritten: "use" failed to produce it.
  rt.submit(
      "use", [](versa::Span<const int> x, versa::Span<int> y) { y[0] = x[0] + 2; }, versa::read(ha),
      versa::write_only(hb));
  EXPECT_NO_THROW(rt.wait_all());
  if (rt.rank() == last) {
    EXPECT_EQ(b, 12);
  }
}

// A rank killed mid-run, while another waits for a version it was to send. Run only by ctest's
// mpi.killed_rank (which sets VERSA_MPI_KILL_RANK): under Open MPI's mpirun the job ends when a
// rank dies; with the launcher told to let the others run (mpi.killed_rank_watched), the watch
// of the next rank in the ring must end it, naming the dead rank.
TEST(Distributed, KilledRankEndsTheJob) {
  if (!std::getenv("VERSA_MPI_KILL_RANK")) GTEST_SKIP() << "run by ctest's mpi.killed_rank";
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 0;
  auto h = rt.data(x, rt.size() - 1, "x");
  rt.submit(
      "die", [](versa::Span<int>) { std::raise(SIGKILL); }, versa::write(h));
  rt.submit(
      "wait", [](versa::Span<const int>) {}, versa::read(h), versa::mpi::on_rank(0));
  rt.wait_all();
  ADD_FAILURE() << "wait_all returned although a rank was killed";
}

// The watch that ends the job when a rank goes silent mistakes neither a rank busy in a long
// task (its progress thread speaks for it) nor a rank that ends its runtime late (the others
// wait for it in their destructors, hearing it) for a dead one: a false alarm would abort this
// whole run.
TEST(Distributed, TheWatchTakesNeitherALongTaskNorALateRankForADeath) {
  versa::Config config = local_config();
  config.peer_timeout_seconds = 0.5;
  auto rt = std::make_unique<versa::mpi::Runtime>(config);
  const int rank = rt->rank();
  if (rt->size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 0;
  auto h = rt->data(x, 0, "x");
  rt->submit(
      "long",
      [](versa::Span<int> v) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        v[0] = 7;
      },
      versa::write(h));
  int seen = 0;
  rt->submit(
      "read", [&seen](versa::Span<const int> v) { seen = v[0]; }, versa::read(h),
      versa::mpi::on_rank(rt->size() - 1));
  rt->wait_all();
  if (rank == rt->size() - 1) {
    EXPECT_EQ(seen, 7);
  }
  if (rank != 0) rt.reset();  // rank 0, watched by rank 1, lives on alone for a while
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
}

// A rank whose runtime ends without wait_all (as when its program throws) takes part in the
// others' wait_all from its destructor: they get DivergenceError instead of waiting for ever
// for its messages, and it reports the same through the diagnostics.
TEST(Distributed, ARankThatEndsItsRuntimeEarlyFailsTheOthersWaitAll) {
  std::string said;
  versa::Config config = local_config();
  config.diagnostics = [&said](const std::string& message) { said += message; };
  int rank = 0;
  {
    versa::mpi::Runtime rt(config);
    if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
    rank = rt.rank();
    int x = 0;
    auto h = rt.data(x, 0, "x");
    rt.submit(
        "write", [](versa::Span<int> v) { v[0] = 1; }, versa::write(h));
    if (rank != 0) {
      rt.submit(
          "read", [](versa::Span<const int>) {}, versa::read(h), versa::mpi::on_rank(rank));
      EXPECT_THROW(rt.wait_all(), versa::mpi::DivergenceError);
    }
  }  // rank 0's runtime ends here, without wait_all
  if (rank == 0) {
    EXPECT_NE(said.find("rank 0, ending its runtime"), std::string::npos) << said;
    EXPECT_NE(said.find("different streams"), std::string::npos) << said;
  }
}

// The watch's time (Config or VERSA_PEER_TIMEOUT) and the largest message
// (VERSA_MPI_MESSAGE_BYTES): a bad value is refused before anything is started, naming it.
TEST(Distributed, BadSettingsAreRefusedNamingThem) {
  versa::Config config = local_config();
  config.peer_timeout_seconds = -1;
  try {
    versa::mpi::Runtime rt(config);
    ADD_FAILURE() << "a negative peer timeout was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("peer_timeout_seconds"), std::string::npos) << e.what();
  }
  {
    versa::testing_support::ScopedEnvironment variable("VERSA_PEER_TIMEOUT", "never");
    try {
      versa::mpi::Runtime rt(local_config());
      ADD_FAILURE() << "VERSA_PEER_TIMEOUT=never was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("VERSA_PEER_TIMEOUT"), std::string::npos) << e.what();
    }
  }
  for (const char* bad : {"0", "-5", "3000000000", "big"}) {
    versa::testing_support::ScopedEnvironment size("VERSA_MPI_MESSAGE_BYTES", bad);
    try {
      versa::mpi::Runtime rt(local_config());
      ADD_FAILURE() << "VERSA_MPI_MESSAGE_BYTES=" << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("VERSA_MPI_MESSAGE_BYTES"), std::string::npos)
          << e.what();
    }
  }
}

// Handles made and destroyed round after round, each with another owner: a handle made where a
// destroyed one was (the allocator gives the address again) is a handle of its own, with its own
// owner and versions, not the old one's record. Memory the runtime allocated for a destroyed
// handle's copies goes back to the system at the next wait_all.
TEST(Distributed, AHandleMadeWhereADestroyedOneWasIsANewHandle) {
  versa::mpi::Runtime rt(local_config());
  const int ranks = rt.size();
  std::vector<const void*> addresses;
  bool reused = false;
  for (int round = 0; round < 8; ++round) {
    const int owner = round % ranks;
    std::vector<double> values(rt.rank() == owner ? 512 : 0, 1.0);
    const void* copy = nullptr;
    {
      auto h = rt.data(rt.rank() == owner ? values.data() : static_cast<double*>(nullptr), 512,
                       owner, "v");
      const void* address = versa::detail::state_of(h);
      reused = reused || std::find(addresses.begin(), addresses.end(), address) != addresses.end();
      addresses.push_back(address);
      EXPECT_EQ(rt.owner(h), owner) << "round " << round;
      // On its owner, then read on every rank: each other rank receives it into the runtime's
      // memory.
      rt.submit(
          "set", [round](versa::Span<double> v) { v[0] = round + 1; }, versa::write(h));
      std::vector<std::vector<double>> seen(static_cast<std::size_t>(ranks),
                                            std::vector<double>(1, 0.0));
      std::vector<versa::Handle<double>> outs;
      for (int r = 0; r < ranks; ++r) outs.push_back(rt.data(seen[r], r, "seen"));
      for (int r = 0; r < ranks; ++r)
        rt.submit(
            "read", [](versa::Span<const double> v, versa::Span<double> out) { out[0] = v[0]; },
            versa::read(h), versa::write(outs[r]));
      rt.wait_all();
      EXPECT_EQ(seen[static_cast<std::size_t>(rt.rank())][0], round + 1) << "round " << round;
      EXPECT_EQ(rt.holder(h), owner);
      if (rt.rank() != owner) copy = rt.local().acquire(versa::read(h)).view().data();
    }
    rt.wait_all();
    if (copy) {
      // Unmapped: mincore refuses the range.
      std::vector<unsigned char> pages(1);
      EXPECT_NE(mincore(const_cast<void*>(copy), 4096, pages.data()), 0) << "round " << round;
    }
  }
  // AddressSanitizer's allocator holds freed memory back: no address comes again there.
  if (!reused) GTEST_SKIP() << "no handle was made at a destroyed one's address";
}

// With several ranks, each writes its own trace and DOT file, its rank before the extension, and
// its lines on stderr start with "versa rank R"; alone, the file is the one named, the label
// "versa".
TEST(Distributed, EachRankWritesItsOwnTraceGraphAndLines) {
  const versa::testing_support::TemporaryPath folder("files");
  std::filesystem::create_directories(folder.path());
  int rank = 0;
  int ranks = 1;
  {
    versa::Config config = local_config();
    config.trace_file = (folder.path() / "run.json").string();
    config.dot_file = (folder.path() / "graph.dot").string();
    versa::mpi::Runtime rt(config);
    rank = rt.rank();
    ranks = rt.size();
    std::vector<int> values(static_cast<std::size_t>(ranks), 0);
    std::vector<versa::Handle<int>> hs;
    for (int r = 0; r < ranks; ++r) hs.push_back(rt.data(&values[r], 1, r, "value"));
    for (int r = 0; r < ranks; ++r)
      rt.submit(
          "set", [r](versa::Span<int> v) { v[0] = r + 1; }, versa::write(hs[r]));
    rt.wait_all();
    EXPECT_EQ(values[rank], rank + 1);
  }
  const std::string suffix = ranks == 1 ? "" : ".rank" + std::to_string(rank);
  {
    // The rank's lines on stderr likewise: its label has the rank.
    versa::mpi::Runtime rt(local_config());
    const std::string label = ranks == 1 ? "versa: " : "versa rank " + std::to_string(rank) + ": ";
    EXPECT_EQ(rt.local().topology_summary().rfind(label, 0), 0u) << rt.local().topology_summary();
  }
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder.path()))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"graph" + suffix + ".dot", "run" + suffix + ".json"}));
  std::ifstream trace(folder.path() / ("run" + suffix + ".json"));
  const std::string text((std::istreambuf_iterator<char>(trace)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("{\"displayTimeUnit\"", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("\"set\""), std::string::npos) << "the rank's task is not in its trace";
}

// A task that only the calling rank submits: on rank 1, it copies x (held by rank 0) into y, and
// waits for a version of x that rank 0's stream never sends.
void submit_extra_copy(versa::mpi::Runtime& rt, const versa::Handle<int>& hx,
                       const versa::Handle<int>& hy) {
  rt.submit(
      "extra", [](versa::Span<const int> a, versa::Span<int> b) { b[0] = a[0]; }, versa::read(hx),
      versa::write(hy));
}

// A rank that holds a view its own send waits for would never finish its tasks, and every rank
// would wait for it in wait_all's collective step: that rank's wait_all refuses at once, and
// once it has released the view, every rank's wait_all ends with the data where it belongs.
TEST(Distributed, WaitAllHoldingAViewASendWaitsForIsRefusedOnThatRank) {
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 1, y = 0;
  auto hx = rt.data(x, 0, "x");
  auto hy = rt.data(y, 1, "y");
  std::optional<versa::HostView<versa::Span<int>>> view;
  if (rt.rank() == 0) view.emplace(rt.local().acquire(versa::write(hx)));
  rt.submit(
      "next", [](versa::Span<const int> a, versa::Span<int> b) { b[0] = a[0] + 1; },
      versa::read(hx), versa::write(hy));
  if (rt.rank() == 0) {
    try {
      rt.wait_all();
      ADD_FAILURE() << "wait_all returned while its own view held the send back";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
    }
    (*view)[0] = 5;
    view.reset();
  }
  rt.wait_all();
  if (rt.rank() == 1) {
    EXPECT_EQ(y, 6);
  }
}

// A send whose data could not be copied home from the owner's device still tells the
// receiver, which would otherwise wait for ever: every rank's wait_all reports the failure, the
// owner's as the failed copy, the others' as a remote failure.
TEST(Distributed, ASendWhoseCopyHomeFailsStillTellsItsReceiver) {
  versa::Config config = local_config();
  config.emulated_devices.resize(1);
  config.emulated_devices[0].latency_s = 0;
  config.emulated_devices[0].bandwidth_bytes_per_s = 0;
  config.emulated_devices[0].fail_copy_at = 2;  // the copy in succeeds, the copy home fails
  versa::mpi::Runtime rt(config);
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 1, y = 0;
  auto hx = rt.data(x, 0, "x");
  auto hy = rt.data(y, 1, "y");
  rt.submit(
      "raise", [](versa::Span<int> a) { a[0] += 1; }, versa::placement(versa::Placement::gpu_only),
      versa::write(hx));
  rt.submit(
      "use", [](versa::Span<const int> a, versa::Span<int> b) { b[0] = a[0]; },
      versa::placement(versa::Placement::cpu_only), versa::read(hx), versa::write(hy));
  try {
    rt.wait_all();
    ADD_FAILURE() << "wait_all returned although the send's data never left the device";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (rt.rank() == 0) {
      EXPECT_NE(what.find("injected copy failure"), std::string::npos) << what;
    } else if (rt.rank() == 1) {  // its receive failed with the news
      EXPECT_NE(what.find("copying handle 'x' to the host failed on rank 0"), std::string::npos)
          << what;
    }
  }
  EXPECT_EQ(y, 0);  // the reader of the spoilt copy was cancelled
}

// What only the executor can refuse (here a task type whose operator is not the handle's) was
// planned on every rank already: the task fails on its executor instead of throwing there
// alone, every rank's wait_all reports it, and the data it would have written is spoilt, not
// left stale.
TEST(Distributed, ATaskOnlyItsExecutorRefusesFailsOnEveryRank) {
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  long total = 0;
  auto h = rt.data(total, 0, "total");
  h.set_reduction(versa::sum<long>());
  const auto other_sum =
      versa::Reduction<long>("other sum")
          .identity([](versa::Span<long> p) { p[0] = 0; })
          .merge([](versa::Span<long> a, versa::Span<const long> b) { a[0] += b[0]; });
  const auto add_one =
      versa::task_type("add one").cpu([](versa::Span<long> t) { t[0] += 1; }).reduction(other_sum);
  EXPECT_NO_THROW(rt.submit(add_one, versa::add(h), versa::mpi::on_rank(1)));
  long seen = -1;
  rt.submit(
      "read", [&seen](versa::Span<const long> t) { seen = t[0]; }, versa::read(h),
      versa::mpi::on_rank(0));
  try {
    rt.wait_all();
    ADD_FAILURE() << "wait_all returned although rank 1 refused its task";
  } catch (const std::exception& e) {
    if (rt.rank() == 1) {
      EXPECT_NE(std::string(e.what()).find("'other sum'"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(seen, -1) << "a reader of the data the refused task spoilt ran";
}

// Ranks that submit different streams get DivergenceError from wait_all, on every rank.
TEST(Distributed, DivergentStreamsAreReported) {
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 0;
  auto h = rt.data(x, 0, "x");
  // Rank 0 alone submits a task that runs on rank 0 and needs nothing: no message waits.
  if (rt.rank() == 0)
    rt.submit(
        "extra", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
  EXPECT_THROW(rt.wait_all(), versa::mpi::DivergenceError);
}

// A rank alone submits a task that needs a version from rank 0, which rank 0 never sends: the
// stream check at wait_all fails the waiting receive, and every rank gets DivergenceError
// instead of a hang (ctest's time limit bounds the test).
TEST(Distributed, ADivergenceThatLeavesAReceiveUnmatchedIsReported) {
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 1, y = 0;
  auto hx = rt.data(x, 0, "x");
  auto hy = rt.data(y, 1, "y");
  if (rt.rank() == 1) submit_extra_copy(rt, hx, hy);
  try {
    rt.wait_all();
    ADD_FAILURE() << "wait_all returned although the ranks diverged";
  } catch (const versa::mpi::DivergenceError& e) {
    EXPECT_NE(std::string(e.what()).find("different streams"), std::string::npos) << e.what();
  }
}

// The divergent rank waits outside wait_all: it acquires, on its local runtime, data whose
// receive no rank's stream sends, while rank 0 waits in wait_all. Nobody reaches the other's
// collective, so wait_all's own check cannot help; the stream probes of the waiting receive find
// the difference. The acquire fails with the receive's DivergenceError (as a TaskFailure, the
// local runtime's report of a failed task), and every rank's wait_all throws DivergenceError.
TEST(Distributed, ADivergenceWaitingInAnAcquireIsReportedOnEveryRank) {
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 1, y = 0;
  auto hx = rt.data(x, 0, "x");
  auto hy = rt.data(y, 1, "y");
  if (rt.rank() == 1) {
    submit_extra_copy(rt, hx, hy);
    try {
      auto view = rt.local().acquire(versa::read(hy));
      ADD_FAILURE() << "the acquire returned although the data never came";
    } catch (const versa::TaskFailure& failure) {
      EXPECT_THROW(std::rethrow_exception(failure.original()), versa::mpi::DivergenceError)
          << failure.what();
    }
  }
  EXPECT_THROW(rt.wait_all(), versa::mpi::DivergenceError);
}

// The same divergence in a program that never calls wait_all: rank 0 ends its runtime while
// rank 1 waits in the acquire. Rank 1's acquire fails, and both runtimes' ends report the
// divergence through the diagnostics instead of waiting for each other.
TEST(Distributed, ADivergenceInAProgramWithoutWaitAllEndsOnEveryRank) {
  std::string said;
  versa::Config config = local_config();
  config.diagnostics = [&said](const std::string& message) { said += message; };
  int rank = 0;
  {
    versa::mpi::Runtime rt(config);
    if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
    rank = rt.rank();
    int x = 1, y = 0;
    auto hx = rt.data(x, 0, "x");
    auto hy = rt.data(y, 1, "y");
    if (rank == 1) {
      submit_extra_copy(rt, hx, hy);
      EXPECT_THROW((void)rt.local().acquire(versa::read(hy)), versa::TaskFailure);
    }
  }
  EXPECT_NE(said.find("different streams"), std::string::npos) << "rank " << rank << ": " << said;
}

// Refused on every rank alike, before anything is recorded.
TEST(Distributed, RefusesBadReductionsForeignHandlesAndBadRanks) {
  versa::mpi::Runtime rt(local_config());
  double x = 0;
  auto h = rt.data(x, 0, "x");
  try {
    rt.submit(
        "add", [](versa::Span<double>) {}, versa::add(h));
    ADD_FAILURE() << "an add to a handle with no reduction was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no reduction operator"), std::string::npos) << e.what();
  }
  constexpr versa::AccessType merge_in_any_order{
      .reads = true, .writes = true, .reorderable = true, .exclusive = false, .group = 3};
  EXPECT_THROW(rt.submit(
                   "merge", [](versa::Span<double>) {}, versa::access<merge_in_any_order>(h)),
               std::invalid_argument);
  EXPECT_THROW(
      rt.submit(
          "far", [](versa::Span<double>) {}, versa::write(h), versa::mpi::on_rank(rt.size())),
      std::invalid_argument);
  int y = 0;
  auto foreign = rt.local().data(y, "foreign");
  EXPECT_THROW(rt.submit(
                   "foreign", [](versa::Span<int>) {}, versa::write(foreign)),
               std::invalid_argument);
  EXPECT_THROW(rt.data(&y, 1, rt.size()), std::invalid_argument);
  // Memory the runtime would allocate for a copy: never of a size that overflows, nor for a
  // tile narrower than its rows.
  EXPECT_THROW(rt.data(static_cast<double*>(nullptr), std::size_t{1} << 61, 0), std::length_error);
  EXPECT_THROW(rt.tile(static_cast<double*>(nullptr), 4, 4, 3, 0), std::invalid_argument);
  EXPECT_NO_THROW(rt.wait_all());
  EXPECT_EQ(rt.statistics().tasks_submitted, 0u);
}

// Scratch data: zero on every rank, so a rank reads it with no message until a task writes it;
// a version written then travels as any. Destroying the handle waits for no task (here one
// that waits for the destruction on each rank), and each rank frees the memory once its tasks
// on it have run; a handle per step moves its owner around the ranks.
TEST(Distributed, ScratchIsZeroEverywhereAndFreedWithoutWaiting) {
  versa::mpi::Runtime rt(local_config());
  const int ranks = rt.size();
  constexpr std::size_t n = 1000;
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(ranks), std::vector<double>(1));
  std::vector<versa::Handle<double>> outs;
  for (int r = 0; r < ranks; ++r) outs.push_back(rt.data(sums[r], r, "sum"));
  const auto add_sum = [&](const versa::Handle<double>& h, int r) {
    rt.submit(
        "sum",
        [](versa::Span<const double> v, versa::Span<double> s) {
          for (double x : v) s[0] += x + 1;
        },
        versa::read(h), versa::write(outs[static_cast<std::size_t>(r)]));
  };
  std::atomic<bool> destroyed{false};
  std::atomic<bool> waited_for{false};
  {
    auto work = rt.scratch<double>(n, ranks - 1, "work");
    for (int r = 0; r < ranks; ++r) add_sum(work, r);  // zeros: n each
    rt.wait_all();
    // A rank's sends (not its receipts, which may already count the next phase's) are all
    // made by its own submissions so far.
    EXPECT_EQ(rt.statistics().messages_sent, 0u) << "zeros were sent";
    rt.submit(
        "fill", [](versa::Span<double> v) { std::fill(v.begin(), v.end(), 1.0); },
        versa::write(work), versa::mpi::on_rank(0));
    for (int r = 0; r < ranks; ++r) add_sum(work, r);  // 2n each
    for (int r = 0; r < ranks; ++r)
      rt.submit(
          "hold",
          [&](versa::Span<const double>) {
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!destroyed.load() && std::chrono::steady_clock::now() < deadline)
              std::this_thread::sleep_for(std::chrono::microseconds(100));
            waited_for = !destroyed.load();
          },
          versa::read(work), versa::mpi::on_rank(r));
  }
  destroyed = true;
  rt.wait_all();
  EXPECT_FALSE(waited_for.load()) << "destroying the handle waited for its tasks";
  EXPECT_EQ(rt.statistics().messages_sent,
            rt.rank() == 0 ? static_cast<std::uint64_t>(ranks - 1) : 0u);
  for (int step = 0; step < 2 * ranks; ++step) {
    auto work = rt.scratch_tile<double>(10, 100, step % ranks, "step");
    rt.submit(
        "fill", [step](versa::Tile<double> t) { t(9, 99) = step; }, versa::write(work));
    for (int r = 0; r < ranks; ++r)
      rt.submit(
          "sum",
          [](versa::Tile<const double> t, versa::Span<double> s) {
            for (std::size_t j = 0; j < t.cols(); ++j)
              for (std::size_t i = 0; i < t.rows(); ++i) s[0] += t(i, j) + 1;
          },
          versa::read(work), versa::write(outs[static_cast<std::size_t>(r)]));
  }
  rt.wait_all();
  // Each step adds n + its own number: (n + step) summed over the steps.
  const double steps = 2.0 * ranks;
  EXPECT_EQ(sums[static_cast<std::size_t>(rt.rank())][0],
            3.0 * n + steps * n + steps * (steps - 1) / 2);
  EXPECT_EQ(rt.local().scratch_memory_bytes(), 0u);
  EXPECT_THROW(rt.scratch<double>(n, ranks), std::invalid_argument);
  EXPECT_THROW(rt.scratch_tile<double>(2, 2, -1), std::invalid_argument);
  EXPECT_THROW(rt.token(ranks), std::invalid_argument);
  outs.clear();
}

TEST(Distributed, BlockCyclicGrid) {
  EXPECT_EQ(versa::mpi::BlockCyclic::for_ranks(4).rows, 2);
  EXPECT_EQ(versa::mpi::BlockCyclic::for_ranks(6).cols, 3);
  EXPECT_EQ(versa::mpi::BlockCyclic::for_ranks(3).rows, 1);
  const versa::mpi::BlockCyclic grid{2, 3};
  EXPECT_EQ(grid.owner(0, 0), 0);
  EXPECT_EQ(grid.owner(1, 2), 5);
  EXPECT_EQ(grid.owner(2, 4), 1);
}

// The cost of a task with nothing to do on this rank (measured on the last rank, whose tasks
// all run on rank 0): printed as a RESULT line, bounded loosely (the machine is shared).
TEST(Distributed, PrunedSubmissionIsCheap) {
  versa::mpi::Runtime rt(local_config());
  if (rt.size() == 1) GTEST_SKIP() << "needs two ranks";
  int x = 0;
  auto h = rt.data(x, 0, "x");
  constexpr int tasks = 100000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < tasks; ++i)
    rt.submit(
        "on 0", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
      tasks;
  rt.wait_all();
  if (rt.rank() == 0) {
    EXPECT_EQ(x, tasks);
  }
  if (rt.rank() == rt.size() - 1) {
    EXPECT_EQ(rt.statistics().tasks_pruned, static_cast<std::uint64_t>(tasks));
    example::print_result("mpi-submit", "versa", "ranks=" + std::to_string(rt.size()),
                          "ns_per_pruned_task", ns, "ns");
#if VERSA_TSAN
    constexpr double bound = 100000.0;  // ThreadSanitizer slows every access down
#else
    constexpr double bound = 5000.0;
#endif
    EXPECT_LT(ns, bound);
  }
}

}  // namespace
