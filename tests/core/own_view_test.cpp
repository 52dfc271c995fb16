// A thread that holds a view from acquire() and then waits for work that waits for that view
// would wait for itself: wait_all() and a second acquire() refuse with an error that names the
// handle instead of hanging, and lose nothing (the tasks run once the view is released). Where
// the wait does not depend on the view, they wait as usual.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/config.hpp"
#include "support/eventually.hpp"
#include "support/message_of.hpp"
#include "versa/versa.hpp"

namespace {

using namespace std::chrono_literals;
using testing::AllOf;
using testing::HasSubstr;
using versa::testing::deferring;
using versa::testing::eventually;
using versa::testing::message_of;
using versa::testing::workers;

struct OwnViewCase {
  int workers;
  bool defer;  // registration handed to idle workers (Config::defer_registration)
};

class OwnView : public testing::TestWithParam<OwnViewCase> {
 protected:
  static versa::Config config() {
    const versa::Config base = workers(GetParam().workers);
    return GetParam().defer ? deferring(base) : base;
  }
  versa::Runtime rt{config()};
};

TEST_P(OwnView, WaitAllRefusesWhileALaterWriterWaitsForTheView) {
  int x = 1;
  auto h = rt.data(x, "held");
  auto view = rt.acquire(versa::read(h));
  rt.submit(
      "double", [](versa::Span<int> v) { v[0] *= 2; }, versa::write(h));
  EXPECT_THAT(message_of<std::logic_error>([&] { rt.wait_all(); }),
              AllOf(HasSubstr("wait_all()"), HasSubstr("'held'"), HasSubstr("acquire(read)")));
  EXPECT_EQ(view[0], 1);  // the writer still waits
  view.release();
  rt.wait_all();
  EXPECT_EQ(x, 2);
}

// The write_only is renamed and runs at once, but its result comes home over the viewed memory:
// bringing it home waits for the view.
TEST_P(OwnView, WaitAllRefusesWhileARenamedWriteWaitsToComeHome) {
  std::vector<int> data(8, 1);
  auto h = rt.data(data, "renamed");
  auto view = rt.acquire(versa::read(h));
  std::atomic<bool> wrote{false};
  rt.submit(
      "set",
      [&](versa::Span<int> v) {
        for (int& e : v) e = 5;
        wrote = true;
      },
      versa::write_only(h));
  EXPECT_THAT(message_of<std::logic_error>([&] { rt.wait_all(); }), HasSubstr("'renamed'"));
  EXPECT_EQ(view[0], 1);
  view.release();
  rt.wait_all();
  EXPECT_TRUE(wrote.load());
  EXPECT_EQ(data, std::vector<int>(8, 5));
}

TEST_P(OwnView, WaitAllWaitsAsUsualForReadersBesideAReadView) {
  int x = 3;
  auto h = rt.data(x, "shared");
  auto view = rt.acquire(versa::read(h));
  std::atomic<int> seen{0};
  for (int i = 0; i < 4; ++i)
    rt.submit(
        "reader", [&](versa::Span<const int> v) { seen += v[0]; }, versa::read(h));
  rt.wait_all();
  EXPECT_EQ(seen.load(), 12);
  EXPECT_EQ(view[0], 3);
}

TEST_P(OwnView, WaitAllWaitsAsUsualForTasksOnOtherHandles) {
  int x = 0;
  int y = 0;
  auto hx = rt.data(x, "x");
  auto hy = rt.data(y, "y");
  auto view = rt.acquire(versa::write(hx));
  rt.submit(
      "other", [](versa::Span<int> v) { v[0] = 9; }, versa::write(hy));
  rt.wait_all();
  EXPECT_EQ(y, 9);
  view[0] = 4;
  view.release();
  rt.wait_all();
  EXPECT_EQ(x, 4);
}

// sync() waits for spawned children only, not for a submitted task behind the view.
TEST_P(OwnView, SyncIsNotRefusedForASubmittedTaskBehindTheView) {
  int x = 1;
  auto h = rt.data(x, "held");
  auto view = rt.acquire(versa::write(h));
  std::atomic<int> seen{0};
  rt.submit(
      "reader", [&](versa::Span<const int> v) { seen = v[0]; }, versa::read(h));
  rt.sync();
  view[0] = 8;
  view.release();
  rt.wait_all();
  EXPECT_EQ(seen.load(), 8);
}

TEST_P(OwnView, AcquireRefusesAnAccessThatWaitsForTheThreadsOwnView) {
  int x = 1;
  auto h = rt.data(x, "held");
  auto view = rt.acquire(versa::read(h));
  EXPECT_THAT(message_of<std::logic_error>([&] { (void)rt.acquire(versa::write(h)); }),
              AllOf(HasSubstr("acquire(write)"), HasSubstr("'held'"), HasSubstr("acquire(read)")));
  {
    auto second = rt.acquire(versa::read(h));  // a second reader does not wait for the first
    EXPECT_EQ(second[0], 1);
  }
  // A writer registered after the view is ahead of any later reader: a read now waits for it.
  rt.submit(
      "writer", [](versa::Span<int> v) { v[0] = 2; }, versa::write(h));
  EXPECT_THAT(message_of<std::logic_error>([&] { (void)rt.acquire(versa::read(h)); }),
              HasSubstr("'held'"));
  view.release();
  EXPECT_EQ(rt.acquire(versa::read(h))[0], 2);
}

// A view held by another thread is released there: the program's wait is not refused.
TEST_P(OwnView, WaitAllWaitsForAViewAnotherThreadHolds) {
  int x = 1;
  auto h = rt.data(x, "elsewhere");
  std::atomic<bool> opened{false};
  std::atomic<bool> go{false};
  std::thread holder([&] {
    auto view = rt.acquire(versa::write(h));
    opened = true;
    eventually(go);
    std::this_thread::sleep_for(10ms);
    view[0] = 10;
  });
  ASSERT_TRUE(eventually(opened));
  rt.submit(
      "increment", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
  go = true;
  rt.wait_all();
  holder.join();
  EXPECT_EQ(x, 11);
}

// On an emulated device: the renamed result is on the device and comes home over the viewed
// memory, unless the handle does not write back, where it stays on the device and wait_all
// does not wait for the view.
TEST(OwnViewOnDevices, WaitAllRefusesOnlyWhereTheRenamedResultComesHome) {
  versa::Runtime rt{versa::testing::with_emulated(workers(2), 1)};
  for (const bool write_back : {true, false}) {
    std::vector<int> data(8, 1);
    auto h = rt.data(data, "device result");
    h.set_write_back(write_back);
    auto view = rt.acquire(versa::read(h));
    rt.submit(
        "set",
        [](versa::Span<int> v) {
          for (int& e : v) e = 6;
        },
        versa::placement(versa::Placement::gpu_only), versa::write_only(h));
    if (write_back) {
      EXPECT_THAT(message_of<std::logic_error>([&] { rt.wait_all(); }), HasSubstr("write_only"));
    } else {
      rt.wait_all();
    }
    EXPECT_EQ(view[0], 1);
    view.release();
    rt.wait_all();
    EXPECT_EQ(rt.acquire(versa::read(h))[0], 6);
    EXPECT_EQ(data[0], 6);  // acquire brings it home in either case
  }
}

INSTANTIATE_TEST_SUITE_P(Workers, OwnView,
                         testing::Values(OwnViewCase{1, false}, OwnViewCase{2, false},
                                         OwnViewCase{4, false}, OwnViewCase{2, true}),
                         [](const testing::TestParamInfo<OwnViewCase>& info) {
                           return std::to_string(info.param.workers) +
                                  (info.param.defer ? "_deferring" : "");
                         });

}  // namespace
