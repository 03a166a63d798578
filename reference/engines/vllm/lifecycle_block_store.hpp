// vLLM main's BlockObjectStore (vllm/distributed/aux_output_connector/store.py @ 159bfe5): the
// worker's bounded store of immutable route blocks, as the AuxOutput walk (lifecycle_blocks.cpp)
// publishes to it and materializes from it.
//  - put(objects, retain_keys, release_keys): of the objects under one key the last wins
//    (`unique = {obj.key: obj for obj in objects}`); retains, then releases (a key whose count
//    reaches zero is "terminal"); every key of the batch joins the LRU order at its end, then the
//    terminal ones move there; the least recently used keys that no request references and the
//    batch does not protect (its keys less the terminal ones) are evicted until at most `slots`
//    keys remain, and when too few can go the put fails ("cannot retain the requested batch"),
//    dropping the batch's keys that had no object; last, each key of the batch still present and
//    without an object gets this batch's (an existing object stays: across puts the first writer
//    wins).
//  - get_concatenated(keys): every key must be present (else "does not exist; the object may
//    have been evicted"); each moves to the LRU end.
// Capacity: AuxOutputWorkerConnector.__init__ (worker.py @ f99d53b) sizes the store, when
// aux_output_config.max_bytes is None, to num_blocks * hashes_per_kv_block objects: one per KV
// block of the pool, the null block included.
// Under patch generation-on-weight-update a key's entry holds one object per weight version of
// the block's KV (BlockKey::versions): references, the LRU order and the capacity count keys, as
// vLLM's do, so the patch changes which rows a read gets and nothing of what the store keeps.
#pragma once

#include <compare>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reference/trace/lifecycle.hpp"

namespace r3::vllm {

// routed_experts_keys: "generation / block hash"; `versions` folds the weight versions of the
// block's KV into the key only under patch generation-on-weight-update.
struct BlockKey {
  int generation = 0;
  uint64_t hash = 0;
  uint64_t versions = 0;
  auto operator<=>(const BlockKey&) const = default;
};

using BlockObject = std::vector<RouteRef>;

class BlockObjectStore {
 public:
  // At most `slots` objects; 0: unbounded (the fixed model's store, sized for every version).
  explicit BlockObjectStore(int64_t slots) : slots_(slots) {}

  // The error text of a failed put (BlockObjectStoreError), else nullopt.
  std::optional<std::string> put(const std::vector<std::pair<BlockKey, BlockObject>>& objects,
                                 const std::vector<BlockKey>& retain, const std::vector<BlockKey>& release);

  // The objects under `keys`, in order, or nullopt when one is missing (nothing moves then).
  std::optional<std::vector<const BlockObject*>> get(const std::vector<BlockKey>& keys);

  int64_t slots() const { return slots_; }

 private:
  struct Entry {
    std::list<BlockKey>::iterator at;
    std::map<uint64_t, BlockObject> objects;  // by BlockKey::versions (one, 0, without the patch)
  };
  static BlockKey slot_of(BlockKey k) {
    k.versions = 0;
    return k;
  }
  void touch(const BlockKey& k);  // into the LRU order, or to its end
  void remove(const BlockKey& k);

  int64_t slots_;
  std::list<BlockKey> lru_;  // front: least recently used
  std::map<BlockKey, Entry> entries_;
  std::map<BlockKey, int64_t> references_;
};

}  // namespace r3::vllm
