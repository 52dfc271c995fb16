#include "nbody.hpp"

#include <cmath>
#include <random>
#include <stdexcept>

namespace nbody {

using versa::Span;

const char* to_string(ForceAccess mode) { return mode == ForceAccess::add ? "add" : "write"; }

ForceAccess parse_force_access(const std::string& text) {
  if (text == "add") return ForceAccess::add;
  if (text == "write") return ForceAccess::write;
  throw std::invalid_argument("unknown mode '" + text + "' (modes: add, write)");
}

System make_system(std::size_t particles, std::size_t blocks, const Parameters& parameters) {
  if (particles == 0) throw std::invalid_argument("the system needs at least one particle");
  if (blocks == 0) throw std::invalid_argument("the system needs at least one block");
  if (blocks > particles)
    throw std::invalid_argument(std::to_string(blocks) + " blocks for " +
                                std::to_string(particles) + " particles leave blocks empty");
  System system;
  system.particles = particles;
  system.block_size = (particles + blocks - 1) / blocks;
  const std::size_t used = (particles + system.block_size - 1) / system.block_size;
  if (used != blocks)
    throw std::invalid_argument(
        std::to_string(particles) + " particles in " + std::to_string(blocks) + " blocks of " +
        std::to_string(system.block_size) + " fill only " + std::to_string(used) + " blocks");
  const auto side = static_cast<std::size_t>(std::ceil(std::cbrt(static_cast<double>(particles))));
  std::mt19937_64 rng(parameters.seed);
  std::uniform_real_distribution<double> jitter(-parameters.jitter, parameters.jitter);
  std::uniform_real_distribution<double> speed(-parameters.speed, parameters.speed);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t first = b * system.block_size;
    const std::size_t n = std::min(particles, first + system.block_size) - first;
    std::vector<double> position(3 * n), velocity(3 * n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t p = first + k;
      const std::size_t cell[3] = {p % side, p / side % side, p / (side * side)};
      for (int d = 0; d < 3; ++d) {
        position[d * n + k] = parameters.spacing * static_cast<double>(cell[d]) + jitter(rng);
        velocity[d * n + k] = speed(rng);
      }
    }
    system.positions.push_back(std::move(position));
    system.velocities.push_back(std::move(velocity));
    system.forces.emplace_back(3 * n, 0.0);
  }
  return system;
}

namespace {

// The Lennard-Jones force between two particles at squared distance r2, divided by the
// distance: F(r) / r = 24 (2 r^-14 - r^-8). The force on the first is this times (r1 - r2).
inline double force_over_distance(double r2) {
  const double inv2 = 1.0 / r2;
  const double inv6 = inv2 * inv2 * inv2;
  return 24.0 * inv2 * inv6 * (2.0 * inv6 - 1.0);
}

}  // namespace

// The inner loops sum into the outer particle's force: `omp simd` (with -fopenmp-simd, no
// OpenMP runtime) lets the compiler reorder that sum to vectorise. The order is still fixed by
// the code, so the runtime and the reference, which call these same functions, agree.
void self_forces(Span<const double> position, Span<double> force) {
  const std::size_t n = position.size() / 3;
  const double* __restrict x = position.data();
  const double* __restrict y = x + n;
  const double* __restrict z = y + n;
  double* __restrict fx = force.data();
  double* __restrict fy = fx + n;
  double* __restrict fz = fy + n;
  for (std::size_t k = 0; k < n; ++k) {
    const double xk = x[k], yk = y[k], zk = z[k];
    double sx = 0, sy = 0, sz = 0;
#pragma omp simd reduction(+ : sx, sy, sz)
    for (std::size_t l = k + 1; l < n; ++l) {
      const double dx = xk - x[l], dy = yk - y[l], dz = zk - z[l];
      const double s = force_over_distance(dx * dx + dy * dy + dz * dz);
      sx += s * dx;
      sy += s * dy;
      sz += s * dz;
      fx[l] -= s * dx;
      fy[l] -= s * dy;
      fz[l] -= s * dz;
    }
    fx[k] += sx;
    fy[k] += sy;
    fz[k] += sz;
  }
}

