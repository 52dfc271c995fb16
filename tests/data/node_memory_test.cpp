// A device node's memory: the caching allocator under its capacity, device refusal, and the
// least-recently-used order of resident replicas that eviction walks.
#include "data/node_memory.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <vector>

#include "base/mutex.hpp"

namespace versa::detail {
namespace {

// Stands in for a device allocator: counts calls, and refuses (returns null, as a full device
// does) while `refuse` is set.
struct FakeAllocator {
  int allocations = 0;
  int deallocations = 0;
  bool refuse = false;

  void* allocate(std::size_t bytes) {
    if (refuse) return nullptr;
    ++allocations;
    return std::malloc(bytes);
  }
  void deallocate(void* buffer) {
    ++deallocations;
    std::free(buffer);
  }
};

class NodeMemoryTest : public ::testing::Test {
 protected:
  void make_memory(std::size_t capacity) {
    memory_.emplace(
        capacity, [this](std::size_t bytes) { return allocator_.allocate(bytes); },
        [this](void* buffer) { allocator_.deallocate(buffer); });
  }
  NodeMemory& memory() { return *memory_; }

  // Every test hands its buffers back to the cache, so destroying the memory must free all of
  // them: nothing leaks, nothing is freed twice.
  void TearDown() override {
    memory_.reset();
    EXPECT_EQ(allocator_.allocations, allocator_.deallocations);
  }

