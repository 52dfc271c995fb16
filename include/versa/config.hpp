#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace versa {

// An emulated accelerator (DESIGN section 5): a separate memory node in host memory with its own
// capacity, asynchronous streams served by their own threads, a modelled transfer bandwidth and
// latency, and fault injection. Tasks run there through the task type's emulated implementation
// (by default its CPU one), on that node's replicas. It exercises every heterogeneous path
// (replicas, transfers, eviction, placement) on machines without a GPU.
struct EmulatedDeviceConfig {
  // Device memory capacity in bytes. At least 64 (tests make it tiny to force eviction).
  std::size_t memory_bytes = std::size_t{1} << 30;
  // Modelled host<->device copy speed (bytes per second) and fixed cost per copy. A copy takes
  // at least latency + bytes / bandwidth; 0 bandwidth means as fast as memcpy.
  double bandwidth_bytes_per_s = 12e9;
  double latency_s = 10e-6;
  // Kernel streams (one thread each, plus one per copy direction): the device keeps
  // Config::device_tasks_per_stream tasks per stream launched.
  int streams = 2;
  // Kernels of different streams that may run at once (1 to `streams`). 1, the default, makes
  // them take turns on one compute engine, as the kernels of a GPU that fill it do; more models
  // a GPU running several small kernels side by side, which placement counts as that many lanes.
  int concurrent_kernels = 1;
  // High-priority kernel streams, one per stream, as a CUDA device has them
  // (Config::cuda_priority_streams): the tasks with a positive priority run there, and their
  // kernels take the compute engine before those of the other streams that wait for it.
  bool priority_streams = false;
  // With priority_streams, kernels of the high-priority streams that may run at once on a
  // compute engine of their own, as Config::cuda_panel_sms gives a GPU's high-priority streams
  // SMs of their own: they then never wait for the other streams' kernels, nor those for them.
  // 0, the default: one engine for every stream. At most `streams`.
  int panel_kernels = 0;
  // Where task bodies run: false, the default, on the stream's thread, when the stream reaches
  // the task; true, on the thread that launches the task (the device's worker thread), as the
  // host code of a CUDA task runs, the stream then modelling only the kernel's completion. Both
  // are tested: what a body may do (spawn, sync) must work either way.
  bool bodies_at_launch = false;
  // A modelled peer link to the other emulated devices that have one (as GPUs of one node have
  // NVLink or PCIe peer access): data moves between two such devices directly, at this speed
  // (0: as fast as memcpy) and cost per copy, instead of through the host. Off by default: then
  // it goes device to host, then host to device.
  bool peer_link = false;
  double peer_bandwidth_bytes_per_s = 50e9;
  double peer_latency_s = 5e-6;
  // Fault injection, for tests: the n-th allocation (counting from 1) and every later one fails;
  // the n-th host<->device copy fails. 0 disables.
  std::uint64_t fail_allocations_from = 0;
  std::uint64_t fail_copy_at = 0;
};

// Settings of a Runtime. Every field has a default that suits a whole machine; environment
// variables override some of them for convenience (see docs/guide.md):
//   VERSA_NCPU=<n>            cpu_workers
//   VERSA_PIN=0|1             pin_workers
//   VERSA_CALLER_WORKS=0|1    caller_runs_tasks
//   VERSA_SUBMISSION_WINDOW=<n> submission_window
//   VERSA_LOCALITY=0|1        locality
//   VERSA_DEFER_REGISTRATION=0|1 defer_registration
//   VERSA_TRACE=<file>        trace_file
//   VERSA_NGPU=<n>            gpus
//   VERSA_CUDA_DEVICES=<i,j,..> cuda_devices (GPU ordinals, repeats allowed: 0,0)
//   VERSA_CUDA_STREAMS=<n>    cuda_streams
//   VERSA_CUDA_PRIORITY_STREAMS=0|1 cuda_priority_streams
//   VERSA_CUDA_MEMORY_POOL=0|1 cuda_memory_pool
//   VERSA_CUDA_PANEL_SMS=<n>  cuda_panel_sms
//   VERSA_DEVICE_TASKS_PER_STREAM=<n> device_tasks_per_stream
//   VERSA_DEVICE_SERIAL_TYPES=<a,b,..> device_serial_types
//   VERSA_EMULATED=<n>        emulated_devices: n devices with default settings
//   VERSA_DEVICE_MEMORY=<MiB> device_memory_limit
//   VERSA_AUTO_PIN=<KiB>      auto_pin_bytes
//   VERSA_PERF_MODEL=<file|none> perf_model_file
//   VERSA_LINK_COSTS=<file|none> link_cost_file
//   VERSA_REDUCTION_MEMORY=<MiB> reduction_memory_limit
//   VERSA_RENAME_MEMORY=<MiB> rename_memory_limit
//   VERSA_QUIET=0|1           quiet
//   VERSA_STATS=0|1           print_statistics
//   VERSA_DOT=<file>          dot_file
//   VERSA_DOT_TIMES=0|1       dot_times
//   VERSA_STALL_REPORT=<s>    stall_report_seconds
//   VERSA_TRACK_TASKS=0|1     track_tasks
//   VERSA_PEER_TIMEOUT=<s>    peer_timeout_seconds
// A value out of range, here or in the environment, makes the Runtime constructor throw
// std::invalid_argument naming the field or variable.
//
//   versa::Config config;
//   config.cpu_workers = 4;
//   config.emulated_devices.resize(1);      // one emulated accelerator with default settings
//   versa::Runtime rt{config};
struct Config {
  // Number of CPU workers, the waiting thread among them when caller_runs_tasks holds. 0 means
  // one per core that hwloc reports. At most 4096.
  int cpu_workers = 0;

