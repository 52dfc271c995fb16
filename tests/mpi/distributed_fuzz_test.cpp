// The distributed fuzzer (docs/distributed.md, "Tests"): random programs of read, write,
// write_only and add tasks, flushes, and handles destroyed and made again with another owner
// (after a wait_all; every third time as scratch data, zero on every rank), over a few handles
// with random owners and executors (half of them without memory where not owned), on however
// many ranks mpirun started. Every
// handle's final value equals the sequential run's (bitwise: integers), and every rank's tasks,
// messages and bytes equal what an independent model of the owner-computes rule and its cache
// predicts.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "mpi/rank_config.hpp"
#include "result_line.hpp"
#include "versa/mpi.hpp"
#include "versa/versa.hpp"

namespace {

using Value = std::uint64_t;  // wraps around: sums are the same in any order
enum class Mode : std::uint8_t { read, write, write_only, add };
using versa::testing::rank_config;

// --- the program the fuzzer runs, and its sequential model ----------------------------------

// Reads what read and write accesses see, then writes every write and write_only access and
// adds to every add access: a function of the task's id and inputs, so that any misordering or
// stale copy shows.
Value sum(versa::Span<const Value> v) {
  Value s = 0;
  for (Value x : v) s = s * 1099511628211ULL + x;
  return s;
}
Value sum(versa::Span<Value> v) { return sum(versa::Span<const Value>(v.data(), v.size())); }
void modify(versa::Span<const Value>, Mode, Value) {}
void modify(versa::Span<Value> v, Mode mode, Value acc) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (mode == Mode::add) {
      v[i] += acc + i;
    } else {
      v[i] = mode == Mode::write ? v[i] * 7 + acc + static_cast<Value>(i)
                                 : acc ^ static_cast<Value>(i * 977);
    }
  }
}
template <class... Views>
void step(Value id, const std::array<Mode, 3>& modes, Views... views) {
  Value acc = id;
  int i = 0;
  ((acc = modes[i] == Mode::read || modes[i] == Mode::write ? acc * 31 + sum(views) : acc, ++i),
   ...);
  i = 0;
  ((modify(views, modes[i], acc), ++i), ...);
}

struct FuzzTask {
  // 0: not a task but a flush of handles[0]; -1: a wait_all, then handles[0] destroyed and
  // registered again, owned by on_rank, with the value it had
  int count;
  std::array<int, 3> handles;
  std::array<Mode, 3> modes;
  int on_rank;  // -1: the owner-computes rule
};

std::vector<FuzzTask> random_program(std::uint64_t seed, int tasks, int handles, int ranks) {
  std::mt19937_64 rng(seed);
  std::vector<FuzzTask> program(static_cast<std::size_t>(tasks));
  for (FuzzTask& t : program) {
    if (rng() % 50 == 0) {
      t.count = 0;
      t.handles[0] = static_cast<int>(rng() % static_cast<std::uint64_t>(handles));
      continue;
    }
    if (rng() % 500 == 0) {
      t.count = -1;
      t.handles[0] = static_cast<int>(rng() % static_cast<std::uint64_t>(handles));
      t.on_rank = static_cast<int>(rng() % static_cast<std::uint64_t>(ranks));
      continue;
    }
    t.count = 1 + static_cast<int>(rng() % 3);
    std::set<int> used;
    for (int i = 0; i < t.count; ++i) {
      int h;
      do h = static_cast<int>(rng() % static_cast<std::uint64_t>(handles));
      while (used.count(h));
      used.insert(h);
      t.handles[i] = h;
      t.modes[i] = static_cast<Mode>(rng() % 4);
    }
    t.on_rank = rng() % 10 == 0 ? static_cast<int>(rng() % static_cast<std::uint64_t>(ranks)) : -1;
  }
  return program;
}

