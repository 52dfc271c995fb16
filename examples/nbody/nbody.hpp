// Direct Lennard-Jones n-body simulation on Versa: particles cut into blocks, one force task per
// pair of blocks that adds the pair's forces into both force blocks (Newton's third law), one
// move task per block. It shows what `add` accesses (reductions) buy over `write`: with `add`,
// the force tasks that share a force block run in any order and in parallel, each into a
// private partial where it must; with `write`, they run one after the other in submission
// order, and the force block travels to every device that runs one of them.
// Used by the command-line tool (main.cpp), the tests and the benchmark.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "nbody_cuda.hpp"
#include "versa/versa.hpp"

namespace nbody {

// How force tasks access the force blocks.
enum class ForceAccess { add, write };

// "add" or "write".
const char* to_string(ForceAccess mode);

// Parses "add" or "write"; throws std::invalid_argument naming the bad value.
ForceAccess parse_force_access(const std::string& text);

// The physics and the initial state. Units: epsilon = sigma = mass = 1.
struct Parameters {
  // Far below the period of a pair vibrating in the potential well (about 0.6).
  double dt = 1e-3;
  // Just past the potential's minimum at 2^(1/6): with the jitter below, no two particles start
  // closer than 1.1, where the force is still about 2.
  double spacing = 1.2;
  double jitter = 0.05;  // each coordinate moves off the lattice by up to this much
  double speed = 0.1;    // each velocity component is drawn from [-speed, speed]
  unsigned long seed = 42;
};

// The particles, block by block. Block b holds particles [b * block_size, min(n, (b + 1) *
// block_size)); the last block may be smaller. Each block array is structure of arrays: x of
// its particles, then y, then z (3 * count doubles), which the CPU loops vectorise and the GPU
// kernels read coalesced.
struct System {
  std::size_t particles = 0;
  std::size_t block_size = 0;
  std::vector<std::vector<double>> positions, velocities, forces;

  std::size_t blocks() const { return positions.size(); }
  std::size_t count(std::size_t block) const { return positions[block].size() / 3; }
};

// Particles on a jittered cubic lattice with small random velocities and zero forces, in
// `blocks` blocks of ceil(particles / blocks). The same arguments give the same system. Throws
// std::invalid_argument when particles or blocks is 0, or when blocks of that size would leave
// a block empty (e.g. 9 particles in 4 blocks of 3).
System make_system(std::size_t particles, std::size_t blocks, const Parameters& parameters = {});

// --- Kernels (host memory; the CPU and emulated implementations and the reference) -------------

// Adds the forces between the particles of one block into `force`, each pair once.
void self_forces(versa::Span<const double> position, versa::Span<double> force);

// Adds the forces between the particles of two blocks: +f into `force_i`, -f into `force_j`.
void pair_forces(versa::Span<const double> position_i, versa::Span<const double> position_j,
                 versa::Span<double> force_i, versa::Span<double> force_j);

// Symplectic Euler: v += dt f, x += dt v; then zeroes `force`, so that the next step's force
// tasks accumulate from zero.
void move_particles(versa::Span<double> position, versa::Span<double> velocity,
                    versa::Span<double> force, double dt);

// --- The sequential reference -------------------------------------------------------------

// Adds every block pair's forces into system.forces, in the order the runtime version submits
// them, in the calling thread.
void reference_forces(System& system);

// `steps` steps (forces, then moves) in the calling thread, with the same kernels.
void reference_steps(System& system, int steps, double dt);

// --- On the runtime -----------------------------------------------------------------------

// The kernels: the short names the tool's report gives them and their task types' names, under
// which Runtime::task_statistics reports them.
inline constexpr const char* kernel_labels[3] = {"self", "pair", "move"};
inline constexpr const char* kernel_task_types[3] = {"self_forces", "pair_forces", "move"};

// Tasks of each kernel per step for `blocks` blocks.
struct TaskCounts {
  std::size_t self = 0, pair = 0, move = 0;
};
TaskCounts task_counts(std::size_t blocks);

// The kernels' task types: CPU bodies (which the emulated device runs too) and CUDA bodies
// (nbody_cuda.hpp; Versa drops them when it is built without CUDA). The bodies are lambdas that
// call the kernels, not the kernels' addresses: through a function pointer the kernels ran 15%
// slower (bench/run nbody, 4 blocks), the call no longer being inlined into the task's invoker.
inline auto self_task_type() {
  return versa::task_type(kernel_task_types[0])
      .cpu([](versa::Span<const double> position, versa::Span<double> force) {
        self_forces(position, force);
      })
      .cuda([](versa::CudaContext& gpu, versa::Span<const double> position,
               versa::Span<double> force) {
        const std::size_t n = position.size() / 3;
        cuda::add_forces(gpu, position.data(), n, position.data(), n, force.data(), true);
      });
}

inline auto pair_task_type() {
  return versa::task_type(kernel_task_types[1])
      .cpu([](versa::Span<const double> position_i, versa::Span<const double> position_j,
              versa::Span<double> force_i, versa::Span<double> force_j) {
        pair_forces(position_i, position_j, force_i, force_j);
      })
      // Two passes, each thread summing the forces on one particle, instead of atomics.
      .cuda([](versa::CudaContext& gpu, versa::Span<const double> position_i,
               versa::Span<const double> position_j, versa::Span<double> force_i,
               versa::Span<double> force_j) {
        const std::size_t ni = position_i.size() / 3, nj = position_j.size() / 3;
        cuda::add_forces(gpu, position_i.data(), ni, position_j.data(), nj, force_i.data(), false);
        cuda::add_forces(gpu, position_j.data(), nj, position_i.data(), ni, force_j.data(), false);
      });
}

inline auto move_task_type(double dt) {
  return versa::task_type(kernel_task_types[2])
      .cpu([dt](versa::Span<double> position, versa::Span<double> velocity,
                versa::Span<double> force) { move_particles(position, velocity, force, dt); })
      .cuda([dt](versa::CudaContext& gpu, versa::Span<double> position,
                 versa::Span<double> velocity, versa::Span<double> force) {
        cuda::move(gpu, position.data(), velocity.data(), force.data(), position.size(), dt);
      });
}

// One handle per block for positions, velocities and forces.
struct BlockHandles {
  std::vector<versa::Handle<double>> positions, velocities, forces;
};

// The name of block `block` of `array` ("position[3]"), which the handles are registered under.
std::string block_name(const char* array, std::size_t block);

// The simulation's task flow on the blocks' handles, for any runtime whose submit takes a task
// type and accesses: a versa::Runtime (Simulation below) or a versa::mpi::Runtime (mpi_main.cpp,
// where every rank submits the same flow). The handles and `rt` must outlive it.
//   nbody::TaskFlow flow(rt, handles, nbody::ForceAccess::write, dt);
//   flow.submit_steps(10);
//   rt.wait_all();
template <class Runtime>
class TaskFlow {
 public:
  TaskFlow(Runtime& rt, BlockHandles handles, ForceAccess mode, double dt)
      : rt_(rt), handles_(std::move(handles)), mode_(mode), move_(move_task_type(dt)) {}

