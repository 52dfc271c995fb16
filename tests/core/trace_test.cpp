// The Chrome trace-event file (DESIGN.md section 7): written when the runtime is destroyed if
// Config::trace_file or VERSA_TRACE names it, with one track per worker and one slice per task
// that ran; nothing is written when tracing is off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/config.hpp"
#include "support/scoped_environment.hpp"
#include "versa/versa.hpp"

namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;
using versa::testing_support::ScopedEnvironment;

using versa::testing::workers;

// A path in the temporary directory unique to this process, test and tag; removed on
// destruction.
class TemporaryPath {
 public:
  explicit TemporaryPath(const std::string& tag) {
    const auto* test = testing::UnitTest::GetInstance()->current_test_info();
    std::string name =
        std::string("versa_") + test->name() + "_" + tag + "_" + std::to_string(getpid());
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    path_ = fs::temp_directory_path() / name;
    fs::remove_all(path_);
  }
  ~TemporaryPath() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Makes `directory` the working directory for the lifetime of the object.
class ScopedWorkingDirectory {
 public:
  explicit ScopedWorkingDirectory(const fs::path& directory) : previous_(fs::current_path()) {
    fs::current_path(directory);
  }
  ~ScopedWorkingDirectory() { fs::current_path(previous_); }
  ScopedWorkingDirectory(const ScopedWorkingDirectory&) = delete;
  ScopedWorkingDirectory& operator=(const ScopedWorkingDirectory&) = delete;

 private:
  fs::path previous_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t occurrences(std::string_view text, std::string_view pattern) {
  std::size_t count = 0;
  for (std::size_t at = text.find(pattern); at != std::string_view::npos;
       at = text.find(pattern, at + pattern.size()))
    ++count;
  return count;
}

// A strict recogniser of JSON (RFC 8259) text: enough to tell that a trace viewer will parse
// the file, without a JSON library.
class JsonRecogniser {
 public:
  explicit JsonRecogniser(std::string_view text) : text_(text) {}

  bool valid() {
    skip_space();
    if (!value()) return false;
    skip_space();
    return at_ == text_.size();
  }

 private:
  bool value() {
    if (at_ >= text_.size()) return false;
    switch (text_[at_]) {
      case '{':
        return sequence('}', true);
      case '[':
        return sequence(']', false);
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  // An object (members "key": value) or an array, after its opening bracket.
  bool sequence(char close, bool members) {
    ++at_;
    skip_space();
    if (peek() == close) return ++at_, true;
    for (;;) {
      skip_space();
      if (members) {
        if (peek() != '"' || !string()) return false;
        skip_space();
        if (peek() != ':') return false;
        ++at_;
        skip_space();
      }
      if (!value()) return false;
      skip_space();
      if (peek() == close) return ++at_, true;
      if (peek() != ',') return false;
      ++at_;
    }
  }

  bool string() {
    ++at_;
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') continue;
      if (at_ >= text_.size()) return false;
      const char escaped = text_[at_++];
      if (escaped == 'u') {
        for (int i = 0; i < 4; ++i, ++at_)
          if (at_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[at_])))
            return false;
      } else if (std::string_view("\"\\/bfnrt").find(escaped) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }

  bool number() {
    const std::size_t start = at_;
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (!digits()) {
      return false;
    }
    if (peek() == '.') {
      ++at_;
      if (!digits()) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!digits()) return false;
    }
    return at_ > start;
  }

  bool digits() {
    const std::size_t start = at_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++at_;
    return at_ > start;
  }

  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  void skip_space() {
    while (at_ < text_.size() &&
           std::string_view(" \t\n\r").find(text_[at_]) != std::string_view::npos)
      ++at_;
  }

  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }

  std::string_view text_;
  std::size_t at_ = 0;
};

bool is_json(std::string_view text) { return JsonRecogniser(text).valid(); }

// The "tid" of every complete ("ph":"X") event; the writer puts one event per line.
std::vector<long> slice_threads(const std::string& trace) {
  std::vector<long> threads;
  std::istringstream lines(trace);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(R"("ph":"X")") == std::string::npos) continue;
    const std::size_t tid = line.find(R"("tid":)");
    threads.push_back(tid == std::string::npos ? -1
                                               : std::strtol(line.c_str() + tid + 6, nullptr, 10));
  }
  return threads;
}

class TraceTest : public testing::TestWithParam<int> {
 protected:
  // VERSA_TRACE would redirect every trace of these tests.
  ScopedEnvironment no_trace_override_{"VERSA_TRACE", nullptr};
};

TEST(TraceJsonRecogniserTest, TellsJsonFromNonJson) {
  EXPECT_TRUE(is_json(R"({"a":[1,-2.5e3,"x\"y",true,null,{}],"b":{"c":[]}})"));
  EXPECT_FALSE(is_json(R"({"a":1,})"));
  EXPECT_FALSE(is_json(R"({"a" 1})"));
  EXPECT_FALSE(is_json(R"({"a":"unterminated})"));
  EXPECT_FALSE(is_json(R"(["bad \q escape"])"));
  EXPECT_FALSE(is_json(R"([01])"));
  EXPECT_FALSE(is_json(R"([1] [2])"));
}