  // Pin each worker thread to one core (round robin over the cores hwloc reports that the
  // process is bound to: all of them unless a launcher such as mpirun or taskset bound it), when
  // cpu_workers covers all those cores. Fewer workers are left to the operating system, which
  // spreads them among the processes that share the machine: pinned, they would all sit on the
  // first cores, with those of every other such process. To pin fewer workers, bind the
  // process to as many cores (taskset, hwloc-bind, a launcher's binding).
  bool pin_workers = true;

  // The thread that waits (wait_all(), or sync() outside a task) runs ready tasks meanwhile, as
  // one of the cpu_workers, as OpenMP's and oneTBB's calling threads do: with cpu_workers of 2
  // or more the runtime starts cpu_workers - 1 worker threads, and a task may run on whichever
  // thread waits. With one, it starts one thread, which runs every task, and the caller does
  // not (a worker thread must run tasks while the caller submits or holds data). A waiting
  // thread that finds no task for a while sleeps. acquire() does not run tasks: it returns as
  // soon as the data is ready, which a task it took up could delay. On by default: it shortens
  // chains of small tasks (the hand-off stays on the waiting thread), and with
  // submission_window independent tasks of 1-2 us gain too (docs/performance.md, "CPU runtime
  // micro-benchmarks").
  bool caller_runs_tasks = true;

  // With caller_runs_tasks, the most ready tasks that a thread outside the tasks submits ahead
  // of the workers: when that many wait for a worker, submit() runs the newest of them on the
  // submitting thread, in the waiting thread's worker slot (when no other thread waits in it),
  // until half are left, as OpenMP's task construct runs a task at once when too many are
  // queued. A burst of submissions then costs bounded memory, and the task records it reuses
  // are still in cache: independent 2 us tasks on 2 cores reach 0.90 of the machine instead of
  // 0.81, most of the difference page faults on fresh task records (docs/performance.md, "CPU
  // runtime micro-benchmarks"). A task body may so run inside submit(): a program must not
  // submit while holding a lock that a task takes. -1: 64 per CPU worker; 0: no limit;
  // otherwise at least 64. Tasks that wait for data do not count, nor tasks with a priority.
  int submission_window = -1;

  // A task made ready goes to the worker that last wrote its largest input (ties: one it also
  // writes), whose caches hold that data, rather than to the worker that made it ready or, for
  // tasks submitted by the main program, round-robin. The worker that just finished the task's
  // last dependency keeps it when it would otherwise have nothing to run.
  bool locality = false;

  // A thread outside the tasks that submits a task with accesses only creates and counts it,
  // and queues it; a worker that finds nothing to run registers the queued tasks on their
  // handles, in the order they came, and schedules those that are ready (DDAST's asynchronous
  // runtime management). submit() then never takes a handle's lock, which a finishing worker
  // may hold, and the registration of a long stream of submissions runs beside it rather than
  // on the submitting thread. A host access (acquire), a handle's destruction or reduction
  // operator change, and wait_all register whatever is queued first, so the program's order is
  // kept; a task with a positive priority is registered at once, after the queued ones. Off by
  // default: on 2 cores it pays only where workers are idle while the main thread submits (a
  // writer, then 100 to 10,000 readers of one handle: 102 ns per task instead of 162) and ties
  // elsewhere (docs/performance.md, "CPU runtime micro-benchmarks"). Ignored with devices
  // or task tracking (the DOT graph, the stall report), whose bookkeeping at submission stays on
  // the submitting thread.
  bool defer_registration = false;

  // When not empty, a Chrome trace-event JSON file (chrome://tracing, Perfetto) is written here
  // when the Runtime is destroyed: one track per worker, one slice per task. Costs nothing when
  // empty. The runtime refuses to start when the file could not be written then (its folder
  // missing or read-only). Under versa::mpi with several ranks, each rank writes its own, the
  // rank before the extension: run.json becomes run.rank0.json, run.rank1.json, ...
  std::string trace_file;

