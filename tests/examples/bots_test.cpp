// The BOTS kernels of bench/bots: each kernel's own verification after its sequential run and
// after its Versa run on 1, 2, 4 and 8 workers, at the small scale (also under ThreadSanitizer),
// and the verifications themselves refuse a wrong answer.
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "alignment.hpp"
#include "fft.hpp"
#include "fib.hpp"
#include "floorplan.hpp"
#include "health.hpp"
#include "nqueens.hpp"
#include "sort.hpp"
#include "sparselu.hpp"
#include "strassen.hpp"
#include "support/config.hpp"

namespace {

using versa::testing::workers;

template <class Kernel>
class BotsKernel : public ::testing::Test {};

using Kernels =
    ::testing::Types<bots::Fib, bots::NQueens, bots::Sort, bots::SparseLu, bots::Strassen,
                     bots::Fft, bots::Health, bots::Floorplan, bots::Alignment>;

class KernelName {
 public:
  template <class Kernel>
  static std::string GetName(int) {
    return Kernel::name;
  }
};
TYPED_TEST_SUITE(BotsKernel, Kernels, KernelName);

TYPED_TEST(BotsKernel, SequentialRunPassesItsVerification) {
  TypeParam kernel{bots::Scale::small};
  kernel.reset();
  kernel.run_sequential();
  EXPECT_EQ(kernel.verify(), "");
}

// Tracked and untracked: the benchmarks run untracked, where tasks without accesses take the
// runtime's short paths.
TYPED_TEST(BotsKernel, VersaRunPassesItsVerificationOn1To8Workers) {
  for (bool tracked : {true, false}) {
    for (int worker_count : {1, 2, 4, 8}) {
      SCOPED_TRACE(std::to_string(worker_count) + " workers" + (tracked ? "" : ", untracked"));
      TypeParam kernel{bots::Scale::small};
      versa::Runtime rt{tracked ? workers(worker_count)
                                : versa::testing::untracked(workers(worker_count))};
      for (int run = 0; run < 2; ++run) {  // a second run on a reset input
        kernel.reset();
        kernel.run_versa(rt);
        EXPECT_EQ(kernel.verify(), "");
      }
    }
  }
}

TEST(BotsFib, VerificationRefusesAWrongResultAndCountsTasks) {
  bots::Fib fib{10};
  EXPECT_NE(fib.verify(), "");  // nothing ran
  fib.run_sequential();
  EXPECT_EQ(fib.result(), 55);
  EXPECT_EQ(fib.verify(), "");
  // fib(10) makes 177 calls, of which all but the first are tasks.
  EXPECT_EQ(fib.tasks(), 176u);
  EXPECT_EQ(bots::fib_iterative(32), 2178309);
  EXPECT_THROW(bots::Fib{-1}, std::invalid_argument);
}

TEST(BotsSparseLu, VerificationRefusesACorruptedBlockAndFillInIsAllocated) {
  bots::SparseLu lu{6, 4};
  EXPECT_NE(lu.verify(), "");  // nothing ran: the blocks hold the input
  lu.run_sequential();
  EXPECT_EQ(lu.verify(), "");
  // genmat's pattern on 6 x 6 blocks: the band (16 blocks) and (0, 2), (0, 4), (2, 0), (4, 0);
  // step 0 fills (1, 4), (2, 4), (4, 1) and (4, 2).
  EXPECT_EQ(lu.input_blocks(), 20);
  EXPECT_EQ(lu.factor_blocks(), 24);
  EXPECT_EQ(lu.block(2, 4).size(), 16u);
  EXPECT_TRUE(lu.block(1, 3).empty());
  // Tasks: 6 lu0; per step, the non-zero blocks right of the diagonal (3, 2, 2, 1, 1), as many
  // below it, and their products (9, 4, 4, 1, 1).
  EXPECT_EQ(lu.block_operations(), 6u + 2 * 9u + 19u);
  lu.block(3, 3)[5] *= 1.0 + 1e-5;
  EXPECT_NE(lu.verify(), "");
  EXPECT_THROW(bots::SparseLu(0, 4), std::invalid_argument);
}

TEST(BotsAlignment, VerificationRefusesAWrongScore) {
  bots::Alignment alignment{6, 20, 40};
  alignment.run_sequential();
  EXPECT_EQ(alignment.verify(), "");
  const int n = alignment.sequence_count();
  for (int length : {alignment.length(0), alignment.length(n - 1)}) {
    EXPECT_GE(length, 20);
    EXPECT_LE(length, 40);
  }
  alignment.scores()[0 * n + 1] += 1;
  EXPECT_NE(alignment.verify(), "");
  alignment.reset();
  EXPECT_NE(alignment.verify(), "");
}

TEST(BotsAlignment, ScoresAnIdenticalPairAtOneHundredAndUsesBotsPenalties) {
  const bots::alignment::ScoreTable table = bots::alignment::gonnet250_times10();
  // BOTS's mean mismatch score of the Gonnet table: -19000 / 231, truncated.
  EXPECT_EQ(bots::alignment::mean_mismatch_penalty(table), 82);
  bots::alignment::Sequence protein{0};
  for (char residue : std::string("MKTAYIAKQRQISFVKSHFSRQ"))
    protein.push_back(
        static_cast<std::uint8_t>(std::string(bots::alignment::amino_acids).find(residue)));
  EXPECT_EQ(bots::alignment::pair_score(protein, protein, table, 82), 100);
  EXPECT_EQ(bots::alignment::pair_score(protein, bots::alignment::Sequence{0}, table, 82), 1);
}

TEST(BotsSort, VerificationRefusesAnUnsortedOrAlteredArray) {
  bots::Sort sort{10007};        // not a multiple of 4: the last quarter is longer
  EXPECT_NE(sort.verify(), "");  // the scrambled input
  sort.run_sequential();
  EXPECT_EQ(sort.verify(), "");
  std::swap(sort.data()[10], sort.data()[9000]);
  EXPECT_NE(sort.verify(), "");
  std::swap(sort.data()[10], sort.data()[9000]);
  sort.data()[500] = 501;  // sorted still, but no longer a permutation
  EXPECT_NE(sort.verify(), "");
  sort.reset();
  EXPECT_NE(sort.verify(), "");
  EXPECT_THROW(bots::Sort{3}, std::invalid_argument);
}

TEST(BotsSort, SortsSizesAroundTheCutOffs) {
  for (std::size_t n : {4u, 19u, 20u, 21u, 2047u, 2048u, 8191u, 8192u, 8193u}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    bots::Sort sort{n};
    sort.run_sequential();
    EXPECT_EQ(sort.verify(), "");
  }
}

TEST(BotsFft, EverySizeMatchesAPlainDftOfItsSpotOutputs) {
  // The reference is the sequential run itself: the plain DFT of a few outputs is what checks the
  // transform, for the base sizes and for every radix.
  for (std::size_t n = 2; n <= 4096; n *= 2) {
    SCOPED_TRACE("n=" + std::to_string(n));
    bots::Fft fft{n};
    fft.run_sequential();
    EXPECT_EQ(fft.verify(), "");
  }
  EXPECT_THROW(bots::Fft{12}, std::invalid_argument);
}

TEST(BotsFft, VerificationRefusesAWrongOutput) {
  bots::Fft fft{1024};
  EXPECT_NE(fft.verify(), "");  // reset output
  fft.run_sequential();
  EXPECT_EQ(fft.verify(), "");
  fft.output()[700].re += 1.0;  // beyond the suite's 1e-3 relative error
  EXPECT_NE(fft.verify(), "");
  fft.output()[700].re -= 1.0;
  EXPECT_EQ(fft.verify(), "");
  // Within the suite's tolerance, but not the plain DFT's: output n / 3 is one of its spots.
  fft.output()[1024 / 3].im *= 1 + 1e-5;
  EXPECT_NE(fft.verify(), "");
}

TEST(BotsStrassen, VerificationRefusesAWrongProduct) {
  bots::Strassen strassen{128, 16};
  EXPECT_NE(strassen.verify(), "");  // reset product
  strassen.run_sequential();
  EXPECT_EQ(strassen.verify(), "");
  strassen.product()[128 * 77 + 3] *= 1 + 1e-5;
  EXPECT_NE(strassen.verify(), "");
  EXPECT_THROW((bots::Strassen{96, 16}), std::invalid_argument);
  EXPECT_THROW((bots::Strassen{64, 8}), std::invalid_argument);
}

TEST(BotsStrassen, EveryDepthMatchesThePlainProduct) {
  // n <= cutoff: the quadrant multiply alone; then one to three Strassen steps above it.
  for (std::size_t n : {16u, 32u, 64u, 128u}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    bots::Strassen strassen{n, 16};
    strassen.run_sequential();
    EXPECT_EQ(strassen.verify(), "");
  }
}

// Tasks are counted by walking the boards with the shared check, apart from the bit-mask count
// the kernel uses.
std::uint64_t boards_with_rows_left(int n, int row, const bots::QueenBoard& board) {
  if (row == n) return 0;
  std::uint64_t boards = 1;
  for (int column = 0; column < n; ++column) {
    bots::QueenBoard next;
    bots::extend_board(board, row, column, next);
    if (bots::queens_compatible(next, row + 1)) boards += boards_with_rows_left(n, row + 1, next);
  }
  return boards;
}

TEST(BotsNQueens, VerificationRefusesAWrongCountAndTasksAreCountedExactly) {
  bots::NQueens queens{6};
  EXPECT_NE(queens.verify(), "");  // nothing ran
  queens.run_sequential();
  EXPECT_EQ(queens.solutions(), 4);
  EXPECT_EQ(queens.verify(), "");
  queens.set_solutions(5);
  EXPECT_NE(queens.verify(), "");
  for (int n : {1, 4, 6, 8})
    EXPECT_EQ(bots::NQueens{n}.tasks(), n * boards_with_rows_left(n, 0, bots::QueenBoard{})) << n;
  EXPECT_THROW(bots::NQueens{0}, std::invalid_argument);
  EXPECT_THROW(bots::NQueens{bots::max_queens + 1}, std::invalid_argument);
}

TEST(BotsFloorplan, FindsTheSuitesAreaForInput5AndRefusesAWrongOne) {
  bots::Floorplan five{5};  // BOTS's input.5, whose minimum area the suite gives
  five.reset();
  five.run_sequential();
  EXPECT_EQ(five.min_area(), 216);
  EXPECT_EQ(five.verify(), "");
  five.set_min_area(217);
  EXPECT_NE(five.verify(), "");
  five.reset();
  EXPECT_NE(five.verify(), "");  // nothing ran
  EXPECT_THROW(bots::Floorplan{16}, std::invalid_argument);
}

TEST(BotsHealth, VerificationRefusesALostCheckInOrAMovedPatient) {
  bots::Health health{bots::health_input("test")};
  health.run_sequential();
  ASSERT_EQ(health.verify(), "");
  bots::Village& leaf = health.world().root.children.front().children.front();
  ASSERT_FALSE(leaf.population.empty());
  bots::Patient* patient = leaf.population.back();
  patient->hospitals_visited += 1;
  EXPECT_NE(health.verify(), "");
  patient->hospitals_visited -= 1;
  leaf.population.pop_back();
  leaf.hospital.waiting.push_back(patient);
  EXPECT_NE(health.verify(), "");
  health.reset();
  EXPECT_NE(health.verify(), "");  // nothing ran
  EXPECT_THROW(bots::health_input("huge"), std::invalid_argument);
}

}  // namespace
