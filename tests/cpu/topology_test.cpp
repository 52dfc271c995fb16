// The start-up line's memory figure: the host's total memory as the OS reports it, rounded to
// whole GiB (MiB under 1 GiB). And which workers are pinned to cores.
#include "cpu/topology.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <regex>
#include <string>

#include "support/config.hpp"
#include "versa/versa.hpp"

namespace {

using versa::detail::format_memory;

constexpr unsigned long long mib = 1ull << 20;
constexpr unsigned long long gib = 1ull << 30;

TEST(Topology, MemoryIsRoundedToWholeGibOrMibUnderOneGib) {
  EXPECT_EQ(format_memory(24 * gib), "24 GiB");
  EXPECT_EQ(format_memory(24 * gib - 300 * mib), "24 GiB") << "the kernel keeps some for itself";
  EXPECT_EQ(format_memory(23 * gib + 600 * mib), "24 GiB");
  EXPECT_EQ(format_memory(23 * gib + 400 * mib), "23 GiB");
  EXPECT_EQ(format_memory(gib), "1 GiB");
  EXPECT_EQ(format_memory(gib - 1), "1 GiB");
  EXPECT_EQ(format_memory(1023 * mib), "1023 MiB");
  EXPECT_EQ(format_memory(512 * mib), "512 MiB");
  EXPECT_EQ(format_memory(512 * mib + 600 * 1024), "513 MiB");
}

TEST(Topology, MemoryIsTheOperatingSystemsTotal) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  ASSERT_GT(pages, 0);
  ASSERT_GT(page_size, 0);
  const unsigned long long total =
      static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page_size);
  const versa::detail::Topology topology;
  EXPECT_EQ(topology.memory_bytes(), total);
}

// The figure the start-up line prints is within rounding of sysconf's total.
TEST(Topology, StartUpLineShowsTheHostMemoryWithinRounding) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  const double total = static_cast<double>(pages) * static_cast<double>(page_size);
  const versa::Runtime rt{versa::testing::workers(1)};
  const std::string& line = rt.topology_summary();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(line, m, std::regex(R"((\d+) (GiB|MiB))"))) << line;
  const double unit = m[2] == "GiB" ? static_cast<double>(gib) : static_cast<double>(mib);
  const double shown = std::stod(m[1]) * unit;
  EXPECT_LE(std::abs(shown - total), unit / 2) << line;
}

}  // namespace

namespace {

// Hardware threads the calling thread may run on.
int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

// A runtime whose workers do not fill the cores leaves them to the operating system: pinned, the
// one worker of each of two such processes would share core 0.
TEST(Topology, FewerWorkersThanCoresAreNotPinned) {
  if (versa::detail::Topology().usable_cores() < 2) GTEST_SKIP() << "one usable core";
  const int process_cpus = allowed_cpus();
  ASSERT_GT(process_cpus, 1);
  versa::Config config = versa::testing::workers(1);
  config.pin_workers = true;
  versa::Runtime rt{config};
  std::atomic<int> task_cpus{0};
  rt.submit("affinity", [&task_cpus] { task_cpus = allowed_cpus(); });
  rt.wait_all();
  EXPECT_EQ(task_cpus.load(), process_cpus) << "the worker was pinned";
}

}  // namespace
