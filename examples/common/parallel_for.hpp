// Loops over an index range on all cores, for the steps of the tree build that are independent per
// point or per cell (Morton keys, gathers, interaction lists, group arrays). The runtime is not
// running yet when the tree is built, so this uses threads of its own, started per call: the
// steps it runs take milliseconds, against tens of microseconds to start the threads.
//
//   example::parallel_for(n, [&](std::size_t begin, std::size_t end) {
//     for (std::size_t i = begin; i < end; ++i) y[i] = f(x[i]);
//   });
//
// The chunks are contiguous and the body sees which one it runs, so that a caller that keeps
// per-chunk state (a histogram) and combines it in chunk order gets the same result on any
// machine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace example {

// The threads that parallel_for runs on: one per hardware thread, at least one.
inline std::size_t parallel_threads() {
  return std::max<std::size_t>(1, std::thread::hardware_concurrency());
}

// Chunk `chunk` of `chunks` equal parts of [0, count): [begin, end).
inline std::size_t chunk_begin(std::size_t count, std::size_t chunks, std::size_t chunk) {
  return count / chunks * chunk + std::min(chunk, count % chunks);
}

// Calls body(chunk, begin, end) once for each chunk of [0, count) cut into `chunks` (>= 1) nearly
// equal contiguous parts, concurrently, and returns when all calls have returned. The calling
// thread runs chunk 0. The first exception thrown by a body is rethrown here, after every call
// has finished. The body must be safe to call concurrently on different chunks.
template <typename Body>
void parallel_chunks(std::size_t count, std::size_t chunks, const Body& body) {
  if (chunks <= 1) {
    body(std::size_t{0}, std::size_t{0}, count);
    return;
  }
  std::exception_ptr failure;  // the first failure; guarded by failure_mutex
  std::mutex failure_mutex;
  auto run = [&](std::size_t chunk) {
    try {
      body(chunk, chunk_begin(count, chunks, chunk), chunk_begin(count, chunks, chunk + 1));
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> threads;
    threads.reserve(chunks - 1);
    for (std::size_t chunk = 1; chunk < chunks; ++chunk) threads.emplace_back(run, chunk);
    run(0);
  }  // the jthreads join here
  if (failure) std::rethrow_exception(failure);
}

// The number of chunks parallel_for cuts `count` items into: one per thread, but none smaller
// than `grain` items, so that small ranges run in the calling thread alone.
inline std::size_t parallel_chunk_count(std::size_t count, std::size_t grain) {
  return std::clamp<std::size_t>(count / std::max<std::size_t>(grain, 1), 1, parallel_threads());
}

// Calls body(begin, end) on contiguous chunks covering [0, count), in parallel when there are
// at least 2 * grain items (see parallel_chunks for the guarantees).
template <typename Body>
void parallel_for(std::size_t count, const Body& body, std::size_t grain = 4096) {
  parallel_chunks(count, parallel_chunk_count(count, grain),
                  [&](std::size_t, std::size_t begin, std::size_t end) { body(begin, end); });
}

}  // namespace example
