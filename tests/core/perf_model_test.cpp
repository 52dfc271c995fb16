// The history-based performance model: calibration, the median's robustness, keys, exploration
// claims, and saving to and loading from a file.
#include "core/perf_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "device/device_registry.hpp"
#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "support/temporary_path.hpp"
#include "versa/versa.hpp"

namespace versa::detail {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_support::TemporaryPath;

constexpr int calibration = PerfModel::calibration_samples;

// Writes `text` to the file at `path`.
void write_file(const TemporaryPath& path, const std::string& text) {
  std::ofstream(path.path()) << text;
}

// The files under `directory`, recursively.
std::vector<std::string> files_under(const std::filesystem::path& directory) {
  std::vector<std::string> found;
  if (!std::filesystem::exists(directory)) return found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory))
    if (entry.is_regular_file()) found.push_back(entry.path().string());
  return found;
}

void record_n(PerfModel& model, const char* type, DeviceKind kind, std::size_t bytes,
              double seconds, int n) {
  for (int i = 0; i < n; ++i) model.record(type, kind, bytes, seconds, false);
}

// One run of a kind two orders of magnitude slower than another kind's runs (in time per
// unit of size, whatever the sizes) calibrates it: no more explorations, that run the estimate.
// Closer, or with nothing to compare with, it needs its calibration_samples.
TEST(PerfModelTest, OneRunFarSlowerThanAnotherKindsCalibratesIt) {
  PerfModel model;
  EXPECT_FALSE(model.settle_if_far_slower("potrf", DeviceKind::cpu, DeviceKind::emulated))
      << "no runs of either kind";
  model.record("potrf", DeviceKind::cpu, 1000, 0.5, false);
  EXPECT_FALSE(model.settle_if_far_slower("potrf", DeviceKind::cpu, DeviceKind::emulated))
      << "no run of the fast kind";
  // 0.5 s for 1000 against 2 ms for 800: 200 times the time per unit.
  model.record("potrf", DeviceKind::emulated, 800, 0.002, false);
  EXPECT_FALSE(model.settle_if_far_slower("potrf", DeviceKind::emulated, DeviceKind::cpu))
      << "the fast kind settled";
  EXPECT_EQ(model.explorations("potrf", DeviceKind::emulated), 1);
  EXPECT_TRUE(model.settle_if_far_slower("potrf", DeviceKind::cpu, DeviceKind::emulated));
  EXPECT_EQ(model.explorations("potrf", DeviceKind::cpu), calibration);
  EXPECT_FALSE(model.claim_exploration("potrf", DeviceKind::cpu));
  ASSERT_TRUE(model.estimate("potrf", DeviceKind::cpu, 1000).has_value());
  EXPECT_DOUBLE_EQ(*model.estimate("potrf", DeviceKind::cpu, 1000), 0.5);

  // 50 times: not far enough; and a slowest run of the fast kind is what counts.
  model.record("trsm", DeviceKind::cpu, 1000, 0.1, false);
  model.record("trsm", DeviceKind::emulated, 1000, 0.002, false);
  EXPECT_FALSE(model.settle_if_far_slower("trsm", DeviceKind::cpu, DeviceKind::emulated));
  EXPECT_EQ(model.explorations("trsm", DeviceKind::cpu), 1);
  EXPECT_FALSE(model.estimate("trsm", DeviceKind::cpu, 1000).has_value());
  model.record("gemm", DeviceKind::cpu, 1000, 0.5, false);
  model.record("gemm", DeviceKind::emulated, 1000, 0.001, false);
  model.record("gemm", DeviceKind::emulated, 10, 0.001, false);  // 0.1 ms per unit
  EXPECT_FALSE(model.settle_if_far_slower("gemm", DeviceKind::cpu, DeviceKind::emulated));
}

TEST(PerfModelTest, AReleasedExplorationCanBeClaimedAgain) {
  PerfModel model;
  for (int i = 0; i < PerfModel::calibration_samples; ++i)
    EXPECT_TRUE(model.claim_exploration("potrf", DeviceKind::emulated));
  EXPECT_FALSE(model.claim_exploration("potrf", DeviceKind::emulated));
  EXPECT_EQ(model.explorations("potrf", DeviceKind::emulated), PerfModel::calibration_samples);
  // An explored task failed: its claim comes back, and another task may explore.
  model.release_exploration("potrf", DeviceKind::emulated);
  EXPECT_EQ(model.explorations("potrf", DeviceKind::emulated), PerfModel::calibration_samples - 1);
  EXPECT_TRUE(model.claim_exploration("potrf", DeviceKind::emulated));
  // Releasing what was never claimed changes nothing.
  model.release_exploration("trsm", DeviceKind::cpu);
  EXPECT_EQ(model.explorations("trsm", DeviceKind::cpu), 0);
}