// What each rank must send and receive, and run, by the rule (an independent reading of
// docs/distributed.md): executor = on_rank, else owner of the first modified handle, else of
// the first handle; an input the executor lacks comes from the last writer's rank, once per
// version and rank; a run of adds ends at the next other access, where every rank that took
// part (the one with the value before the run: the owner if its copy is valid, else the
// holder; and every rank that added) sends the owner one message, except the owner itself.
struct Prediction {
  std::vector<std::uint64_t> sent, received, executed;
};
struct ModelHandle {
  int owner, holder;
  std::set<int> valid;
  int base = -1;  // -1: no run of adds open
  std::set<int> contributors;
};
void end_adds(ModelHandle& h, Prediction& p) {
  std::set<int> parts = h.contributors;
  parts.insert(h.base);
  for (int r : parts) {
    if (r == h.owner) continue;
    ++p.sent[r];
    ++p.received[h.owner];
  }
  h.holder = h.owner;
  h.valid = {h.owner};
  h.base = -1;
  h.contributors.clear();
}
int predict_task(std::vector<ModelHandle>& hs, const int* ids, const Mode* modes, int n,
                 int on_rank, Prediction& p) {
  int executor = on_rank;
  for (int i = 0; i < n && executor < 0; ++i)
    if (modes[i] != Mode::read) executor = hs[ids[i]].owner;
  if (executor < 0) executor = hs[ids[0]].owner;
  for (int i = 0; i < n; ++i) {
    ModelHandle& h = hs[ids[i]];
    if (modes[i] == Mode::add) {
      if (h.base < 0) h.base = h.valid.count(h.owner) ? h.owner : h.holder;
      h.contributors.insert(executor);
      continue;
    }
    if (h.base >= 0) end_adds(h, p);
    if (modes[i] == Mode::write_only || h.valid.count(executor)) continue;
    ++p.sent[h.holder];
    ++p.received[executor];
    h.valid.insert(executor);
  }
  for (int i = 0; i < n; ++i) {
    if (modes[i] == Mode::read || modes[i] == Mode::add) continue;
    hs[ids[i]].holder = executor;
    hs[ids[i]].valid = {executor};
  }
  return executor;
}

template <class... Accesses>
void submit_fuzz(versa::mpi::Runtime& rt, std::vector<versa::Handle<Value>>& hs, const FuzzTask& t,
                 Value id, const Accesses&... accesses) {
  if (t.count == 0) return rt.flush(hs[t.handles[0]]);
  constexpr int done = sizeof...(Accesses);
  if constexpr (done < 3) {
    if (done < t.count) {
      versa::Handle<Value>& h = hs[t.handles[done]];
      switch (t.modes[done]) {
        case Mode::read:
          return submit_fuzz(rt, hs, t, id, accesses..., versa::read(h));
        case Mode::write:
          return submit_fuzz(rt, hs, t, id, accesses..., versa::write(h));
        case Mode::write_only:
          return submit_fuzz(rt, hs, t, id, accesses..., versa::write_only(h));
        case Mode::add:
          return submit_fuzz(rt, hs, t, id, accesses..., versa::add(h));
      }
    }
  }
  auto body = [id, modes = t.modes](auto... views) { step(id, modes, views...); };
  // On a rank with an emulated accelerator, tasks may run there (and the data move through it).
  const auto where = versa::placement(versa::Placement::automatic);
  if (t.on_rank >= 0)
    rt.submit("fuzz", body, accesses..., where, versa::mpi::on_rank(t.on_rank));
  else
    rt.submit("fuzz", body, accesses..., where);
}

