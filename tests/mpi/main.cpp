// The driver of the distributed tests, run with mpirun on 1 to 4 ranks (tests/CMakeLists.txt).
// MPI is initialized here, not by the runtimes, so that each test may create one of its own.
// Every rank runs every test in the same order; only rank 0 prints the progress, every rank
// prints its failures.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    std::fprintf(stderr, "MPI provides thread level %d; the tests need MPI_THREAD_SERIALIZED\n",
                 provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // The other ranks report failures only (as the default printer's failure lines).
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    struct FailurePrinter : ::testing::EmptyTestEventListener {
      explicit FailurePrinter(int r) : rank(r) {}
      void OnTestPartResult(const ::testing::TestPartResult& result) override {
        if (result.failed())
          std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank,
                       result.file_name() ? result.file_name() : "?", result.line_number(),
                       result.summary());
      }
      int rank;
    };
    listeners.Append(new FailurePrinter(rank));
  }
  const int failed = RUN_ALL_TESTS();
  // Every rank's verdict: a failure on any rank fails the run on every rank.
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
