// The n-body simulation of examples/nbody on the runtime against its sequential reference, with
// the force accesses as reductions (add) and as writes, on CPU workers and emulated devices.
#include "nbody.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>

#include "support/config.hpp"

namespace {

using nbody::ForceAccess;
using versa::testing::workers;

constexpr int steps = 3;

struct Outcome {
  nbody::System system;
  std::uint64_t tasks[3] = {};    // per kernel (nbody::kernel_task_types), on every device
  std::uint64_t on_emulated = 0;  // tasks run on emulated devices
  std::uint64_t evictions = 0;
};

// `steps` steps and one more force evaluation, so that the forces are checked as well.
Outcome simulate(versa::Config config, std::size_t particles, std::size_t blocks,
                 ForceAccess mode) {
  Outcome run{nbody::make_system(particles, blocks)};
  config.task_statistics = true;
  versa::Runtime rt{config};
  {
    nbody::Simulation simulation(rt, run.system, mode, nbody::Parameters{}.dt);
    simulation.submit_steps(steps);
    simulation.submit_forces();
    simulation.sync_host();
  }
  rt.wait_all();
  for (const versa::TaskStatistics& t : rt.task_statistics())
    for (int kernel = 0; kernel < 3; ++kernel)
      if (t.task_type == nbody::kernel_task_types[kernel]) {
        run.tasks[kernel] += t.tasks;
        if (t.device_kind == "emulated") run.on_emulated += t.tasks;
      }
  for (const auto& device : rt.statistics()) run.evictions += device.evictions;
  return run;
}

// The runtime's task statistics count every task of simulate() once, under its kernel's name.
void expect_every_task_counted(const Outcome& run, std::size_t blocks) {
  const nbody::TaskCounts per_step = nbody::task_counts(blocks);
  EXPECT_EQ(run.tasks[0], (steps + 1) * per_step.self);
  EXPECT_EQ(run.tasks[1], (steps + 1) * per_step.pair);
  EXPECT_EQ(run.tasks[2], steps * per_step.move);
}

nbody::System reference(std::size_t particles, std::size_t blocks) {
  nbody::System system = nbody::make_system(particles, blocks);
  nbody::reference_steps(system, steps, nbody::Parameters{}.dt);
  nbody::reference_forces(system);
  return system;
}

void expect_close(const nbody::System& actual, const nbody::System& expected) {
  EXPECT_TRUE(nbody::all_finite(actual));
  EXPECT_LE(nbody::relative_error(actual.positions, expected.positions), 1e-12);
  EXPECT_LE(nbody::relative_error(actual.velocities, expected.velocities), 1e-12);
  EXPECT_LE(nbody::relative_error(actual.forces, expected.forces), 1e-12);
}

// Device memory of a fraction of the data, but room for a few tasks' blocks: replicas are
// evicted and written home all along.
std::size_t small_device_memory(std::size_t particles, std::size_t blocks) {
  const std::size_t data = 9 * particles * sizeof(double);
  const std::size_t block = 3 * ((particles + blocks - 1) / blocks) * sizeof(double);
  return std::max(data / 4, 6 * block);
}

// One block, blocks that divide the particles, and uneven last blocks (451 = 2 * 151 + 149,
// 500 = 6 * 72 + 68).
struct Size {
  std::size_t particles, blocks;
};

// (size, mode, emulated devices beside 2 CPU workers).
using Case = std::tuple<Size, ForceAccess, int>;
class NbodySimulation : public testing::TestWithParam<Case> {};

TEST_P(NbodySimulation, MatchesTheSequentialReference) {
  const auto [size, mode, devices] = GetParam();
  versa::Config config = workers(2);
  if (devices > 0)
    config = versa::testing::with_emulated(config, devices,
                                           small_device_memory(size.particles, size.blocks));
  const Outcome run = simulate(config, size.particles, size.blocks, mode);
  expect_close(run.system, reference(size.particles, size.blocks));
  expect_every_task_counted(run, size.blocks);
}

INSTANTIATE_TEST_SUITE_P(Systems, NbodySimulation,
                         testing::Combine(testing::Values(Size{300, 1}, Size{451, 3}, Size{600, 4},
                                                          Size{500, 7}),
                                          testing::Values(ForceAccess::add, ForceAccess::write),
                                          testing::Values(0, 1, 2)),
                         [](const testing::TestParamInfo<Case>& info) {
                           const Size size = std::get<0>(info.param);
                           return "n" + std::to_string(size.particles) + "_blocks" +
                                  std::to_string(size.blocks) + "_" +
                                  nbody::to_string(std::get<1>(info.param)) + "_" +
                                  std::to_string(std::get<2>(info.param)) + "emulated";
                         });

// With devices whose memory holds a fraction of the data, the emulated devices take part and
// evict: the comparisons above cover the heterogeneous paths, not only the CPU.
TEST(NbodyOnDevices, EmulatedDevicesRunTasksAndEvict) {
  const std::size_t particles = 500, blocks = 7;
  for (ForceAccess mode : {ForceAccess::write, ForceAccess::add}) {
    const Outcome run = simulate(
        versa::testing::with_emulated(workers(2), 2, small_device_memory(particles, blocks)),
        particles, blocks, mode);
    EXPECT_GT(run.on_emulated, 0u) << nbody::to_string(mode);
    EXPECT_GT(run.evictions, 0u) << nbody::to_string(mode);
    expect_close(run.system, reference(particles, blocks));
  }
}

TEST(NbodyModes, AddAndWriteAgree) {
  const std::size_t particles = 500, blocks = 7;
  const versa::Config config =
      versa::testing::with_emulated(workers(2), 1, small_device_memory(particles, blocks));
  const Outcome add = simulate(config, particles, blocks, ForceAccess::add);
  const Outcome write = simulate(config, particles, blocks, ForceAccess::write);
  EXPECT_LE(nbody::relative_error(add.system.positions, write.system.positions), 1e-12);
  EXPECT_LE(nbody::relative_error(add.system.velocities, write.system.velocities), 1e-12);
  EXPECT_LE(nbody::relative_error(add.system.forces, write.system.forces), 1e-12);
}

// The CUDA kernels, on CPU + a real GPU: skips without a GPU.
TEST(NbodyOnGpu, MatchesTheSequentialReference) {
  versa::Config config = workers(2);
  config.gpus = 1;
  {
    versa::Runtime probe{config};
    if (probe.device_count() == 0) GTEST_SKIP() << "no GPU: " << probe.topology_summary();
  }
  const std::size_t particles = 600, blocks = 4;
  for (ForceAccess mode : {ForceAccess::add, ForceAccess::write})
    expect_close(simulate(config, particles, blocks, mode).system, reference(particles, blocks));
}

TEST(NbodySystem, IsDeterministicWithAnUnevenLastBlock) {
  const nbody::System a = nbody::make_system(500, 7), b = nbody::make_system(500, 7);
  EXPECT_EQ(a.positions, b.positions);
  EXPECT_EQ(a.velocities, b.velocities);
  ASSERT_EQ(a.blocks(), 7u);
  EXPECT_EQ(a.block_size, 72u);
  EXPECT_EQ(a.count(6), 68u);
  for (const auto& force : a.forces)
    EXPECT_TRUE(std::all_of(force.begin(), force.end(), [](double f) { return f == 0.0; }));
}

TEST(NbodySystem, BadSizesAreRefused) {
  EXPECT_THROW(nbody::make_system(0, 1), std::invalid_argument);
  EXPECT_THROW(nbody::make_system(10, 0), std::invalid_argument);
  EXPECT_THROW(nbody::make_system(3, 4), std::invalid_argument);
  // Blocks of 3 hold 9 particles in 3 blocks, leaving the fourth empty.
  EXPECT_THROW(nbody::make_system(9, 4), std::invalid_argument);
  EXPECT_EQ(nbody::parse_force_access("add"), ForceAccess::add);
  EXPECT_EQ(nbody::parse_force_access("write"), ForceAccess::write);
  EXPECT_THROW(nbody::parse_force_access("commute"), std::invalid_argument);
}

TEST(NbodyKernels, NewtonsThirdLawHolds) {
  // The forces of a closed system sum to zero.
  nbody::System system = nbody::make_system(200, 3);
  nbody::reference_forces(system);
  double total[3] = {0, 0, 0}, scale = 0;
  for (std::size_t b = 0; b < system.blocks(); ++b)
    for (int d = 0; d < 3; ++d)
      for (std::size_t k = 0; k < system.count(b); ++k) {
        const double f = system.forces[b][d * system.count(b) + k];
        total[d] += f;
        scale = std::max(scale, std::abs(f));
      }
  ASSERT_GT(scale, 0.0);
  for (double sum : total) EXPECT_LT(std::abs(sum), 1e-10 * scale * 200);
}

TEST(NbodyCounts, MatchTheAlgorithm) {
  const nbody::TaskCounts c = nbody::task_counts(7);
  EXPECT_EQ(c.self, 7u);
  EXPECT_EQ(c.pair, 21u);
  EXPECT_EQ(c.move, 7u);
}

}  // namespace