void pair_forces(Span<const double> position_i, Span<const double> position_j, Span<double> force_i,
                 Span<double> force_j) {
  const std::size_t ni = position_i.size() / 3, nj = position_j.size() / 3;
  const double* __restrict xi = position_i.data();
  const double* __restrict yi = xi + ni;
  const double* __restrict zi = yi + ni;
  const double* __restrict xj = position_j.data();
  const double* __restrict yj = xj + nj;
  const double* __restrict zj = yj + nj;
  double* __restrict fxi = force_i.data();
  double* __restrict fyi = fxi + ni;
  double* __restrict fzi = fyi + ni;
  double* __restrict fxj = force_j.data();
  double* __restrict fyj = fxj + nj;
  double* __restrict fzj = fyj + nj;
  for (std::size_t k = 0; k < ni; ++k) {
    const double xk = xi[k], yk = yi[k], zk = zi[k];
    double sx = 0, sy = 0, sz = 0;
#pragma omp simd reduction(+ : sx, sy, sz)
    for (std::size_t l = 0; l < nj; ++l) {
      const double dx = xk - xj[l], dy = yk - yj[l], dz = zk - zj[l];
      const double s = force_over_distance(dx * dx + dy * dy + dz * dz);
      sx += s * dx;
      sy += s * dy;
      sz += s * dz;
      fxj[l] -= s * dx;
      fyj[l] -= s * dy;
      fzj[l] -= s * dz;
    }
    fxi[k] += sx;
    fyi[k] += sy;
    fzi[k] += sz;
  }
}

void move_particles(Span<double> position, Span<double> velocity, Span<double> force, double dt) {
  for (std::size_t k = 0; k < position.size(); ++k) {
    velocity[k] += dt * force[k];
    position[k] += dt * velocity[k];
    force[k] = 0.0;
  }
}

namespace {
Span<double> span(std::vector<double>& block) { return {block.data(), block.size()}; }
}  // namespace

void reference_forces(System& system) {
  const std::size_t blocks = system.blocks();
  auto& x = system.positions;
  auto& f = system.forces;
  for (std::size_t i = 0; i < blocks; ++i) {
    self_forces(span(x[i]), span(f[i]));
    for (std::size_t j = i + 1; j < blocks; ++j)
      pair_forces(span(x[i]), span(x[j]), span(f[i]), span(f[j]));
  }
}

void reference_steps(System& system, int steps, double dt) {
  for (int step = 0; step < steps; ++step) {
    reference_forces(system);
    for (std::size_t b = 0; b < system.blocks(); ++b)
      move_particles(span(system.positions[b]), span(system.velocities[b]), span(system.forces[b]),
                     dt);
  }
}

TaskCounts task_counts(std::size_t blocks) {
  return TaskCounts{blocks, blocks * (blocks - 1) / 2, blocks};
}

std::string block_name(const char* array, std::size_t block) {
  // Appended piece by piece: GCC 12 at -O3 warns wrongly on "literal" + std::string.
  std::string text = array;
  text += '[';
  text += std::to_string(block);
  text += ']';
  return text;
}

namespace {

BlockHandles register_blocks(versa::Runtime& rt, System& system) {
  BlockHandles handles;
  for (std::size_t b = 0; b < system.blocks(); ++b) {
    handles.positions.push_back(rt.data(system.positions[b], block_name("position", b)));
    handles.velocities.push_back(rt.data(system.velocities[b], block_name("velocity", b)));
    handles.forces.push_back(rt.data(system.forces[b], block_name("force", b)));
    // Bound in write mode too, where it is never used: one setup for both.
    handles.forces.back().set_reduction(versa::sum<double>());
  }
  return handles;
}

}  // namespace

Simulation::Simulation(versa::Runtime& rt, System& system, ForceAccess mode, double dt)
    : rt_(rt), flow_(rt, register_blocks(rt, system), mode, dt) {}

Simulation::~Simulation() = default;

void Simulation::sync_host() {
  // A read access from the host waits for the writers and adds before it and brings the data
  // home; releasing it at once leaves the handle free for later tasks.
  const BlockHandles& handles = flow_.handles();
  for (const auto* blocks : {&handles.positions, &handles.velocities, &handles.forces})
    for (const versa::Handle<double>& handle : *blocks) rt_.acquire(versa::read(handle)).release();
}

double relative_error(const std::vector<std::vector<double>>& x,
                      const std::vector<std::vector<double>>& y) {
  double difference = 0, norm = 0;
  for (std::size_t b = 0; b < y.size(); ++b)
    for (std::size_t k = 0; k < y[b].size(); ++k) {
      const double d = x[b][k] - y[b][k];
      difference += d * d;
      norm += y[b][k] * y[b][k];
    }
  if (norm == 0) return std::sqrt(difference);
  return std::sqrt(difference / norm);
}

bool all_finite(const System& system) {
  for (const auto* arrays : {&system.positions, &system.velocities, &system.forces})
    for (const auto& block : *arrays)
      for (double v : block)
        if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace nbody
