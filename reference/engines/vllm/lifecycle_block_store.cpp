// BlockObjectStore as store.py @ 159bfe5 implements it (lifecycle_block_store.hpp).
#include "reference/engines/vllm/lifecycle_block_store.hpp"

#include <set>

#include "reference/error.hpp"

namespace r3::vllm {

void BlockObjectStore::touch(const BlockKey& k) {
  const auto found = entries_.find(k);
  if (found == entries_.end()) {
    lru_.push_back(k);
    entries_.emplace(k, Entry{std::prev(lru_.end()), {}});
    return;
  }
  lru_.splice(lru_.end(), lru_, found->second.at);
}

void BlockObjectStore::remove(const BlockKey& k) {
  const auto found = entries_.find(k);
  if (found == entries_.end()) return;
  lru_.erase(found->second.at);
  entries_.erase(found);
}

std::optional<std::string> BlockObjectStore::put(const std::vector<std::pair<BlockKey, BlockObject>>& objects,
                                                 const std::vector<BlockKey>& retain,
                                                 const std::vector<BlockKey>& release) {
  // `unique`: keys in the order they first appear, each with its last object.
  std::vector<BlockKey> order;
  std::map<BlockKey, const BlockObject*> last;
  for (const auto& [k, object] : objects) {
    if (last.emplace(k, &object).second) {
      order.push_back(k);
    } else {
      last[k] = &object;
    }
  }
  std::vector<BlockKey> slots;  // the entries the batch touches, in order
  std::set<BlockKey> seen;
  for (const BlockKey& k : order)
    if (seen.insert(slot_of(k)).second) slots.push_back(slot_of(k));
  for (const BlockKey& k : retain) ++references_[slot_of(k)];
  std::vector<BlockKey> terminal;
  for (const BlockKey& k : release) {
    const auto found = references_.find(slot_of(k));
    R3_CHECK(found != references_.end(), "the walk releases only keys it retained");
    if (--found->second == 0) {
      terminal.push_back(found->first);
      references_.erase(found);
    }
  }
  for (const BlockKey& k : slots) touch(k);
  for (const BlockKey& k : terminal)
    if (entries_.count(k)) touch(k);
  std::set<BlockKey> protect(slots.begin(), slots.end());
  for (const BlockKey& k : terminal) protect.erase(k);

  const auto excess = static_cast<int64_t>(lru_.size()) - slots_;
  if (slots_ > 0 && excess > 0) {
    std::vector<BlockKey> victims;
    for (const BlockKey& k : lru_) {
      if (static_cast<int64_t>(victims.size()) == excess) break;
      if (!references_.count(k) && !protect.count(k)) victims.push_back(k);
    }
    if (static_cast<int64_t>(victims.size()) != excess) {
      for (const BlockKey& k : slots) {
        const auto found = entries_.find(k);
        if (found != entries_.end() && found->second.objects.empty()) remove(k);
      }
      return "BlockObjectStoreError: auxiliary output store cannot retain the requested batch: limit=" +
             std::to_string(slots_) + " objects";
    }
    for (const BlockKey& k : victims) remove(k);
  }
  for (const BlockKey& k : order) {
    const auto found = entries_.find(slot_of(k));
    if (found == entries_.end()) continue;
    found->second.objects.try_emplace(k.versions, *last[k]);  // an existing object stays
  }
  return std::nullopt;
}

std::optional<std::vector<const BlockObject*>> BlockObjectStore::get(const std::vector<BlockKey>& keys) {
  std::vector<const BlockObject*> out;
  for (const BlockKey& k : keys) {
    const auto found = entries_.find(slot_of(k));
    if (found == entries_.end()) return std::nullopt;
    const auto object = found->second.objects.find(k.versions);
    if (object == found->second.objects.end()) return std::nullopt;
    out.push_back(&object->second);
  }
  for (const BlockKey& k : keys) touch(slot_of(k));
  return out;
}

}  // namespace r3::vllm
