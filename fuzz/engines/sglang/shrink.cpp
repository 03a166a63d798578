// SGLang's shrink part (fuzz/shrink/engine_shrink.hpp): the shrinker's passes for SGLang cases
// (engine "sglang"), each proposing smaller variants of an SGLang forward, most-reducing first,
// after the model and layer passes every engine shares (fuzz/shrink/passes.hpp); and the
// forward's fields in the shrinker's cache key.
#include <algorithm>
#include <functional>
#include <vector>

#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/shrink/engine_shrink.hpp"
#include "fuzz/shrink/passes.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/validate.hpp"

namespace r3::sglang {
namespace {

using Candidates = std::vector<Case>;

bool sglang_case(const Case& c) { return c.engine == sglang::engine() && forward_of(c); }
// The forward of a case sglang_case() accepted.
Forward& fields(Case& c) { return *forward_of(c); }
const Forward& fields(const Case& c) { return *forward_of(c); }

bool extend(const Case& c) { return fields(c).kind == sglang::ForwardKind::extend; }
std::vector<int64_t>& counts(Case& c) { return extend(c) ? c.tokens : fields(c).requests; }
const std::vector<int64_t>& counts(const Case& c) { return extend(c) ? c.tokens : fields(c).requests; }

int64_t bucket_alignment(const Case& c) {
  return (fields(c).tbo ? 2 : 1) * (sglang::counts_aligned(c) ? c.topology.tp : 1);
}

// After a change of alignment (tp, TBO, a2a, DP attention): every decode bucket rounded up to
// the new alignment, duplicates dropped, the last replay's bucket following its own.
void realign_buckets(Case& c) {
  sglang::Forward& f = fields(c);
  if (!f.cuda_graph) return;
  const int64_t a = bucket_alignment(c);
  auto up = [a](int64_t b) { return (b + a - 1) / a * a; };
  auto& d = f.cuda_graph->decode;
  for (int64_t& b : d) b = up(b);
  d.erase(std::unique(d.begin(), d.end()), d.end());
  if (f.last_decode_bucket) f.last_decode_bucket = up(*f.last_decode_bucket);
}

// Fewer DP ranks: whole ranks removed (at least two stay under DP attention), then DP attention
// off with one rank's count.
void fewer_dp_ranks(const Case& c, Candidates& out) {
  if (!sglang_case(c) || c.topology.dp < 2) return;
  const size_t D = static_cast<size_t>(c.topology.dp);
  for (auto [begin, end] : removable_chunks(D)) {
    if (D - (end - begin) < 2) continue;
    Case next = c;
    auto& v = counts(next);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
    next.topology.dp = static_cast<int>(v.size());
    out.push_back(std::move(next));
  }
  for (size_t r = 0; r < D; ++r) {
    Case next = c;
    next.topology.dp = 1;
    fields(next).dp_attention = false;
    counts(next) = {counts(c)[r]};
    realign_buckets(next);
    out.push_back(std::move(next));
  }
}

void smaller_tp(const Case& c, Candidates& out) {
  if (!sglang_case(c)) return;
  for (int64_t tp : smaller_values(c.topology.tp, lowest_value(Field::tp, c.engine))) {
    Case next = c;
    next.topology.tp = static_cast<int>(tp);
    realign_buckets(next);
    out.push_back(std::move(next));
  }
}

// The counts (tokens for extend, requests otherwise): all ranks under a common bound, each rank
// on its own, then the busiest rank first.
void fewer_counts(const Case& c, Candidates& out) {
  if (!sglang_case(c)) return;
  const auto& v = counts(c);
  const int64_t most = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  for (int64_t bound : smaller_values(most, 0)) {
    Case next = c;
    for (int64_t& n : counts(next)) n = std::min(n, bound);
    out.push_back(std::move(next));
  }
  for (size_t r = 0; r < v.size(); ++r) {
    for (int64_t n : smaller_values(v[r], 0)) {
      Case next = c;
      counts(next)[r] = n;
      out.push_back(std::move(next));
    }
  }
  if (!std::is_sorted(v.begin(), v.end(), std::greater<>())) {
    Case next = c;
    std::sort(counts(next).begin(), counts(next).end(), std::greater<>());
    out.push_back(std::move(next));
  }
}

// The sizes that bound a forward: max_running_requests, then the prefill chunk (or, with
// chunking off, max_prefill_tokens), the counts clamped under them; chunking on at its smallest.
void smaller_sizes(const Case& c, Candidates& out) {
  if (!sglang_case(c)) return;
  const sglang::Forward& f = fields(c);
  for (int64_t mrr : smaller_values(f.max_running_requests, 1)) {
    Case next = c;
    fields(next).max_running_requests = mrr;
    for (int64_t& r : fields(next).requests) r = std::min(r, mrr);
    out.push_back(std::move(next));
  }
  const bool chunked = f.chunked_prefill_size != -1;
  for (int64_t size : smaller_values(chunked ? f.chunked_prefill_size : f.max_prefill_tokens, 1)) {
    Case next = c;
    (chunked ? fields(next).chunked_prefill_size : fields(next).max_prefill_tokens) = size;
    for (int64_t& t : next.tokens) t = std::min(t, size);
    out.push_back(std::move(next));
  }
  // Chunking on at the same bound (its smallest form), or off at it: whichever the bug keeps.
  if (!chunked) {
    Case next = c;
    fields(next).chunked_prefill_size = f.max_prefill_tokens;
    fields(next).max_prefill_tokens = sglang::Forward{}.max_prefill_tokens;
    out.push_back(std::move(next));
  }
  if (f.max_prefill_tokens != sglang::Forward{}.max_prefill_tokens && f.chunked_prefill_size != -1) {
    Case next = c;
    fields(next).max_prefill_tokens = sglang::Forward{}.max_prefill_tokens;
    out.push_back(std::move(next));
  }
}

// No graph, then no prefill or decode graph, fewer and smaller buckets, no earlier replay.
void simpler_graphs(const Case& c, Candidates& out) {
  if (!sglang_case(c) || !fields(c).cuda_graph) return;
  const sglang::Forward& f = fields(c);
  const auto& g = *f.cuda_graph;
  {
    Case next = c;
    fields(next).cuda_graph.reset();
    fields(next).last_decode_bucket.reset();
    out.push_back(std::move(next));
  }
  if (f.last_decode_bucket) {
    Case next = c;
    fields(next).last_decode_bucket.reset();
    out.push_back(std::move(next));
  }
  // Every bucket halved at once (aligned, deduplicated): large production buckets shrink in a
  // few steps instead of one bucket at a time.
  if (!g.decode.empty() && g.decode.back() > bucket_alignment(c)) {
    Case next = c;
    const int64_t a = bucket_alignment(c);
    auto half = [a](int64_t b) { return std::max(a, b / 2 / a * a); };
    for (int64_t& b : fields(next).cuda_graph->decode) b = half(b);
    auto& d = fields(next).cuda_graph->decode;
    d.erase(std::unique(d.begin(), d.end()), d.end());
    if (fields(next).last_decode_bucket) fields(next).last_decode_bucket = half(*fields(next).last_decode_bucket);
    out.push_back(std::move(next));
  }
  auto lists = {&sglang::CudaGraphs::decode, &sglang::CudaGraphs::prefill};
  for (auto list : lists) {
    const std::vector<int64_t>& buckets = g.*list;
    const int64_t step = list == &sglang::CudaGraphs::decode ? bucket_alignment(c) : 1;
    for (auto [begin, end] : removable_chunks(buckets.size())) {
      Case next = c;
      auto& l = (*fields(next).cuda_graph).*list;
      l.erase(l.begin() + static_cast<std::ptrdiff_t>(begin), l.begin() + static_cast<std::ptrdiff_t>(end));
      const auto& d = fields(next).cuda_graph->decode;
      if (fields(next).last_decode_bucket && std::find(d.begin(), d.end(), *fields(next).last_decode_bucket) == d.end())
        fields(next).last_decode_bucket.reset();
      out.push_back(std::move(next));
    }
    for (size_t i = 0; i < buckets.size(); ++i) {
      const int64_t floor = i == 0 ? step : buckets[i - 1] + step;
      for (int64_t v : smaller_values(buckets[i] / step, floor / step)) {
        Case next = c;
        const int64_t old = buckets[i];
        ((*fields(next).cuda_graph).*list)[i] = v * step;
        if (list == &sglang::CudaGraphs::decode && fields(next).last_decode_bucket == old)
          fields(next).last_decode_bucket = v * step;
        out.push_back(std::move(next));
      }
    }
  }
}

void no_tbo(const Case& c, Candidates& out) {
  if (!sglang_case(c) || !fields(c).tbo) return;
  Case next = c;
  fields(next).tbo = false;
  out.push_back(std::move(next));
}

// verify -> decode (spec_width 1), a smaller spec width.
void simpler_forward(const Case& c, Candidates& out) {
  if (!sglang_case(c) || fields(c).kind != sglang::ForwardKind::verify) return;
  for (int64_t w : smaller_values(fields(c).spec_width, 2)) {
    Case next = c;
    fields(next).spec_width = w;
    out.push_back(std::move(next));
  }
  Case decode = c;
  fields(decode).kind = sglang::ForwardKind::decode;
  fields(decode).spec_width = 1;
  out.push_back(std::move(decode));
}

// The a2a backend toward none, then deepep, then the first of the other backends (mooncake):
// every backend of one capture class reaches the same reproducer. The capture layout changes.
void simpler_a2a(const Case& c, Candidates& out) {
  if (!sglang_case(c)) return;
  const auto rank = [](sglang::A2a a) { return static_cast<int>(a); };  // none < deepep < mooncake < ...
  for (sglang::A2a a : {sglang::A2a::none, sglang::A2a::deepep, sglang::A2a::mooncake}) {
    if (rank(a) >= rank(fields(c).a2a)) continue;
    Case next = c;
    fields(next).a2a = a;
    realign_buckets(next);
    out.push_back(std::move(next));
  }
}

class Shrink final : public EngineShrink {
 public:
  // The model and layer first, then SGLang's own passes in the order that helps a reader most.
  // The forward kind and the a2a backend decide the capture layout, the signature's path: their
  // passes come only when allowed.
  void append_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) const override {
    append_model_passes(passes);
    passes.push_back({"sglang dp", CasePart::topology, fewer_dp_ranks});
    passes.push_back({"sglang tp", CasePart::topology, smaller_tp});
    passes.push_back({"sglang counts", CasePart::tokens, fewer_counts});
    passes.push_back({"sglang sizes", CasePart::max_num_tokens, smaller_sizes});
    passes.push_back({"sglang graphs", CasePart::padding, simpler_graphs});
    passes.push_back({"sglang tbo", CasePart::calls, no_tbo});
    if (!allow_path_change) return;
    passes.push_back({"sglang forward", CasePart::path, simpler_forward});
    passes.push_back({"sglang a2a", CasePart::topology, simpler_a2a});
  }

  void append_key(const Case& c, CaseKey& k) const override {
    const Forward* forward = forward_of(c);
    if (!forward) return;
    const Forward& f = *forward;
    k.mark('s');
    k.put(f.dp_attention), k.put(static_cast<int>(f.a2a)), k.put(static_cast<int>(f.kind)), k.put(f.spec_width), k.put(f.tbo);
    k.put_list(f.requests);
    k.put(f.chunked_prefill_size), k.put(f.max_running_requests), k.put(f.max_prefill_tokens);
    k.put(f.last_decode_bucket.value_or(-1));
    if (f.cuda_graph) {
      k.put_list(f.cuda_graph->decode);
      k.put_list(f.cuda_graph->prefill);
    }
  }
};

}  // namespace

const EngineShrink& shrink_part() {
  static const Shrink part;
  return part;
}

}  // namespace r3::sglang