TEST(PerfModelTest, NoEstimateUntilCalibratedThenTheMedian) {
  static_assert(calibration == 3, "the samples below assume three calibration runs");
  PerfModel model;
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 1024), std::nullopt);
  model.record("gemm", DeviceKind::cpu, 1024, 3.0, false);
  model.record("gemm", DeviceKind::cpu, 1024, 1.0, false);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 1024), std::nullopt);
  model.record("gemm", DeviceKind::cpu, 1024, 2.0, false);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 1024), std::optional<double>(2.0));
}

TEST(PerfModelTest, OneOutlierHardlyMovesTheEstimate) {
  PerfModel model;
  for (double seconds : {1.0, 1.1, 0.9, 1.05, 0.95})
    model.record("gemm", DeviceKind::cpu, 64, seconds, false);
  model.record("gemm", DeviceKind::cpu, 64, 100.0, false);  // one preempted run
  const std::optional<double> estimate = model.estimate("gemm", DeviceKind::cpu, 64);
  ASSERT_TRUE(estimate.has_value());
  EXPECT_GE(*estimate, 0.9);
  EXPECT_LE(*estimate, 1.1);
}

TEST(PerfModelTest, OldSamplesLeaveTheWindow) {
  // A kernel that became slower (another job on the machine) is eventually estimated at its new
  // speed: the median is over recent samples only.
  PerfModel model;
  record_n(model, "gemm", DeviceKind::cuda, 64, 1.0, 100);
  record_n(model, "gemm", DeviceKind::cuda, 64, 2.0, 100);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cuda, 64), std::optional<double>(2.0));
}

TEST(PerfModelTest, KeysSeparateTypeDeviceKindAndSize) {
  PerfModel model;
  record_n(model, "gemm", DeviceKind::cpu, 1024, 1.0, calibration);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 1024), std::optional<double>(1.0));
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cuda, 1024), std::nullopt);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::emulated, 1024), std::nullopt);
  EXPECT_EQ(model.estimate("potrf", DeviceKind::cpu, 1024), std::nullopt);
  // Names that are prefixes of each other stay apart.
  EXPECT_EQ(model.estimate("gem", DeviceKind::cpu, 1024), std::nullopt);

  record_n(model, "gemm", DeviceKind::cuda, 1024, 2.0, calibration);
  record_n(model, "gemm", DeviceKind::emulated, 1024, 3.0, calibration);
  record_n(model, "gemm", DeviceKind::cpu, 2048, 4.0, calibration);
  record_n(model, "potrf", DeviceKind::cpu, 1024, 5.0, calibration);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 1024), std::optional<double>(1.0));
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cuda, 1024), std::optional<double>(2.0));
  EXPECT_EQ(model.estimate("gemm", DeviceKind::emulated, 1024), std::optional<double>(3.0));
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 2048), std::optional<double>(4.0));
  EXPECT_EQ(model.estimate("potrf", DeviceKind::cpu, 1024), std::optional<double>(5.0));
}

