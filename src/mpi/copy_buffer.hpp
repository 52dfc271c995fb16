// The memory of a copy the runtime allocates for a rank that does not own a handle (registered
// with a null pointer): an anonymous mapping, so that its pages cost memory only once a version
// is received into them, and flush() gives them back to the system (they read as zeros and are
// mapped again when the next version arrives).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <new>

namespace versa::mpi::detail {

class CopyBuffer {
 public:
  explicit CopyBuffer(std::size_t bytes) : bytes_(round_up(bytes)) {
    data_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data_ == MAP_FAILED) throw std::bad_alloc();
  }
  ~CopyBuffer() { munmap(data_, bytes_); }
  CopyBuffer(const CopyBuffer&) = delete;
  CopyBuffer& operator=(const CopyBuffer&) = delete;

  void* data() const { return data_; }
  // Gives the pages back. Not for memory a GPU runtime page-locked (cudaHostRegister, for large
  // host buffers): the call would succeed and map fresh pages that the registration, which the
  // copies to and from the GPU use, does not see. The caller keeps such pages.
  void release() const { madvise(data_, bytes_, MADV_DONTNEED); }

 private:
  static std::size_t round_up(std::size_t bytes) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
  }
  void* data_;
  std::size_t bytes_;
};

}  // namespace versa::mpi::detail
