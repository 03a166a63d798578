// check(): the format's SGLang rules. Sources: upstream main 30cb848, paths under python/sglang/srt/.
#include "reference/engines/sglang/lifecycle_check.hpp"

#include <string>

#include "reference/engines/sglang/lifecycle_knobs.hpp"

namespace r3::sglang {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

Status check_knobs(const Trace& t) {
  R3_TRY(const LifecycleKnobs k, parse_knobs(t));
  if (k.dp_attention && t.dp < 2) {
    return Error{
        "knobs.topology.dp_attention: true needs topology.dp > 1 (DP attention runs dp > 1 attention-DP ranks)"};
  }
  if (k.spec_algorithm == SpecAlgorithm::ngram && !t.config.spec) {
    return Error{"knobs.config.spec_algorithm: ngram needs config.spec (its width and whether the drafts form a tree)"};
  }
  if (k.overlap_copy_race && !t.config.overlap) {
    return Error{
        "knobs.config.overlap_copy_race: needs config.overlap (the race is the overlap scheduler's deferred copy)"};
  }
  return ok_status();
}

// The radix tree matches whole pages: mem_cache/radix_cache.py, match_prefix truncates the key
// with RadixKey.page_aligned, and RadixKey.match rounds down to the page size. (A hit never
// reaches the last known token either: schedule_batch.py, Req._compute_max_prefix_len, which
// build_timeline() already checks.)
Status check_hits(const Trace& t) {
  for (size_t n = 0; n < t.steps.size(); ++n) {
    const std::vector<TraceEvent>& events = t.steps[n].events;
    for (size_t e = 0; e < events.size(); ++e) {
      if (events[e].kind != TraceEvent::Kind::hit || events[e].len % t.config.page == 0) continue;
      return Error{"steps[" + str(static_cast<int64_t>(n)) + "].events[" + str(static_cast<int64_t>(e)) +
                   "].hit: request " + str(events[e].req) + " hits " + str(events[e].len) +
                   " positions, not a multiple of config.page = " + str(t.config.page) +
                   " (SGLang's radix tree matches whole pages: mem_cache/radix_cache.py, "
                   "RadixKey.page_aligned)"};
    }
  }
  return ok_status();
}

}  // namespace

Status check_lifecycle_trace(const Trace& t, const Timeline& timeline) {
  (void)timeline;
  R3_TRY_STATUS(check_knobs(t));
  R3_TRY_STATUS(check_hits(t));
  return ok_status();
}

}  // namespace r3::sglang
