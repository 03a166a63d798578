#include "fuzz/campaign/seen_signatures.hpp"

namespace r3 {

void SeenSignatures::add(const Signature& signature, size_t failure) {
  std::lock_guard lock(mutex_);
  added_.emplace_back(signature, failure);
  count_.store(added_.size(), std::memory_order_release);
}

std::optional<size_t> SeenSignatures::View::find(const Signature& signature) {
  if (seen_->count_.load(std::memory_order_acquire) != copied_) {
    std::lock_guard lock(seen_->mutex_);
    for (; copied_ < seen_->added_.size(); ++copied_) known_.insert(seen_->added_[copied_]);
  }
  if (auto it = known_.find(signature); it != known_.end()) return it->second;
  return std::nullopt;
}

}  // namespace r3