  // CUDA GPUs to use: -1 all that are present, 0 none, n the first n. Fewer present is not an
  // error: the runtime uses what exists and says so at start-up.
  int gpus = -1;

  // When not empty, the CUDA GPUs to use by ordinal, in device numbering order, instead of
  // `gpus`: each entry is a device of its own, with its own streams and memory. One GPU may be
  // named more than once ({0, 0}): its entries then share its memory equally (each within
  // device_memory_limit) and copy between each other as devices with a peer link do, which
  // tries several-device placement on a one-GPU machine. An ordinal that no GPU has is left out
  // and the start-up summary says so, as for `gpus`.
  std::vector<int> cuda_devices;

  // Kernel streams of each CUDA device (1 to 32), besides one stream of copies each way. The
  // device keeps up to device_tasks_per_stream tasks per stream launched, and two waiting for
  // their copies: more streams let more small kernels run side by side, at the cost of more
  // device memory held by the tasks in flight. 1, with cuda_priority_streams off, runs one kernel
  // at a time, which times each kernel alone.
  int cuda_streams = 4;

  // Each CUDA device also gets as many streams of the GPU's highest priority, where the tasks
  // submitted with a positive priority() run: the GPU starts their kernels' thread blocks
  // before those of the other streams' kernels as soon as it has room, so that the few small
  // kernels of a critical path (a tiled factorisation's panel) do not wait behind the large
  // ones of the other streams. Running kernels are never preempted.
  bool cuda_priority_streams = true;

  // When positive, the high-priority streams of each CUDA device run on that many of its SMs
  // (rounded up to the GPU's granularity: 8 on compute capability 9.0) and its other kernel
  // streams on the rest, as two green contexts (CUDA 12.5 or later). A priority only lets the
  // panel's kernels start their thread blocks first; a factorisation's panel kernels (potrf,
  // trsm: chains of small kernels spread over every SM) still share every SM with the large
  // products beside them. With SMs of their own they run beside those products without slowing
  // them, at the cost of the SMs the products give up. Needs cuda_priority_streams. Entries of
  // one GPU (cuda_devices = {0, 0}) each split the whole GPU. 0, the default: every stream may
  // use every SM.
  int cuda_panel_sms = 0;

  // Each CUDA device takes its buffers from a memory pool of its own, allocated and freed in
  // stream order, so that a buffer allocated or freed while tasks run does not stop the kernels
  // of its other streams from overlapping (cudaMalloc and cudaFree may wait for the whole GPU);
  // the memory freed stays in the pool until the runtime closes. false: cudaMalloc and
  // cudaFree, as on a GPU without memory pools.
  bool cuda_memory_pool = true;

  // Tasks each device (GPU or emulated) keeps launched per kernel stream, 1 to 16: with 2, the
  // default, a stream's next kernel is queued behind the one running, so the device never waits
  // for the runtime to notice a completion and launch the next; 1 holds a task back until its
  // stream is free, so that it may still go to whichever stream frees first (StarPU's
  // STARPU_CUDA_PIPELINE is the same setting).
  int device_tasks_per_stream = 2;

  // Task types whose kernels each device runs one after another, on its first kernel stream,
  // while the other types' run on its other streams (a device of one stream runs everything
  // there). For kernels that each fill the GPU, such as a tiled factorisation's large products:
  // beside each other they only share the GPU and thrash its cache, where slower kernels
  // (triangular solves, small factorisations) gain by running beside them. Empty by default:
  // every task takes any stream.
  std::vector<std::string> device_serial_types;

  // Emulated accelerators, after the GPUs in device numbering.
  std::vector<EmulatedDeviceConfig> emulated_devices;

  // When not 0, caps the memory each device (GPU or emulated) may use, in bytes (at least 64):
  // makes a working set larger than device memory easy to try.
  std::size_t device_memory_limit = 0;

  // Handles of at least this many bytes have their host memory page-locked before their first
  // copy to or from a GPU, and unlocked with the handle, since a copy from pageable memory goes
  // through a bounce buffer and holds the copying thread. Locking costs about as much as a
  // copy, so that memory copied only once may be better left pageable. 0: nothing is locked
  // but what Runtime::pin_host_memory locks.
  std::size_t auto_pin_bytes = std::size_t{256} << 10;

  // Devices of kinds the program registered itself (beyond cuda and emulated): how many of
  // each, by kind name. A name no kind registered is refused.
  std::map<std::string, int> other_devices;

