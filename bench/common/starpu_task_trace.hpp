// Where and when each task of a StarPU run ran, from StarPU's own profiling information (no FxT
// build needed), written as a Chrome trace-event file laid out as Versa's traces are: the CPU
// workers under "host", each GPU's CUDA workers as its "kernels, worker N" tracks. So
// scripts/trace-picture draws it and scripts/trace-compare reads it beside a Versa trace of the
// same factorisation. A CUDA task's slice runs from its launch to the moment its worker saw it
// complete, as StarPU counts it; copies are not recorded (StarPU reports them only through FxT).
#pragma once

#include <starpu.h>
#include <starpu_profiling.h>

#include <cstdio>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace bench {

class StarpuTaskTrace {
 public:
  // Turns StarPU's task profiling on; StarPU must be running.
  StarpuTaskTrace() {
    if (starpu_profiling_status_set(STARPU_PROFILING_ENABLE) < 0)
      throw std::runtime_error("StarPU: starpu_profiling_status_set failed");
  }
  ~StarpuTaskTrace() { starpu_profiling_status_set(STARPU_PROFILING_DISABLE); }
  StarpuTaskTrace(const StarpuTaskTrace&) = delete;
  StarpuTaskTrace& operator=(const StarpuTaskTrace&) = delete;

  // Has `task`, not submitted yet, record itself under `name` when it ends. Its callback must be
  // free. The submitting thread only.
  void attach(starpu_task* task, std::string name) {
    Slice& slice = slices_.emplace_back();
    slice.name = std::move(name);
    task->callback_func = &StarpuTaskTrace::ended;
    task->callback_arg = &slice;
  }

  // Writes the slices of the tasks that have ended; call it once they all have.
  void write(const std::string& file) const {
    std::FILE* out = std::fopen(file.c_str(), "w");
    if (out == nullptr) throw std::runtime_error("cannot write the StarPU trace " + file);
    double origin = -1;
    for (const Slice& slice : slices_)
      if (slice.worker >= 0 && (origin < 0 || slice.start_us < origin)) origin = slice.start_us;
    std::fprintf(out, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    // Tracks: (process, thread) per worker; processes 0 (host) and 1 + the GPU's number.
    std::map<int, std::pair<int, int>> tracks;
    std::map<int, int> per_process;
    const char* separator = "";
    for (unsigned worker = 0; worker < starpu_worker_get_count(); ++worker) {
      const bool cuda = starpu_worker_get_type(static_cast<int>(worker)) == STARPU_CUDA_WORKER;
      const int process = cuda ? 1 + starpu_worker_get_devid(static_cast<int>(worker)) : 0;
      const int thread = per_process[process]++;
      tracks[static_cast<int>(worker)] = {process, thread};
      if (thread == 0)
        std::fprintf(out,
                     "%s{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 0, "
                     "\"args\": {\"name\": \"%s\"}}",
                     separator, process,
                     cuda ? ("cuda:" + std::to_string(process - 1) + " (StarPU)").c_str() : "host");
      separator = ",\n";
      std::fprintf(out,
                   "%s{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, "
                   "\"args\": {\"name\": \"%s %d\"}}",
                   separator, process, thread, cuda ? "kernels, worker" : "cpu worker", thread);
    }
    for (const Slice& slice : slices_) {
      if (slice.worker < 0) continue;  // never ran (a failed submission)
      const auto [process, thread] = tracks.at(slice.worker);
      std::fprintf(out,
                   ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"cat\": "
                   "\"task\", \"ts\": %.3f, \"dur\": %.3f}",
                   slice.name.c_str(), process, thread, slice.start_us - origin,
                   slice.end_us - slice.start_us);
    }
    std::fprintf(out, "\n]}\n");
    if (std::fclose(out) != 0) throw std::runtime_error("cannot write the StarPU trace " + file);
  }

 private:
  struct Slice {
    std::string name;
    int worker = -1;
    double start_us = 0, end_us = 0;
  };

  static double microseconds(const timespec& t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
  }

  // The task's callback, on the worker that ran it: its profiling information is complete then.
  static void ended(void* arg) {
    const starpu_task* task = starpu_task_get_current();
    if (task == nullptr || task->profiling_info == nullptr) return;
    Slice& slice = *static_cast<Slice*>(arg);
    slice.start_us = microseconds(task->profiling_info->start_time);
    slice.end_us = microseconds(task->profiling_info->end_time);
    slice.worker = task->profiling_info->workerid;
  }

  // A deque: the callbacks write through pointers into it while later tasks are attached.
  std::deque<Slice> slices_;
};

}  // namespace bench