  FakeAllocator allocator_;
  std::optional<NodeMemory> memory_;  // declared after allocator_: destroyed before it
};

TEST_F(NodeMemoryTest, TakeWithinCapacityAllocates) {
  make_memory(1024);
  MutexLock guard(memory().mutex());
  bool refused = true;
  void* a = memory().take(256, refused);
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(refused);
  refused = true;
  void* b = memory().take(768, refused);  // exactly fills the capacity
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(refused);
  EXPECT_NE(a, b);
  EXPECT_EQ(allocator_.allocations, 2);
  EXPECT_EQ(memory().used(), 1024u);
  EXPECT_EQ(memory().cached(), 0u);
  memory().give(a, 256);
  memory().give(b, 768);
}

TEST_F(NodeMemoryTest, TakeBeyondCapacityIsRefusedWithoutAskingTheDevice) {
  make_memory(1024);
  MutexLock guard(memory().mutex());
  bool refused = true;
  EXPECT_EQ(memory().take(2048, refused), nullptr);
  EXPECT_FALSE(refused);  // the capacity refused, not the device
  void* a = memory().take(1000, refused);
  ASSERT_NE(a, nullptr);
  refused = true;
  EXPECT_EQ(memory().take(100, refused), nullptr);
  EXPECT_FALSE(refused);
  EXPECT_EQ(allocator_.allocations, 1);
  EXPECT_EQ(memory().used(), 1000u);
  memory().give(a, 1000);
}

TEST_F(NodeMemoryTest, GivenBufferIsReusedForTheSameSize) {
  make_memory(1024);
  MutexLock guard(memory().mutex());
  bool refused = false;
  void* a = memory().take(256, refused);
  ASSERT_NE(a, nullptr);
  memory().give(a, 256);
  // A cached buffer still counts against the capacity until trimmed.
  EXPECT_EQ(memory().used(), 256u);
  EXPECT_EQ(memory().cached(), 256u);

  EXPECT_EQ(memory().take(256, refused), a);
  EXPECT_FALSE(refused);
  EXPECT_EQ(allocator_.allocations, 1);
  EXPECT_EQ(allocator_.deallocations, 0);
  EXPECT_EQ(memory().used(), 256u);
  EXPECT_EQ(memory().cached(), 0u);

  // Another size is not served from the cache.
  memory().give(a, 256);
  void* b = memory().take(128, refused);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(b, a);
  EXPECT_EQ(allocator_.allocations, 2);
  EXPECT_EQ(memory().cached(), 256u);
  memory().give(b, 128);
}

TEST_F(NodeMemoryTest, TakeBeyondCapacityTrimsTheCacheFirst) {
  make_memory(1024);
  MutexLock guard(memory().mutex());
  bool refused = false;
  void* a = memory().take(512, refused);
  void* b = memory().take(256, refused);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  memory().give(a, 512);
  memory().give(b, 256);
  ASSERT_EQ(memory().used(), 768u);

  // 768 + 384 > 1024: at least 128 bytes of cache must go before the new buffer fits.
  void* c = memory().take(384, refused);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(refused);
  EXPECT_GE(allocator_.deallocations, 1);
  EXPECT_LE(memory().used(), 1024u);
  EXPECT_EQ(memory().used(), 384u + memory().cached());
  EXPECT_EQ(allocator_.allocations, 3);

  // Trimming drops the largest buffers first, so the small one should still be cached.
  EXPECT_EQ(allocator_.deallocations, 1);
  EXPECT_EQ(memory().take(256, refused), b);
  EXPECT_EQ(allocator_.allocations, 3);
  memory().give(b, 256);
  memory().give(c, 384);
}

TEST_F(NodeMemoryTest, TrimmingTheWholeCacheIsNotEnoughWhenReplicasHoldTheRest) {
  make_memory(1024);
  MutexLock guard(memory().mutex());
  bool refused = false;
  void* held = memory().take(768, refused);  // in use by a replica: cannot be trimmed
  void* cached = memory().take(128, refused);
  ASSERT_NE(held, nullptr);
  ASSERT_NE(cached, nullptr);
  memory().give(cached, 128);
  EXPECT_EQ(memory().take(512, refused), nullptr);
  EXPECT_FALSE(refused);
  memory().give(held, 768);
}

TEST_F(NodeMemoryTest, DeviceRefusalIsToldApartFromTheCapacity) {
  make_memory(1024);
  MutexLock guard(memory().mutex());
  allocator_.refuse = true;
  bool refused = false;
  EXPECT_EQ(memory().take(64, refused), nullptr);
  EXPECT_TRUE(refused);
  EXPECT_EQ(memory().used(), 0u);  // nothing was charged for the failed allocation

  allocator_.refuse = false;
  void* a = memory().take(64, refused);
  ASSERT_NE(a, nullptr);
  EXPECT_FALSE(refused);  // reset by each call
  EXPECT_EQ(memory().used(), 64u);
  memory().give(a, 64);
}

TEST_F(NodeMemoryTest, DestructorFreesCachedBuffers) {
  make_memory(4096);
  {
    MutexLock guard(memory().mutex());
    bool refused = false;
    std::vector<void*> buffers;
    for (std::size_t bytes : {64, 64, 128, 1024}) buffers.push_back(memory().take(bytes, refused));
    memory().give(buffers[0], 64);
    memory().give(buffers[1], 64);
    memory().give(buffers[2], 128);
    memory().give(buffers[3], 1024);
  }
  EXPECT_EQ(allocator_.allocations, 4);
  EXPECT_EQ(allocator_.deallocations, 0);
  memory_.reset();
  EXPECT_EQ(allocator_.deallocations, 4);
}

// --- LRU order ---

// The resident replicas from the least recently used, following lru_next, after checking that
// the lru_prev links mirror them.
std::vector<Replica*> lru_order(NodeMemory& memory) {
  std::vector<Replica*> order;
  Replica* previous = nullptr;
  for (Replica* r = memory.oldest(); r != nullptr; r = r->lru_next) {
    EXPECT_EQ(r->lru_prev, previous);
    EXPECT_TRUE(r->resident);
    order.push_back(r);
    previous = r;
    if (order.size() > 100) {
      ADD_FAILURE() << "the LRU list has a cycle";
      break;
    }
  }
  return order;
}

TEST_F(NodeMemoryTest, LruListKeepsLeastRecentlyUsedFirst) {
  make_memory(1024);
  MutexLock guard(memory().mutex());
  Replica a, b, c;
  EXPECT_EQ(memory().oldest(), nullptr);

  memory().make_resident(&a);
  memory().make_resident(&b);
  memory().make_resident(&c);
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&a, &b, &c}));

  memory().touch(&a);  // the oldest becomes the newest
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&b, &c, &a}));
  memory().touch(&c);  // from the middle
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&b, &a, &c}));
  memory().touch(&c);  // already the newest
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&b, &a, &c}));

  memory().make_absent(&a);  // from the middle
  EXPECT_FALSE(a.resident);
  EXPECT_EQ(a.lru_prev, nullptr);
  EXPECT_EQ(a.lru_next, nullptr);
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&b, &c}));

  // Neither touching nor dropping a replica that is not resident changes the list.
  memory().touch(&a);
  memory().make_absent(&a);
  EXPECT_FALSE(a.resident);
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&b, &c}));

  memory().make_absent(&b);  // the oldest
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&c}));
  memory().make_resident(&a);
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&c, &a}));
  memory().make_absent(&a);  // the newest
  memory().make_absent(&c);  // the last one
  EXPECT_EQ(memory().oldest(), nullptr);
  EXPECT_TRUE(lru_order(memory()).empty());

  // The list still works after being emptied.
  memory().make_resident(&b);
  EXPECT_EQ(lru_order(memory()), (std::vector<Replica*>{&b}));
  memory().make_absent(&b);
}

}  // namespace
}  // namespace versa::detail