TEST(PerfModelTest, ASizeWithoutSamplesIsEstimatedFromItsNeighbours) {
  PerfModel model;
  record_n(model, "gemm", DeviceKind::cpu, 1000, 2.0, calibration);
  // One calibrated size: in proportion to it.
  EXPECT_NEAR(*model.estimate("gemm", DeviceKind::cpu, 500), 1.0, 1e-12);
  EXPECT_NEAR(*model.estimate("gemm", DeviceKind::cpu, 3000), 6.0, 1e-12);
  // Two: the power law through them (here time ~ size^2), inside and beyond.
  record_n(model, "gemm", DeviceKind::cpu, 2000, 8.0, calibration);
  EXPECT_NEAR(*model.estimate("gemm", DeviceKind::cpu, 1500), 4.5, 1e-12);
  EXPECT_NEAR(*model.estimate("gemm", DeviceKind::cpu, 4000), 32.0, 1e-12);
  EXPECT_NEAR(*model.estimate("gemm", DeviceKind::cpu, 500), 0.5, 1e-12);
  // A size with samples of its own goes by them once the curve is known.
  model.record("gemm", DeviceKind::cpu, 1500, 7.0, false);
  EXPECT_NEAR(*model.estimate("gemm", DeviceKind::cpu, 1500), 7.0, 1e-12);
  // The exponent is bounded: two nearby noisy sizes do not make a steep extrapolation.
  record_n(model, "trsm", DeviceKind::cpu, 1000, 1.0, calibration);
  record_n(model, "trsm", DeviceKind::cpu, 1001, 2.0, calibration);
  EXPECT_NEAR(*model.estimate("trsm", DeviceKind::cpu, 2002), 16.0, 1e-12);  // 2 x 2^3
  // Other kinds and types are not estimated from it.
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cuda, 1000), std::nullopt);
  EXPECT_EQ(model.estimate("syrk", DeviceKind::cpu, 1000), std::nullopt);
}

TEST(PerfModelTest, TheSpreadIsTheQuartilesOfTheRecentRuns) {
  PerfModel model;
  EXPECT_FALSE(model.estimate_spread("gemm", DeviceKind::cpu, 1000).has_value());
  // Eight runs: sorted 1..8, the quartiles at positions 2, 4 and 6.
  for (double seconds : {8.0, 1.0, 7.0, 2.0, 6.0, 3.0, 5.0, 4.0})
    model.record("gemm", DeviceKind::cpu, 1000, seconds, false);
  const auto own = model.estimate_spread("gemm", DeviceKind::cpu, 1000);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->seconds, 5.0);
  EXPECT_EQ(own->low, 3.0);
  EXPECT_EQ(own->high, 7.0);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 1000), std::optional<double>(5.0));
  // A size without samples: the nearest size's spread, in proportion to the estimate.
  const auto half = model.estimate_spread("gemm", DeviceKind::cpu, 500);
  ASSERT_TRUE(half.has_value());
  EXPECT_NEAR(half->seconds, 2.5, 1e-12);
  EXPECT_NEAR(half->low, 1.5, 1e-12);
  EXPECT_NEAR(half->high, 3.5, 1e-12);
  // Runs that all took the same: no spread.
  record_n(model, "trsm", DeviceKind::cuda, 64, 2.0, calibration);
  const auto same = model.estimate_spread("trsm", DeviceKind::cuda, 64);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->low, 2.0);
  EXPECT_EQ(same->high, 2.0);
}

TEST(PerfModelTest, TasksOfAllDifferentSizesCalibrateTogether) {
  // An FMM's tasks each have an interaction count of their own: no size ever repeats, and the
  // curve must calibrate from one sample of each.
  static_assert(calibration == 3, "the samples below assume three calibration runs");
  PerfModel model;
  EXPECT_TRUE(model.claim_exploration("p2p", DeviceKind::cuda));
  model.record("p2p", DeviceKind::cuda, 1000, 1.0, true);
  EXPECT_TRUE(model.claim_exploration("p2p", DeviceKind::cuda));
  model.record("p2p", DeviceKind::cuda, 4000, 4.0, true);
  EXPECT_EQ(model.estimate("p2p", DeviceKind::cuda, 2000), std::nullopt);
  EXPECT_EQ(model.explorations("p2p", DeviceKind::cuda), 2);
  EXPECT_TRUE(model.claim_exploration("p2p", DeviceKind::cuda));
  EXPECT_FALSE(model.claim_exploration("p2p", DeviceKind::cuda));
  model.record("p2p", DeviceKind::cuda, 16000, 16.0, true);
  EXPECT_EQ(model.explorations("p2p", DeviceKind::cuda), calibration);
  EXPECT_FALSE(model.claim_exploration("p2p", DeviceKind::cuda));
  EXPECT_NEAR(*model.estimate("p2p", DeviceKind::cuda, 2000), 2.0, 1e-12);
  EXPECT_NEAR(*model.estimate("p2p", DeviceKind::cuda, 8000), 8.0, 1e-12);
  EXPECT_NEAR(*model.estimate("p2p", DeviceKind::cuda, 32000), 32.0, 1e-12);
  // Saved and loaded, the samples of each size still count towards the curve's calibration.
  const TemporaryPath file("distinct_sizes.txt");
  ASSERT_EQ(model.save(file.string()), "");
  PerfModel loaded;
  loaded.load(file.string());
  EXPECT_NEAR(*loaded.estimate("p2p", DeviceKind::cuda, 8000), 8.0, 1e-12);
  EXPECT_FALSE(loaded.claim_exploration("p2p", DeviceKind::cuda));
}

