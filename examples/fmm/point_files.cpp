#include "point_files.hpp"

#include <unistd.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace fmm {

namespace {

// The formats are little-endian so that numpy reads them with dtype '<f8' on any machine; every
// machine we build on is, and a big-endian one would need byte swaps here.
static_assert(std::endian::native == std::endian::little, "point files assume little-endian");

// An output file that becomes visible under its final name only when commit() succeeds; until
// then it lives under a temporary name next to it, which the destructor removes.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path)
      : path_(std::move(path)), temporary_(path_ + ".tmp" + std::to_string(::getpid())) {
    out_.open(temporary_, std::ios::binary | std::ios::trunc);
    if (!out_) fail();
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (!committed_) {
      std::error_code ignored;
      std::filesystem::remove(temporary_, ignored);
    }
  }

  void write(const void* data, std::size_t bytes) {
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    if (!out_) fail();
  }
  void write(std::uint64_t value) { write(&value, sizeof value); }
  void write(const std::vector<double>& values) {
    write(values.data(), values.size() * sizeof(double));
  }

  void commit() {
    out_.close();
    if (!out_) fail();
    std::error_code error;
    std::filesystem::rename(temporary_, path_, error);
    if (error) throw std::runtime_error("cannot write " + path_ + ": " + error.message());
    committed_ = true;
  }

 private:
  [[noreturn]] void fail() const { throw std::runtime_error("cannot write " + path_); }

  std::string path_, temporary_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace

void save_points(const std::string& path, const Points& points) {
  AtomicFile file(path);
  file.write("VFMMPTS1", 8);
  file.write(points.size());
  file.write(points.x);
  file.write(points.y);
  file.write(points.z);
  file.write(points.charge);
  file.commit();
}

void save_reference(const std::string& path, std::size_t n, const std::vector<std::size_t>& targets,
                    const Potentials& reference) {
  AtomicFile file(path);
  file.write("VFMMREF1", 8);
  file.write(n);
  file.write(targets.size());
  for (const std::size_t index : targets) file.write(index);
  file.write(reference.potential);
  file.write(reference.field_x);
  file.write(reference.field_y);
  file.write(reference.field_z);
  file.commit();
}

}  // namespace fmm