TEST_P(TraceTest, FileHasOneSlicePerTaskRunAndOneTrackPerWorker) {
  const TemporaryPath trace("trace.json");
  constexpr int alphas = 30;
  constexpr int betas = 20;
  {
    versa::Config config = workers(GetParam());
    config.trace_file = trace.path().string();
    versa::Runtime rt{config};
    auto alpha = versa::task_type("alpha").cpu([](versa::Span<int> v) { ++v[0]; });
    auto beta = versa::task_type("beta").cpu([](versa::Span<const int> v) { (void)v[0]; });
    int x = 0;
    auto h = rt.data(x, "x");
    for (int i = 0; i < alphas; ++i) {
      rt.submit(alpha, versa::write(h));
      if (i < betas) rt.submit(beta, versa::read(h));
    }
    rt.submit(
        "one-off", [] {}, versa::name("custom"));
    rt.submit(
        "one-off", [] {}, versa::name("quote \" backslash \\ newline \n end"));
    rt.wait_all();
    EXPECT_EQ(x, alphas);
    EXPECT_FALSE(fs::exists(trace.path())) << "the trace is written when the runtime is destroyed";
  }
  ASSERT_TRUE(fs::exists(trace.path()));
  const std::string text = read_file(trace.path());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.front(), '{');
  EXPECT_TRUE(is_json(text)) << text.substr(0, 2000);
  EXPECT_THAT(text, HasSubstr(R"("traceEvents")"));
  EXPECT_EQ(occurrences(text, R"("ph":"X")"), static_cast<std::size_t>(alphas + betas + 2));
  EXPECT_EQ(occurrences(text, R"("name":"alpha")"), static_cast<std::size_t>(alphas));
  EXPECT_EQ(occurrences(text, R"("name":"beta")"), static_cast<std::size_t>(betas));
  EXPECT_EQ(occurrences(text, R"("name":"custom")"), 1u);
  EXPECT_EQ(occurrences(text, R"("name":"quote \" backslash \\ newline \n end")"), 1u);
  EXPECT_EQ(occurrences(text, "one-off"), 0u) << "versa::name() replaces the task's name";
  EXPECT_EQ(occurrences(text, R"("name":"thread_name")"), static_cast<std::size_t>(GetParam()));
  for (const long tid : slice_threads(text)) {
    EXPECT_GE(tid, 0);
    EXPECT_LT(tid, GetParam());
  }
}

TEST_P(TraceTest, FailedTasksHaveASliceAndCancelledTasksHaveNone) {
  const TemporaryPath trace("trace.json");
  {
    versa::Config config = workers(GetParam());
    config.trace_file = trace.path().string();
    versa::Runtime rt{config};
    int x = 0;
    auto h = rt.data(x, "x");
    rt.submit(
        "explode", [](versa::Span<int>) { throw std::runtime_error("boom"); }, versa::write(h));
    rt.submit(
        "cancelled", [](versa::Span<const int>) {}, versa::read(h));
    rt.submit(
        "cancelled", [](versa::Span<int>) {}, versa::write(h));
    EXPECT_THROW(rt.wait_all(), versa::TaskFailure);
  }
  const std::string text = read_file(trace.path());
  EXPECT_TRUE(is_json(text));
  EXPECT_EQ(occurrences(text, R"("ph":"X")"), 1u);
  EXPECT_EQ(occurrences(text, R"("name":"explode")"), 1u);
  EXPECT_EQ(occurrences(text, "cancelled"), 0u);
}

TEST_P(TraceTest, VersaTraceEnvironmentVariableSwitchesTracingOnAndOverridesTheConfig) {
  const TemporaryPath from_environment("environment.json");
  const TemporaryPath from_config("config.json");
  constexpr int tasks = 10;
  {
    const ScopedEnvironment trace_variable("VERSA_TRACE", from_environment.path().c_str());
    versa::Runtime plain{workers(GetParam())};
    for (int i = 0; i < tasks; ++i) plain.submit("env task", [] {});
    plain.wait_all();

    versa::Config config = workers(GetParam());
    config.trace_file = from_config.path().string();
    versa::Runtime configured{config};
    configured.submit("configured task", [] {});
    configured.wait_all();
  }
  // Both runtimes wrote to the file the variable names; the second, destroyed first, was
  // overwritten by the first.
  EXPECT_FALSE(fs::exists(from_config.path())) << "VERSA_TRACE did not override trace_file";
  ASSERT_TRUE(fs::exists(from_environment.path()));
  const std::string text = read_file(from_environment.path());
  EXPECT_TRUE(is_json(text));
  EXPECT_EQ(occurrences(text, R"("ph":"X")"), static_cast<std::size_t>(tasks));
  EXPECT_EQ(occurrences(text, R"("name":"env task")"), static_cast<std::size_t>(tasks));
  EXPECT_EQ(occurrences(text, R"("name":"thread_name")"), static_cast<std::size_t>(GetParam()));
}

TEST_P(TraceTest, NoFileIsWrittenWhenTracingIsOff) {
  const TemporaryPath directory("directory");
  fs::create_directories(directory.path());
  {
    const ScopedWorkingDirectory inside(directory.path());
    versa::Runtime rt{workers(GetParam())};
    int x = 0;
    auto h = rt.data(x, "x");
    for (int i = 0; i < 10; ++i)
      rt.submit(
          "task", [](versa::Span<int> v) { ++v[0]; }, versa::write(h));
    rt.wait_all();
    EXPECT_EQ(x, 10);
  }
  EXPECT_TRUE(fs::is_empty(directory.path())) << "a file appeared in the working directory";
}

TEST_P(TraceTest, UnwritableTraceFileIsReportedWithoutThrowingFromTheDestructor) {
  const TemporaryPath missing("missing_directory");
  const fs::path file = missing.path() / "trace.json";
  testing::internal::CaptureStderr();
  {
    versa::Config config = workers(GetParam());
    config.trace_file = file.string();
    versa::Runtime rt{config};
    rt.submit("task", [] {});
    rt.wait_all();
  }
  const std::string errors = testing::internal::GetCapturedStderr();
  EXPECT_THAT(errors, HasSubstr(file.string()));
  EXPECT_FALSE(fs::exists(file));
}

INSTANTIATE_TEST_SUITE_P(Workers, TraceTest, testing::Values(1, 2, 4, 8));

}  // namespace