TEST(PerfModelTest, SizesEstimatedFromOthersAreNotExplored) {
  PerfModel model;
  ASSERT_TRUE(model.claim_exploration("potrf", DeviceKind::cpu));
  ASSERT_TRUE(model.claim_exploration("potrf", DeviceKind::cpu));  // an edge tile
  for (int i = 0; i < calibration; ++i) model.record("potrf", DeviceKind::cpu, 1000, 1.0, i == 0);
  EXPECT_FALSE(model.claim_exploration("potrf", DeviceKind::cpu));
  EXPECT_EQ(model.explorations("potrf", DeviceKind::cpu), calibration);
  // The claim made before the curve was known is still recorded or given back as usual.
  model.record("potrf", DeviceKind::cpu, 300, 0.25, true);
  EXPECT_NEAR(*model.estimate("potrf", DeviceKind::cpu, 300), 0.25, 1e-12);
}

TEST(PerfModelTest, ExplorationIsClaimedUntilEnoughRunsAreUnderWay) {
  PerfModel model;
  for (int i = 0; i < calibration; ++i)
    EXPECT_TRUE(model.claim_exploration("gemm", DeviceKind::cuda)) << "claim " << i;
  EXPECT_FALSE(model.claim_exploration("gemm", DeviceKind::cuda));
  // Claims of one combination do not use up another's.
  EXPECT_TRUE(model.claim_exploration("gemm", DeviceKind::cpu));
}

TEST(PerfModelTest, RecordingAnExploredRunReleasesItsClaim) {
  PerfModel model;
  ASSERT_TRUE(model.claim_exploration("gemm", DeviceKind::cuda));
  ASSERT_TRUE(model.claim_exploration("gemm", DeviceKind::cuda));
  // One claimed run lands: one sample and one claim in flight, so one more may be claimed.
  model.record("gemm", DeviceKind::cuda, 64, 1.0, true);
  EXPECT_TRUE(model.claim_exploration("gemm", DeviceKind::cuda));
  EXPECT_FALSE(model.claim_exploration("gemm", DeviceKind::cuda));
  model.record("gemm", DeviceKind::cuda, 64, 1.0, true);
  model.record("gemm", DeviceKind::cuda, 64, 1.0, true);
  // Calibrated: never explored again.
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cuda, 64), std::optional<double>(1.0));
  EXPECT_FALSE(model.claim_exploration("gemm", DeviceKind::cuda));
}

TEST(PerfModelTest, RecordingAnUnclaimedRunKeepsTheClaims) {
  PerfModel model;
  ASSERT_TRUE(model.claim_exploration("gemm", DeviceKind::cuda));
  ASSERT_TRUE(model.claim_exploration("gemm", DeviceKind::cuda));
  // A run placed there by the policy for other reasons adds a sample; both claims still stand.
  model.record("gemm", DeviceKind::cuda, 64, 1.0, false);
  EXPECT_FALSE(model.claim_exploration("gemm", DeviceKind::cuda));
}