// Runs task `t` (number `id`) on the model's arrays: views on them, read ones const.
void apply_to_model(std::vector<std::vector<Value>>& model, const FuzzTask& t, Value id) {
  const std::array<Mode, 3> modes = t.modes;
  auto view = [&](int i, auto&& next) {
    std::vector<Value>& data = model[t.handles[i]];
    if (t.modes[i] == Mode::read) return next(versa::Span<const Value>(data.data(), data.size()));
    return next(versa::Span<Value>(data.data(), data.size()));
  };
  if (t.count == 1) view(0, [&](auto a) { step(id, modes, a); });
  if (t.count == 2) view(0, [&](auto a) { view(1, [&](auto b) { step(id, modes, a, b); }); });
  if (t.count == 3)
    view(0, [&](auto a) {
      view(1, [&](auto b) { view(2, [&](auto c) { step(id, modes, a, b, c); }); });
    });
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// Fuzzer programs that passed on this rank; rank 0 prints the count as a RESULT line when the
// tests end (bench=mpi-fuzz of docs/distributed.md).
struct FuzzSummary : ::testing::Environment {
  void TearDown() override {
    int rank = 0;
    int ranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (rank == 0 && programs > 0)
      example::print_result("mpi-fuzz", "versa", "ranks=" + std::to_string(ranks),
                            "programs_passed", passed, "programs");
  }
  int programs = 0;
  int passed = 0;
};
FuzzSummary* const fuzz_summary =
    static_cast<FuzzSummary*>(::testing::AddGlobalTestEnvironment(new FuzzSummary));

// The fuzzer's ranks: CPU workers only, or with an emulated accelerator whose memory holds three
// handles (so that data moves to and from it, and is evicted, between the transfers).
enum class Machine { cpu, emulated_device };

versa::Config machine_config(Machine machine) {
  versa::Config config = rank_config();
  if (machine == Machine::emulated_device) {
    config.emulated_devices.resize(1);
    config.emulated_devices[0].memory_bytes = 96;
    config.emulated_devices[0].bandwidth_bytes_per_s = 0;
    config.emulated_devices[0].latency_s = 0;
  }
  return config;
}

class DistributedFuzz : public ::testing::TestWithParam<std::tuple<Machine, std::uint64_t>> {};

// Random modes, owners and executors over a few handles; every handle's final value on rank 0
// equals the sequential run, and every rank's message and task counts equal the prediction.
TEST_P(DistributedFuzz, EqualsSequentialWithPredictedMessages) {
  const auto [machine, seed] = GetParam();
  versa::mpi::Runtime rt(machine_config(machine));
  const int ranks = rt.size();
  const int tasks = env_int("VERSA_MPI_FUZZ_TASKS", 10000);
  constexpr int handle_count = 10;
  constexpr std::size_t elements = 4;
  std::mt19937_64 owners_rng(seed ^ 0xabcdef);
  std::vector<std::vector<Value>> memory(handle_count), model(handle_count);
  std::vector<versa::Handle<Value>> hs(handle_count);
  std::vector<ModelHandle> predicted(handle_count);
  // Handle h owned by `owner`, whose memory there holds the model's value. Every other handle
  // without memory where it is not owned: the runtime maps its copies there, and a flush gives
  // their pages back once the copy's readers are done.
  // Scratch data instead starts at zero, valid on every rank.
  auto make_handle = [&](int h, int owner, bool scratch) {
    // Appended, not "h" + to_string(h): GCC 12 warns falsely about that one (-Wrestrict).
    std::string name = "h";
    name += std::to_string(h);
    if (scratch) {
      model[h].assign(elements, 0);
      hs[h] = rt.scratch<Value>(elements, owner, name);
      predicted[h] = {owner, owner, {}, -1, {}};
      for (int r = 0; r < ranks; ++r) predicted[h].valid.insert(r);
    } else {
      memory[h].assign(elements, 0);
      if (owner == rt.rank()) memory[h] = model[h];
      Value* data = h % 2 == 1 && owner != rt.rank() ? nullptr : memory[h].data();
      hs[h] = rt.data(data, elements, owner, name);
      predicted[h] = {owner, owner, {owner}, -1, {}};
    }
    hs[h].set_reduction(versa::sum<Value>());
  };
  for (int h = 0; h < handle_count; ++h) {
    model[h].resize(elements);
    for (std::size_t i = 0; i < elements; ++i)
      model[h][i] = static_cast<Value>(h * 1000 + static_cast<int>(i));
    make_handle(h, static_cast<int>(owners_rng() % static_cast<std::uint64_t>(ranks)), false);
  }
  Prediction p{std::vector<std::uint64_t>(ranks), std::vector<std::uint64_t>(ranks),
               std::vector<std::uint64_t>(ranks)};
  const std::vector<FuzzTask> program = random_program(seed, tasks, handle_count, ranks);
  std::uint64_t flushes = 0, remakes = 0;
  for (std::size_t k = 0; k < program.size(); ++k) {
    const FuzzTask& t = program[k];
    const auto id = static_cast<Value>(k);
    if (t.count < 0) {
      // The wait_all ends every open run of adds. The handle is destroyed before it is made
      // again, so that the allocator may give the new one the old one's address.
      ASSERT_NO_THROW(rt.wait_all());
      for (ModelHandle& h : predicted)
        if (h.base >= 0) end_adds(h, p);
      hs[t.handles[0]] = versa::Handle<Value>();
      make_handle(t.handles[0], t.on_rank, remakes % 3 == 2);
      ++remakes;
      continue;
    }
    submit_fuzz(rt, hs, t, id);
    if (t.count == 0) {
      // A flush: the run of adds ends, and only the holder keeps the version.
      ModelHandle& h = predicted[t.handles[0]];
      if (h.base >= 0) end_adds(h, p);
      h.valid = {h.holder};
      ++flushes;
      continue;
    }
    apply_to_model(model, t, id);
    const int executor =
        predict_task(predicted, t.handles.data(), t.modes.data(), t.count, t.on_rank, p);
    ++p.executed[executor];
  }
  // Gather everything on rank 0 (a fetch is a read there).
  for (int h = 0; h < handle_count; ++h) {
    rt.fetch(hs[h], 0);
    const Mode read = Mode::read;
    predict_task(predicted, &h, &read, 1, 0, p);
  }
  ASSERT_NO_THROW(rt.wait_all());
  if (rt.rank() == 0)
    for (int h = 0; h < handle_count; ++h) {
      const auto held = rt.local().acquire(versa::read(hs[h]));  // the runtime's copy or memory[h]
      EXPECT_EQ(std::vector<Value>(held->data(), held->data() + held->size()), model[h])
          << "handle " << h;
    }
  const versa::mpi::Statistics s = rt.statistics();
  const auto r = static_cast<std::size_t>(rt.rank());
  if (rt.rank() == 0)
    std::printf(
        "fuzz seed %llu on %d ranks: rank 0 ran %llu tasks, sent %llu messages, "
        "received %llu; %llu handles remade\n",
        static_cast<unsigned long long>(seed), ranks,
        static_cast<unsigned long long>(s.tasks_executed),
        static_cast<unsigned long long>(s.messages_sent),
        static_cast<unsigned long long>(s.messages_received),
        static_cast<unsigned long long>(remakes));
  EXPECT_EQ(s.tasks_submitted, program.size() - flushes - remakes);
  EXPECT_EQ(s.tasks_executed, p.executed[r]);
  EXPECT_EQ(s.messages_sent, p.sent[r]);
  EXPECT_EQ(s.messages_received, p.received[r]);
  EXPECT_EQ(s.bytes_sent, p.sent[r] * elements * sizeof(Value));
  EXPECT_EQ(s.bytes_received, p.received[r] * elements * sizeof(Value));
  if (machine == Machine::emulated_device && ranks > 1) {
    // The accelerator took part: tasks ran there (how many is the placement's choice), and
    // data moved between it and the host.
    const std::vector<versa::DeviceStatistics> local = rt.local().statistics();
    ASSERT_EQ(local.size(), 2u);
    EXPECT_GT(local[1].tasks, 0u);
    EXPECT_GT(local[1].bytes_to_device + local[1].bytes_to_host, 0u);
  }
  ++fuzz_summary->programs;
  if (!HasFailure()) ++fuzz_summary->passed;
  hs.clear();
}

// 20 seeds of 10^4 tasks each on CPU workers (VERSA_MPI_FUZZ_TASKS changes the count), and 5
// more with an emulated accelerator per rank.
INSTANTIATE_TEST_SUITE_P(Seeds, DistributedFuzz,
                         ::testing::Combine(::testing::Values(Machine::cpu),
                                            ::testing::Range<std::uint64_t>(1, 21)));
INSTANTIATE_TEST_SUITE_P(EmulatedDevice, DistributedFuzz,
                         ::testing::Combine(::testing::Values(Machine::emulated_device),
                                            ::testing::Range<std::uint64_t>(21, 26)));

}  // namespace
