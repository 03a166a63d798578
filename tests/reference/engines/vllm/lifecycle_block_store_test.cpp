// vLLM's BlockObjectStore as the AuxOutput walk models it (store.py @ 159bfe5): the last object
// of a key within a put, the first across puts, LRU eviction of unreferenced keys, a put that
// cannot fit failing closed, and a read of an evicted key failing.
#include "reference/engines/vllm/lifecycle_block_store.hpp"

#include <gtest/gtest.h>

namespace r3::vllm {
namespace {

BlockKey key(uint64_t hash, uint64_t versions = 0) { return {0, hash, versions}; }
BlockObject object(int req) { return {RouteRef{RouteRef::Kind::route, req, 0, 0}}; }

int first_request(BlockObjectStore& store, BlockKey k) {
  const auto got = store.get({k});
  return got ? (*got)[0]->front().req : -1;
}

TEST(VllmBlockObjectStore, LastObjectOfAKeyWinsWithinAPutAndTheFirstAcrossPuts) {
  BlockObjectStore store(0);
  EXPECT_EQ(store.put({{key(1), object(0)}, {key(1), object(1)}}, {}, {}), std::nullopt);
  EXPECT_EQ(first_request(store, key(1)), 1);
  EXPECT_EQ(store.put({{key(1), object(2)}}, {}, {}), std::nullopt);
  EXPECT_EQ(first_request(store, key(1)), 1);
}

TEST(VllmBlockObjectStore, EvictsTheLeastRecentlyUsedUnreferencedKey) {
  BlockObjectStore store(2);
  ASSERT_EQ(store.put({{key(1), object(1)}}, {}, {}), std::nullopt);
  ASSERT_EQ(store.put({{key(2), object(2)}}, {key(2)}, {}), std::nullopt);  // key 2 referenced
  ASSERT_EQ(store.put({{key(3), object(3)}}, {}, {}), std::nullopt);          // key 1 goes
  EXPECT_EQ(first_request(store, key(1)), -1);
  EXPECT_EQ(first_request(store, key(2)), 2);
  EXPECT_EQ(first_request(store, key(3)), 3);
  // A read moves its key to the end: key 3 is now the least recently used unreferenced one.
  ASSERT_EQ(first_request(store, key(2)), 2);
  ASSERT_EQ(store.put({{key(4), object(4)}}, {}, {key(2)}), std::nullopt);  // key 2 released, then 3 goes
  EXPECT_EQ(first_request(store, key(3)), -1);
  EXPECT_EQ(first_request(store, key(2)), 2);
}

TEST(VllmBlockObjectStore, APutThatCannotFitFailsClosedAndKeepsNoneOfItsNewKeys) {
  BlockObjectStore store(1);
  ASSERT_EQ(store.put({{key(1), object(1)}}, {key(1)}, {}), std::nullopt);
  EXPECT_EQ(store.put({{key(2), object(2)}}, {key(2)}, {}),
            "BlockObjectStoreError: auxiliary output store cannot retain the requested batch: limit=1 objects");
  EXPECT_EQ(first_request(store, key(2)), -1);
  EXPECT_EQ(first_request(store, key(1)), 1);
}

// Under patch generation-on-weight-update a key holds one object per version of its KV; the
// store counts keys, as vLLM's does.
TEST(VllmBlockObjectStore, AVersionedKeyHoldsOneObjectPerVersionInOneSlot) {
  BlockObjectStore store(1);
  ASSERT_EQ(store.put({{key(1, 7), object(0)}}, {}, {}), std::nullopt);
  ASSERT_EQ(store.put({{key(1, 8), object(1)}}, {}, {}), std::nullopt);
  EXPECT_EQ(first_request(store, key(1, 7)), 0);
  EXPECT_EQ(first_request(store, key(1, 8)), 1);
  EXPECT_EQ(first_request(store, key(1, 9)), -1);
}

}  // namespace
}  // namespace r3::vllm