TEST(PerfModelTest, SaveThenLoadGivesTheSameEstimates) {
  const TemporaryPath file("roundtrip.txt");
  PerfModel saved;
  // Medians with few significant digits, so the comparison can be exact.
  record_n(saved, "gemm", DeviceKind::cpu, 1 << 20, 0.0015, calibration);
  record_n(saved, "gemm", DeviceKind::cuda, 1 << 20, 2.5e-5, 5);
  record_n(saved, "potrf with spaces", DeviceKind::emulated, 4096, 0.25, 20);
  saved.record("trsm", DeviceKind::cuda, 64, 1.0, false);  // not yet calibrated
  ASSERT_EQ(saved.save(file.string()), "");

  PerfModel loaded;
  loaded.load(file.string());
  for (const auto& [type, kind, bytes] :
       {std::tuple{"gemm", DeviceKind::cpu, std::size_t{1} << 20},
        std::tuple{"gemm", DeviceKind::cuda, std::size_t{1} << 20},
        std::tuple{"potrf with spaces", DeviceKind::emulated, std::size_t{4096}}}) {
    const std::optional<double> expected = saved.estimate(type, kind, bytes);
    ASSERT_TRUE(expected.has_value()) << type;
    EXPECT_EQ(loaded.estimate(type, kind, bytes), expected)
        << type << " " << versa::detail::device_kind_name(kind);
  }
  // The sample count is kept: one sample loaded, two more runs to explore.
  EXPECT_EQ(loaded.estimate("trsm", DeviceKind::cuda, 64), std::nullopt);
  EXPECT_TRUE(loaded.claim_exploration("trsm", DeviceKind::cuda));
  EXPECT_TRUE(loaded.claim_exploration("trsm", DeviceKind::cuda));
  EXPECT_FALSE(loaded.claim_exploration("trsm", DeviceKind::cuda));
  // Nothing else appeared.
  EXPECT_EQ(loaded.estimate("gemm", DeviceKind::emulated, std::size_t{1} << 20), std::nullopt);
}

TEST(PerfModelTest, SaveThenLoadKeepsEstimatesToAFewSignificantDigits) {
  const TemporaryPath file("precision.txt");
  PerfModel saved;
  const double seconds = 1.0 / 3.0 * 1e-4;
  record_n(saved, "gemm", DeviceKind::cuda, 64, seconds, calibration);
  ASSERT_EQ(saved.save(file.string()), "");
  PerfModel loaded;
  loaded.load(file.string());
  const std::optional<double> estimate = loaded.estimate("gemm", DeviceKind::cuda, 64);
  ASSERT_TRUE(estimate.has_value());
  EXPECT_NEAR(*estimate, seconds, seconds * 1e-5);
}

TEST(PerfModelTest, LoadingAMissingFileDoesNothing) {
  const TemporaryPath file("missing.txt");
  PerfModel model;
  record_n(model, "gemm", DeviceKind::cpu, 64, 1.0, calibration);
  EXPECT_NO_THROW(model.load(file.string()));
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 64), std::optional<double>(1.0));
}

struct MalformedLine {
  const char* name;
  const char* line;
};

class PerfModelMalformedTest : public ::testing::TestWithParam<MalformedLine> {};

TEST_P(PerfModelMalformedTest, ThrowsNamingTheFileAndLine) {
  const TemporaryPath file(std::string("malformed_") + GetParam().name + ".txt");
  // A comment and a good entry come first, so the bad line is line 3.
  write_file(file, std::string("# versa performance model\n") + "gemm\tcpu\t64 0.5 3\n" +
                       GetParam().line + "\n");
  PerfModel model;
  try {
    model.load(file.string());
    FAIL() << "no exception for '" << GetParam().line << "'";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
    EXPECT_THAT(e.what(), HasSubstr("line 3:"));
  }
}

INSTANTIATE_TEST_SUITE_P(PerfModel, PerfModelMalformedTest,
                         ::testing::Values(MalformedLine{"unknown_kind", "gemm\tgpu\t64 0.5 3"},
                                           MalformedLine{"no_tabs", "gemm cpu 64 0.5 3"},
                                           MalformedLine{"missing_count", "gemm\tcpu\t64 0.5"},
                                           MalformedLine{"not_a_number", "gemm\tcpu\t64 fast 3"},
                                           MalformedLine{"negative_time", "gemm\tcpu\t64 -1 3"},
                                           MalformedLine{"no_samples", "gemm\tcpu\t64 0.5 0"}),
                         [](const ::testing::TestParamInfo<MalformedLine>& info) {
                           return info.param.name;
                         });

TEST(PerfModelTest, AMalformedFileChangesNothing) {
  const TemporaryPath file("malformed_changes_nothing.txt");
  // A good entry first: it is not applied either.
  write_file(file, "trsm\tcpu\t64 0.5 3\ngemm\tcpu\t64 fast 3\n");
  PerfModel model;
  record_n(model, "gemm", DeviceKind::cpu, 64, 1.0, calibration);
  EXPECT_THROW(model.load(file.string()), std::runtime_error);
  EXPECT_EQ(model.estimate("gemm", DeviceKind::cpu, 64), std::optional<double>(1.0));
  EXPECT_EQ(model.estimate("trsm", DeviceKind::cpu, 64), std::nullopt);
}

