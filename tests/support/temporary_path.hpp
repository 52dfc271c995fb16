// Test helper: a path in the temporary directory for one test's files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <system_error>

namespace versa::testing_support {

// A path in the temporary directory unique to this process, test and `tag` (letters, digits
// and dots kept, anything else made '_'). Nothing is there at construction, and whatever the
// test put there (a file, a directory) is removed at destruction.
class TemporaryPath {
 public:
  explicit TemporaryPath(const std::string& tag) {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("versa_") + test->test_suite_name() + "_" + test->name() + "_" +
                       std::to_string(::getpid()) + "_" + tag;
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.') c = '_';
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
  }
  ~TemporaryPath() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryPath(const TemporaryPath&) = delete;
  TemporaryPath& operator=(const TemporaryPath&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string string() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace versa::testing_support
