// The failure signatures the merge has seen, as the workers see them. A case that fails with one
// of them is only another occurrence of a failure already reported (the merge had merged every
// case before it, the first occurrence among them), so its worker hands over the failure's number
// and none of its words: no copy of the judgement's words for every failing case, and nothing for
// the merge to compare but a number. The merge adds each signature once (a few dozen in a run); a
// worker copies the new ones when their count moves, and a stale copy only means words kept for
// nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "fuzz/oracle/verdict.hpp"

namespace r3 {

class SeenSignatures {
 public:
  // By the merge: `signature` is failure number `failure` of the report.
  void add(const Signature& signature, size_t failure);

  // One worker's copy.
  class View {
   public:
    explicit View(const SeenSignatures& seen) : seen_(&seen) {}
    // The failure number of a signature the merge has seen, nullopt for one it may not have.
    std::optional<size_t> find(const Signature& signature);

   private:
    const SeenSignatures* seen_;
    std::map<Signature, size_t> known_;
    size_t copied_ = 0;  // entries of seen_->added_ in known_
  };

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<Signature, size_t>> added_;  // under mutex_, in the order added
  std::atomic<size_t> count_{0};                     // added_.size(), read without the lock
};

}  // namespace r3