TEST(PerfModelTest, SaveMakesTheDirectoryAndLeavesOnlyTheFile) {
  const TemporaryPath directory("save_directory");
  const std::string file = (directory.path() / "perf-model" / "host" / "program").string();
  PerfModel saved;
  record_n(saved, "gemm", DeviceKind::cuda, 64, 0.25, calibration);
  ASSERT_EQ(saved.save(file), "");
  EXPECT_EQ(files_under(directory.path()), std::vector<std::string>{file});
  PerfModel loaded;
  EXPECT_EQ(loaded.load(file), 1);
  EXPECT_EQ(loaded.estimate("gemm", DeviceKind::cuda, 64), std::optional<double>(0.25));
}

TEST(PerfModelTest, AFileThatCannotBeWrittenIsReported) {
  const TemporaryPath directory("unwritable");
  std::filesystem::create_directories(directory.path() / "model");  // a directory in its place
  PerfModel model;
  record_n(model, "gemm", DeviceKind::cuda, 64, 0.25, calibration);
  EXPECT_THAT(model.save((directory.path() / "model").string()), HasSubstr("model"));
  EXPECT_TRUE(std::filesystem::is_directory(directory.path() / "model"));
  EXPECT_EQ(files_under(directory.path()), std::vector<std::string>{}) << "nothing left aside";
}

// Sizes that differ from run to run would grow a kept file without end: a (type, kind) keeps
// saved_sizes of them, the smallest and the largest among them, and still estimates between.
TEST(PerfModelTest, ASavedCurveKeepsAtMostSavedSizesOverItsWholeRange) {
  const TemporaryPath file("many_sizes.txt");
  PerfModel saved;
  const std::size_t sizes = 3 * PerfModel::saved_sizes;
  for (std::size_t size = 1; size <= sizes; ++size)
    saved.record("p2p", DeviceKind::cuda, 1000 * size, 1e-3 * static_cast<double>(size), false);
  record_n(saved, "m2l", DeviceKind::cuda, 64, 0.5, calibration);
  ASSERT_EQ(saved.save(file.string()), "");
  PerfModel loaded;
  EXPECT_EQ(loaded.load(file.string()), static_cast<int>(PerfModel::saved_sizes) + 1);
  std::ifstream in(file.string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("p2p\tcuda\t1000 "));
  EXPECT_THAT(text, HasSubstr("p2p\tcuda\t" + std::to_string(1000 * sizes) + " "));
  EXPECT_NEAR(*loaded.estimate("p2p", DeviceKind::cuda, 1000 * sizes / 2),
              *saved.estimate("p2p", DeviceKind::cuda, 1000 * sizes / 2), 1e-9);
  EXPECT_EQ(loaded.estimate("m2l", DeviceKind::cuda, 64), std::optional<double>(0.5));
}

// With a GPU the model is kept in the machine's cache unless told otherwise; without one,
// only where the program says.
TEST(PerfModelTest, TheFileKeptIsTheConfiguredOneElseTheCacheWithAGpu) {
  const testing_support::ScopedEnvironment cache("XDG_CACHE_HOME", "/cache");
  EXPECT_EQ(PerfModel::file_to_keep("model.txt", false), "model.txt");
  EXPECT_EQ(PerfModel::file_to_keep("model.txt", true), "model.txt");
  EXPECT_EQ(PerfModel::file_to_keep("none", true), "");
  EXPECT_EQ(PerfModel::file_to_keep("", false), "");
  EXPECT_EQ(PerfModel::file_to_keep("", true), PerfModel::default_file());
}

// Per user (the cache directory), per machine (the host name) and per program.
TEST(PerfModelTest, TheDefaultFileIsPerMachineAndPerProgramInTheUsersCache) {
  std::array<char, 256> host{};
  ASSERT_EQ(::gethostname(host.data(), host.size() - 1), 0);
  const std::string where = std::string("/perf-model/") + host.data() + "/versa_tests";
  {
    const testing_support::ScopedEnvironment cache("XDG_CACHE_HOME", "/cache");
    EXPECT_EQ(PerfModel::default_file(), "/cache/versa" + where);
  }
  {
    const testing_support::ScopedEnvironment cache("XDG_CACHE_HOME", "");
    const testing_support::ScopedEnvironment home("HOME", "/home/user");
    EXPECT_EQ(PerfModel::default_file(), "/home/user/.cache/versa" + where);
  }
  const testing_support::ScopedEnvironment cache("XDG_CACHE_HOME", nullptr);
  const testing_support::ScopedEnvironment home("HOME", nullptr);
  EXPECT_EQ(PerfModel::default_file(), "");
}

