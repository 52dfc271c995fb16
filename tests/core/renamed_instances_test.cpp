// The renamed instances of a handle that renaming left behind (an older instance, no longer the
// newest, whose reader is still pending) against the handle's retirement: the root must outlive
// them, eviction must not drop their data, and the renamed buffers of retired handles go back
// to the system at wait_all.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "support/gate.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;
using versa::Placement;
using versa::Span;
using versa::testing::eventually;
using versa::testing::Gate;
using versa::testing::workers;

enum class Destroyed {
  with_a_reader_of_the_root_pending,            // kept by the runtime until the reader ends
  with_nothing_pending_but_the_older_instance,  // retired at once
};

// Handle s (scratch, or the program's memory) is renamed twice on the device while task B, the
// reader of its first instance I1, waits behind another handle: I1 is then older than the newest
// instance, with B pending. s is destroyed, and other tiles fill the device (4 tiles of memory)
// so that eviction looks at I1's copy, its only one. B must still read what W1 wrote: the sum of
// n ones.
void reader_of_an_older_instance(Destroyed when, bool scratch) {
  constexpr std::size_t n = 1 << 14;  // 128 KiB a tile
  versa::Runtime rt{
      versa::testing::with_emulated(workers(2), 1, 4 * n * sizeof(double) + (64 << 10))};
  const auto on_device = versa::placement(Placement::gpu_only);
  double out = -1;
  auto h_out = rt.data(&out, 1, "out");
  double x = 0;
  auto h_x = rt.data(&x, 1, "x");
  Gate reader_of_root, b_held;
  std::atomic<bool> a_done{false}, w2_done{false};
  const bool kept = when == Destroyed::with_a_reader_of_the_root_pending;
  {
    std::vector<double> memory(n, 0.0);
    auto s = scratch ? rt.scratch<double>(n, "s") : rt.data(memory, "s");
    rt.submit(
        "A",
        [&](Span<const double>) {
          if (kept) reader_of_root.pass();
          a_done = true;
        },
        on_device, versa::read(s));
    rt.submit(  // renamed while A reads: instance I1
        "W1", [](Span<double> w) { std::fill(w.begin(), w.end(), 1.0); }, on_device,
        versa::write_only(s));
    rt.submit(
        "C", [&](Span<double> v) { b_held.pass(), v[0] = 1; },
        versa::placement(Placement::cpu_only), versa::write(h_x));
    rt.submit(  // reads I1, behind C
        "B",
        [](Span<const double> w, Span<const double>, Span<double> o) {
          o[0] = std::accumulate(w.begin(), w.end(), 0.0);
        },
        on_device, versa::read(s), versa::read(h_x), versa::write(h_out));
    rt.submit(  // renamed while B is pending: instance I2; I1 is older, B still pending there
        "W2",
        [&](Span<double> w) {
          std::fill(w.begin(), w.end(), 2.0);
          w2_done = true;
        },
        on_device, versa::write_only(s));
    if (!kept) {
      ASSERT_TRUE(eventually([&] { return a_done.load() && w2_done.load(); }));
      // Their bodies have returned; their accesses end microseconds later, after which
      // destroying the program's data waits for nothing (else a reported misuse).
      std::this_thread::sleep_for(50ms);
    }
  }  // s destroyed
  reader_of_root.open = true;
  ASSERT_TRUE(eventually([&] { return a_done.load() && w2_done.load(); }));
  // Tiles whose readers wait behind C too, so that eviction finds nothing free to take first.
  std::vector<std::vector<double>> tiles(5, std::vector<double>(n, 3.0));
  std::vector<versa::Handle<double>> handles;
  for (auto& tile : tiles) {
    handles.push_back(rt.data(tile, "tile"));
    rt.submit(
        "fill", [](Span<double> w) { std::fill(w.begin(), w.end(), 4.0); }, on_device,
        versa::write_only(handles.back()));
    rt.submit(
        "read", [](Span<const double>, Span<const double>) {}, on_device,
        versa::read(handles.back()), versa::read(h_x));
  }
  std::this_thread::sleep_for(50ms);
  b_held.open = true;
  rt.wait_all();
  EXPECT_EQ(out, static_cast<double>(n)) << "B did not read what W1 wrote";
  EXPECT_GT(rt.statistics().at(1).evictions, 0u) << "the device was not short of memory";
}