  // Where the performance model of automatic placement (each task type's times on each kind
  // of device) is kept between runs: loaded from this file at start-up (if it exists) and
  // saved to it when the Runtime is destroyed, so that only a program's first run explores.
  // Empty: with a GPU, $XDG_CACHE_HOME/versa/perf-model/<host>/<program>, else
  // ~/.cache/versa/perf-model/<host>/<program> (as StarPU keeps its models in ~/.starpu), and
  // nowhere without a GPU; "none": kept nowhere. The start-up summary names the file. A
  // malformed file named here makes the Runtime constructor throw; a malformed default one is
  // measured again and replaced.
  std::string perf_model_file;

  // Where the measured costs of the GPUs' links (host to GPU, GPU to GPU) are kept: measured at
  // a machine's first start (milliseconds per link), read at the next ones, as placement needs
  // them. Empty: $XDG_CACHE_HOME/versa/link-costs, else ~/.cache/versa/link-costs; "none":
  // measured at every start and kept nowhere. Unused without GPUs.
  std::string link_cost_file;

  // Bytes that partial buffers of reductions (`add` accesses renamed so that they run in
  // parallel) may hold at once, on all memory nodes together. Past it, `add` tasks run one at a
  // time in place instead. 0 disables renaming.
  std::size_t reduction_memory_limit = std::size_t{256} << 20;

  // Bytes that the buffers of renamed write_only accesses may hold at once. A write_only access
  // registered while earlier accesses still use its handle gets a fresh buffer within this
  // budget and runs at once, instead of waiting for them (versa/access_mode.hpp); past it, it
  // waits. Handles with device replicas (a runtime with accelerators) and tokens are never
  // renamed. 0 disables renaming.
  std::size_t rename_memory_limit = std::size_t{256} << 20;

  // Do not print the one-line topology summary at start-up.
  bool quiet = false;

  // The name the runtime's own lines on stderr start with: the summary at start-up, the
  // statistics, stall reports and the messages held for the end ("versa: statistics"). Under
  // versa::mpi with several ranks, each rank's has " rank R" added ("versa rank 3: stall: ..."),
  // so that the ranks' lines can be told apart. Must not be empty.
  std::string label = "versa";

  // Receives what the runtime has to tell that no call returns: failures no wait_all
  // reported, misuse found away from its call (a handle destroyed while in use), errors while
  // shutting down (an unwritable trace file). Called from any thread, as each arises; it must
  // not call back into the runtime. When empty, the messages are written to stderr once, when
  // the Runtime is destroyed.
  std::function<void(const std::string& message)> diagnostics;

  // Collect statistics per task type and device kind (Runtime::task_statistics): two clock
  // reads and a record per task. Also on with print_statistics.
  bool task_statistics = false;

  // Print, when the Runtime is destroyed, what each device did: tasks, bytes moved each way,
  // evictions, time in copies and kernels (Runtime::statistics() gives the same figures).
  bool print_statistics = false;

  // When not empty, the task graph is written here as a Graphviz DOT file when the Runtime is
  // destroyed: one node per task (its name, and the CPU worker or device it ran on; reduction
  // flushes and host accesses from acquire() have shapes of their own) and one edge per direct
  // dependency the data versions imply, labelled with the handle. Turns track_tasks on; costs
  // a record per task. Nothing is recorded when empty. Checked and named per rank as
  // trace_file is.
  std::string dot_file;

  // With dot_file: each task's start and end time on the CPU (microseconds since the runtime
  // started) in its node, for CPU tasks and flushes; two clock reads per task.
  bool dot_times = false;

  // When more than 0: if no task finishes for this many seconds while tasks are pending, the
  // runtime describes what waits for what (Runtime::describe_pending) through `diagnostics`, or
  // on stderr at once without it (a program that stalls never reaches the destructor), once
  // per stall. A thread checks about every 50 ms. Turns track_tasks on. At most 10^6.
  double stall_report_seconds = 0;

  // versa::mpi::Runtime only: each rank's progress thread tells the next rank it is alive
  // several times per period; a rank that hears nothing from the previous one for this many
  // seconds (the process died, or was stopped) writes which rank went silent on stderr and
  // aborts the job (MPI_Abort), so that no rank waits for ever for a dead one. A rank whose
  // runtime is destroyed says so first and is not watched after that. 0 turns the watch off;
  // at most 10^6.
  double peer_timeout_seconds = 60;

  // Keep a registry of the tasks pending, so that Runtime::describe_pending and the stall
  // report can name who holds a handle (a running task, one ready in a queue or on a device,
  // one parked at another handle). Costs a locked insertion and removal per task. Host views
  // from acquire() are always known.
  bool track_tasks = false;

  // Read the environment variables listed above, returning `base` with them applied.
  // Throws std::invalid_argument naming the variable when a value is malformed or out of range,
  // or names a file (trace_file, dot_file) that could not be written.
  static Config from_environment(Config base);
};

}  // namespace versa
