// StarPU and StarPU-MPI for the StarPU-MPI peers (starpu_mpi.cpp, starpu_mpi_fmm.cpp), from
// starpu_mpi_init_conf (which initializes MPI) to starpu_mpi_shutdown (which shuts StarPU down and
// finalizes MPI). One CPU worker per rank, as Versa's ranks have, unbound like Versa's (ranks
// share the machine's cores): StarPU binds its workers and its MPI thread to cores by default,
// and every rank would bind to the same ones.
#pragma once

#include <mpi.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common/starpu_support.hpp"

namespace bench {

class StarpuMpiSession {
 public:
  // `policy_init` configures the scheduling policy as it starts (heteroprio's buckets).
  StarpuMpiSession(int* argc, char*** argv, const char* scheduler,
                   void (*policy_init)(unsigned) = nullptr) {
    ::setenv("STARPU_WORKERS_NOBIND", "1", 0);
    ::setenv("STARPU_MPI_NOBIND", "1", 0);
    starpu_conf conf = cpu_only_conf(scheduler, 1, policy_init);
    check(starpu_mpi_init_conf(argc, argv, 1, MPI_COMM_WORLD, &conf), "starpu_mpi_init_conf");
    starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank_);
    starpu_mpi_comm_size(MPI_COMM_WORLD, &size_);
    if (starpu_cpu_worker_get_count() != 1)
      throw std::runtime_error("StarPU started " + std::to_string(starpu_cpu_worker_get_count()) +
                               " CPU workers, not 1");
  }
  ~StarpuMpiSession() { starpu_mpi_shutdown(); }
  StarpuMpiSession(const StarpuMpiSession&) = delete;
  StarpuMpiSession& operator=(const StarpuMpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace bench