// What a run keeps, the next one reads, and the start-up summary says so; without a GPU and
// without a file named, nothing is kept anywhere.
TEST(PerfModelTest, ARuntimeReadsTheModelItKeptAndNamesItsFile) {
  const TemporaryPath cache("runtime_cache");
  const testing_support::ScopedEnvironment xdg("XDG_CACHE_HOME", cache.path().c_str());
  const testing_support::ScopedEnvironment variable("VERSA_PERF_MODEL", nullptr);
  const TemporaryPath file("kept_by_a_runtime.txt");
  const auto run = [](const std::string& model_file) {
    Config config = versa::testing::workers(1);  // no GPU, even where one is present
    config.emulated_devices.resize(1);
    config.perf_model_file = model_file;
    Runtime rt{config};
    std::vector<double> x(64);
    auto h = rt.data(x);
    auto add = task_type("add_one").cpu([](Span<double> v) { v[0] += 1; });
    for (int i = 0; i < 8; ++i) rt.submit(add, write(h));
    rt.wait_all();
    return rt.topology_summary();
  };
  EXPECT_THAT(run(file.string()), HasSubstr("performance model " + file.string() + " (new)"));
  EXPECT_THAT(run(file.string()), ContainsRegex("performance model " + file.string() +
                                                " \\([1-9][0-9]* entries read\\)"));
  EXPECT_THAT(run(""), Not(HasSubstr("performance model")));
  EXPECT_THAT(run("none"), Not(HasSubstr("performance model")));
  EXPECT_EQ(files_under(cache.path()), std::vector<std::string>{});
}

TEST(PerfModelTest, AMalformedFileNamedByTheProgramStopsTheRuntime) {
  const TemporaryPath file("malformed_for_a_runtime.txt");
  write_file(file, "gemm\tcpu\t64 fast 3\n");
  Config config = versa::testing::workers(1);
  config.emulated_devices.resize(1);
  config.perf_model_file = file.string();
  try {
    Runtime rt{config};
    FAIL() << "the runtime started";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
    EXPECT_THAT(e.what(), HasSubstr("line 1:"));
  }
}

// The runtime keys the model on a task's work hint: the type's (TaskType::work), or the one
// given at submit (versa::work), else the bytes of its data. Seen in the saved model.
TEST(WorkHintTest, ThePerformanceModelKeysOnTheWorkHint) {
  const TemporaryPath file("work_hints");
  {
    Config config;
    config.cpu_workers = 1;
    config.pin_workers = false;
    config.quiet = true;
    config.emulated_devices.resize(1);
    config.perf_model_file = file.string();
    Runtime rt{config};
    std::vector<double> x(16), y(48);
    auto hx = rt.data(x), hy = rt.data(y);
    auto scale =
        task_type("scale").cpu([](Span<double> v) { v[0] += 1; }).work([](const Shapes& s) {
          return 1000.0 * s.rows(0);
        });
    for (int i = 0; i < 4; ++i) {
      rt.submit(scale, write(hx));  // 16 000
      rt.submit(scale, write(hy));  // 48 000
      rt.submit(scale, write(hy), work(7));
    }
    rt.submit(
        "untyped", [](Span<double> v) { v[0] += 1; }, write(hx));  // 128 bytes
    rt.wait_all();
  }
  std::ifstream in(file.string());
  const std::string saved((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Each size under whichever kind ran it (once a kind is calibrated, placement chooses).
  EXPECT_THAT(saved, ContainsRegex("scale\t(cpu|emulated)\t16000 "));
  EXPECT_THAT(saved, ContainsRegex("scale\t(cpu|emulated)\t48000 "));
  EXPECT_THAT(saved, ContainsRegex("scale\t(cpu|emulated)\t7 "));
  EXPECT_THAT(saved, HasSubstr("untyped\tcpu\t128 "));
}

}  // namespace
}  // namespace versa::detail
