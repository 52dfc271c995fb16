// An allocator for the examples' gigabyte arrays (the test matrix and its copies), which are
// filled at once on every core. Two changes from std::allocator:
// - elements are default-initialized: a std::vector<double>(n) of it is allocated, not zeroed,
//   so that the parallel fill is what first touches the pages;
// - an array of 64 MiB or more is aligned to 2 MiB and asks for transparent huge pages
//   (madvise), which systems set to "madvise" give only on request: 512 times fewer page faults.
// First touches are most of what filling such an array costs on a virtual machine: 3.2 GB took
// 3.2 s on its 2 cores with 4 KiB pages, 0.48 s with huge pages, and a zeroing std::vector 7.7 s
// on one core.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace example {

template <class T>
class LargeArrayAllocator : public std::allocator<T> {
 public:
  template <class U>
  struct rebind {
    using other = LargeArrayAllocator<U>;
  };
  using std::allocator<T>::allocator;

  T* allocate(std::size_t n) {
    if (!large(n)) return std::allocator<T>::allocate(n);
    if (n > (std::size_t(-1) - huge_page) / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = rounded(n);
    void* p = std::aligned_alloc(huge_page, bytes);
    if (!p) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without huge pages, 4 KiB ones
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (large(n))
      std::free(p);
    else
      std::allocator<T>::deallocate(p, n);
  }

  // Default-initialization: nothing for trivial types.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

 private:
  static constexpr std::size_t huge_page = std::size_t{2} << 20;
  static bool large(std::size_t n) { return n >= (std::size_t{64} << 20) / sizeof(T); }
  static std::size_t rounded(std::size_t n) {
    return (n * sizeof(T) + huge_page - 1) / huge_page * huge_page;
  }
};

}  // namespace example
