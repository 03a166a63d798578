#include "reference/engines/sglang/lifecycle_step_case.hpp"

#include <algorithm>
#include <utility>

#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/layout.hpp"
#include "reference/engines/sglang/lifecycle_knobs.hpp"
#include "reference/engines/sglang/profile.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {
namespace {

// The case of the step without last_decode_bucket (what an earlier step's replay sets).
std::optional<Case> bare_case(const Trace& t, const Timeline& timeline, int step) {
  const TraceStep& spec = t.steps[static_cast<size_t>(step)];
  const StepView& view = timeline.steps[static_cast<size_t>(step)];
  if (spec.run.empty()) return std::nullopt;
  bool extend = false, decode = false, verify = false;
  for (const Work& w : spec.run) {
    extend = extend || w.kind == Work::Kind::extend;
    decode = decode || w.kind == Work::Kind::decode;
    verify = verify || w.kind == Work::Kind::verify;
  }
  if ((decode && verify) || (extend && verify)) return std::nullopt;
  const LifecycleKnobs knobs = knobs_of(t);
  Forward f;
  f.dp_attention = knobs.dp_attention;
  f.a2a = knobs.a2a;
  f.chunked_prefill_size = t.config.chunk;
  f.max_prefill_tokens = t.config.token_budget;
  f.max_running_requests = t.config.token_budget;
  if (!t.config.cuda_graph_decode.empty()) f.cuda_graph = CudaGraphs{t.config.cuda_graph_decode, {}};
  Case c;
  c.engine = engine();
  c.topology.dp = t.dp;
  c.topology.tp = t.tp;
  c.model = t.model;
  std::vector<int64_t> counts;
  for (const auto& rows : view.rows) counts.push_back(static_cast<int64_t>(rows.size()));
  if (extend) {
    f.kind = ForwardKind::extend;
    c.tokens = std::move(counts);
  } else if (verify) {
    f.kind = ForwardKind::verify;
    f.spec_width = t.config.spec->width + 1;
    for (int64_t& n : counts) n /= f.spec_width;
    f.requests = std::move(counts);
  } else {
    f.kind = ForwardKind::decode;
    f.requests = std::move(counts);
  }
  c.engine_fields.emplace<Forward>(std::move(f));
  if (!sglang::validate(c).ok()) return std::nullopt;
  return c;
}

// decode_cuda_graph_runner.py, replay: the runner's bs attribute is the bucket it replayed last;
// the next forward's window may read it (docs/layout-contract.md section 11). The bucket the
// runner holds after a step with case `c` (none when its ranks replayed different ones), or
// `before` when the step replayed no decode graph.
std::optional<int64_t> bucket_after(const std::optional<Case>& c, std::optional<int64_t> before) {
  if (!c) return before;
  const std::optional<std::vector<int64_t>> replayed = replayed_decode_buckets(*c);
  if (!replayed) return before;
  const std::vector<int64_t>& bs = *replayed;
  if (bs.empty() || std::any_of(bs.begin(), bs.end(), [&](int64_t b) { return b != bs.front(); })) return std::nullopt;
  return bs.front();
}

std::optional<int64_t> last_replayed_bucket(const Trace& t, const Timeline& timeline, int step) {
  std::optional<int64_t> bucket;
  for (int m = 0; m < step; ++m) bucket = bucket_after(bare_case(t, timeline, m), bucket);
  return bucket;
}

// The step's case with the runner's bucket set, if it is valid and in the profile.
std::optional<Case> finished_case(std::optional<Case> c, std::optional<int64_t> bucket, Profile profile) {
  if (!c) return std::nullopt;
  forward_of(*c)->last_decode_bucket = bucket;
  if (!sglang::validate(*c).ok() || !sglang::check_profile(*c, profile).ok()) return std::nullopt;
  return c;
}

}  // namespace

Profile trace_profile(const Trace& t) {
  if (t.profile && !t.profile->is_any() && t.profile->engine() == engine()) return *t.profile;
  return Profile::of(engine(), 0);
}

std::optional<Case> step_case_in(const Trace& t, const Timeline& timeline, int step, Profile profile) {
  return finished_case(bare_case(t, timeline, step), last_replayed_bucket(t, timeline, step), profile);
}

std::vector<std::optional<Case>> step_cases_in(const Trace& t, const Timeline& timeline, Profile profile) {
  std::vector<std::optional<Case>> out;
  out.reserve(timeline.steps.size());
  std::optional<int64_t> bucket;
  for (size_t n = 0; n < timeline.steps.size(); ++n) {
    std::optional<Case> bare = bare_case(t, timeline, static_cast<int>(n));
    const std::optional<int64_t> next = bucket_after(bare, bucket);
    out.push_back(finished_case(std::move(bare), bucket, profile));
    bucket = next;
  }
  return out;
}

std::vector<int64_t> padded_rows(const Trace& t, const Timeline& timeline, int step) {
  std::vector<int64_t> out;
  for (const auto& rows : timeline.steps[static_cast<size_t>(step)].rows)
    out.push_back(static_cast<int64_t>(rows.size()));
  const std::optional<Case> c = bare_case(t, timeline, step);
  if (!c) return out;
  const Result<Step> derived = sglang::derive_step(*c);
  if (!derived.ok() || forward_of(*derived) == nullptr) return out;
  const std::vector<int64_t>& padded = forward_of(*derived)->padded;
  for (size_t d = 0; d < out.size() && d < padded.size(); ++d) out[d] = std::max(out[d], padded[d]);
  return out;
}

}  // namespace r3::sglang