  // Submits the force tasks: self (i, i) and pair (i, j), i < j, in that order for i = 0, 1, ...
  // `write` orders the tasks that share a force block as submitted: (0,0), (0,1), ... (0,B-1)
  // one after the other, (1,1) after (0,1), and so on: the order of reference_forces. `add`
  // leaves them unordered.
  void submit_forces() {
    const std::size_t blocks = handles_.positions.size();
    for (std::size_t i = 0; i < blocks; ++i) {
      rt_.submit(self_, versa::read(handles_.positions[i]), force(i));
      for (std::size_t j = i + 1; j < blocks; ++j)
        rt_.submit(pair_, versa::read(handles_.positions[i]), versa::read(handles_.positions[j]),
                   force(i), force(j));
    }
  }
  // Submits one move task per block.
  void submit_moves() {
    for (std::size_t b = 0; b < handles_.positions.size(); ++b)
      rt_.submit(move_, versa::write(handles_.positions[b]), versa::write(handles_.velocities[b]),
                 versa::write(handles_.forces[b]));
  }
  // Submits `steps` steps: forces, then moves. Returns without waiting.
  void submit_steps(int steps) {
    for (int step = 0; step < steps; ++step) {
      submit_forces();
      submit_moves();
    }
  }

  const BlockHandles& handles() const { return handles_; }
  ForceAccess mode() const { return mode_; }

 private:
  versa::Access<versa::Span<double>> force(std::size_t block) const {
    return mode_ == ForceAccess::add ? versa::add(handles_.forces[block])
                                     : versa::write(handles_.forces[block]);
  }

  Runtime& rt_;
  BlockHandles handles_;
  ForceAccess mode_;
  decltype(self_task_type()) self_ = self_task_type();
  decltype(pair_task_type()) pair_ = pair_task_type();
  decltype(move_task_type(0.0)) move_;
};

// The blocks of a System registered with a runtime: one handle per block for positions,
// velocities and forces, the force handles summing their `add` accesses (versa::sum), and the
// task flow on them. The system must outlive this object; its host arrays hold the results
// after sync_host() or once this object is destroyed.
class Simulation {
 public:
  Simulation(versa::Runtime& rt, System& system, ForceAccess mode, double dt);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // See TaskFlow.
  void submit_forces() { flow_.submit_forces(); }
  void submit_moves() { flow_.submit_moves(); }
  void submit_steps(int steps) { flow_.submit_steps(steps); }
  // Waits for the tasks submitted so far and brings every block home: the system's host arrays
  // then hold the latest positions, velocities and forces (pending `add`s applied).
  void sync_host();

  ForceAccess mode() const { return flow_.mode(); }

 private:
  versa::Runtime& rt_;
  TaskFlow<versa::Runtime> flow_;
};

// ||x - y|| / ||y|| over every block of `x` and `y` (same shape); 0 when both are zero.
double relative_error(const std::vector<std::vector<double>>& x,
                      const std::vector<std::vector<double>>& y);

// Whether every position, velocity and force is finite.
bool all_finite(const System& system);

}  // namespace nbody
