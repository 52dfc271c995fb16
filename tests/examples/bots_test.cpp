// The BOTS kernels of bench/bots: each kernel's own verification after its sequential run and
// after its Versa run on 1, 2, 4 and 8 workers, at the small scale (also under ThreadSanitizer),
// and the verifications themselves refuse a wrong answer.
#include <gtest/gtest.h>

#include <string>

#include "fib.hpp"
#include "support/config.hpp"

namespace {

using versa::testing::workers;

template <class Kernel>
class BotsKernel : public ::testing::Test {};

using Kernels = ::testing::Types<bots::Fib>;

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

}  // namespace