// Eviction took I1 for dead data (the scratch handle destroyed, its root and newest instance
// idle) and dropped its only copy before B read it.
TEST(RenamedInstances, AnOlderInstanceWithAReaderPendingIsNotDropped) {
  reader_of_an_older_instance(Destroyed::with_a_reader_of_the_root_pending, true);
}

// The root was freed while I1, whose reader was pending, still read its flags: AddressSanitizer
// reported a heap-use-after-free in HandleState::dead() from eviction.
TEST(RenamedInstances, TheRootOutlivesAnOlderInstanceOfScratch) {
  reader_of_an_older_instance(Destroyed::with_nothing_pending_but_the_older_instance, true);
}
TEST(RenamedInstances, TheRootOutlivesAnOlderInstanceOfTheProgramsData) {
  reader_of_an_older_instance(Destroyed::with_nothing_pending_but_the_older_instance, false);
}

// A renamed scratch handle destroyed with tasks pending is retired by wait_all, which gave its
// renamed buffer back after trimming the pool: the buffer stayed until the next wait_all.
TEST(RenamedInstances, WaitAllFreesTheRenamedBufferOfAHandleItRetires) {
  versa::Runtime rt{workers(2)};
  constexpr std::size_t n = 4096;
  double sum = 0;
  auto h_sum = rt.data(&sum, 1, "sum");
  Gate first_writer;
  {
    auto work = rt.scratch<double>(n, "work");
    rt.submit(
        "touch", [&first_writer](Span<double> w) { first_writer.pass(), w[0] = -1; },
        versa::write(work));
    rt.submit(
        "make", [](Span<double> w) { std::fill(w.begin(), w.end(), 1.0); },
        versa::write_only(work));
    rt.submit(
        "sum",
        [](Span<const double> w, Span<double> s) {
          s[0] = std::accumulate(w.begin(), w.end(), 0.0);
        },
        versa::read(work), versa::write(h_sum));
  }
  first_writer.open = true;
  rt.wait_all();
  EXPECT_EQ(sum, static_cast<double>(n));
  EXPECT_EQ(rt.renamed_accesses(), 1u);
  EXPECT_EQ(rt.scratch_memory_bytes(), 0u);
  EXPECT_EQ(rt.rename_memory_bytes(), 0u);
}

// Without write-back, data that renaming left in host memory (a buffer of the runtime's) comes
// home at wait_all all the same, as it would have been written there without renaming: the
// user's memory holds what CPU tasks wrote, whatever the timing, and the buffer goes back.
TEST(RenamedInstances, DataInHostMemoryComesHomeWithoutWriteBack) {
  versa::Runtime rt{workers(2)};
  constexpr std::size_t n = 64;
  std::vector<double> v(n, 0.0);
  {
    auto h = rt.data(v, "v");
    h.set_write_back(false);
    Gate reader;
    rt.submit(
        "read", [&reader](Span<const double>) { reader.pass(); }, versa::read(h));
    rt.submit(  // renamed: the reader holds the data
        "make", [](Span<double> d) { std::fill(d.begin(), d.end(), 7.0); }, versa::write_only(h));
    reader.open = true;
    rt.wait_all();
    EXPECT_EQ(rt.renamed_accesses(), 1u);
    EXPECT_EQ(v, std::vector<double>(n, 7.0));
    EXPECT_EQ(rt.rename_memory_bytes(), 0u);
  }
  EXPECT_EQ(v, std::vector<double>(n, 7.0));
}

}  // namespace
