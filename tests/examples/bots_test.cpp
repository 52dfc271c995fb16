// The BOTS kernels of bench/bots: each kernel's own verification after its sequential run and
// after its Versa run on 1, 2, 4 and 8 workers, at the small scale (also under ThreadSanitizer),
// and the verifications themselves refuse a wrong answer.
#include <gtest/gtest.h>

#include <string>

#include "fib.hpp"
#include "floorplan.hpp"
#include "health.hpp"
#include "nqueens.hpp"
#include "support/config.hpp"

namespace {

using versa::testing::workers;

template <class Kernel>
class BotsKernel : public ::testing::Test {};

using Kernels = ::testing::Types<bots::Fib, bots::NQueens, bots::Floorplan, bots::Health>;

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

TYPED_TEST(BotsKernel, VersaRunPassesItsVerificationOn1To8Workers) {
  for (int worker_count : {1, 2, 4, 8}) {
    SCOPED_TRACE(std::to_string(worker_count) + " workers");
    TypeParam kernel{bots::Scale::small};
    versa::Runtime rt{workers(worker_count)};
    for (int run = 0; run < 2; ++run) {  // a second run on a reset input
      kernel.reset();
      kernel.run_versa(rt);
      EXPECT_EQ(kernel.verify(), "");
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
