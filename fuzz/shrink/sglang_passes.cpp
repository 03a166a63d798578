#include "fuzz/shrink/sglang_passes.hpp"

#include <algorithm>
#include <functional>

#include "reference/engines/sglang/validate.hpp"

namespace r3 {
namespace {

using Candidates = std::vector<Case>;

bool sglang_case(const Case& c) { return c.engine == Engine::sglang && c.sglang; }

bool extend(const Case& c) { return c.sglang->kind == sglang::ForwardKind::extend; }
std::vector<int64_t>& counts(Case& c) { return extend(c) ? c.tokens : c.sglang->requests; }
const std::vector<int64_t>& counts(const Case& c) { return extend(c) ? c.tokens : c.sglang->requests; }

int64_t bucket_alignment(const Case& c) {
  return (c.sglang->tbo ? 2 : 1) * (sglang::counts_aligned(c) ? c.topology.tp : 1);
}

// After a change of alignment (tp, TBO, a2a, DP attention): every decode bucket rounded up to
// the new alignment, duplicates dropped, the last replay's bucket following its own.
void realign_buckets(Case& c) {
  sglang::Forward& f = *c.sglang;
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
    next.sglang->dp_attention = false;
    counts(next) = {counts(c)[r]};
    realign_buckets(next);
    out.push_back(std::move(next));
  }
}

void smaller_tp(const Case& c, Candidates& out) {
  if (!sglang_case(c)) return;
  for (int64_t tp : smaller_values(c.topology.tp, lowest_value(Field::tp))) {
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
  const sglang::Forward& f = *c.sglang;
  for (int64_t mrr : smaller_values(f.max_running_requests, 1)) {
    Case next = c;
    next.sglang->max_running_requests = mrr;
    for (int64_t& r : next.sglang->requests) r = std::min(r, mrr);
    out.push_back(std::move(next));
  }
  const bool chunked = f.chunked_prefill_size != -1;
  for (int64_t size : smaller_values(chunked ? f.chunked_prefill_size : f.max_prefill_tokens, 1)) {
    Case next = c;
    (chunked ? next.sglang->chunked_prefill_size : next.sglang->max_prefill_tokens) = size;
    for (int64_t& t : next.tokens) t = std::min(t, size);
    out.push_back(std::move(next));
  }
  // Chunking on at the same bound (its smallest form), or off at it: whichever the bug keeps.
  if (!chunked) {
    Case next = c;
    next.sglang->chunked_prefill_size = f.max_prefill_tokens;
    next.sglang->max_prefill_tokens = sglang::Forward{}.max_prefill_tokens;
    out.push_back(std::move(next));
  }
  if (f.max_prefill_tokens != sglang::Forward{}.max_prefill_tokens && f.chunked_prefill_size != -1) {
    Case next = c;
    next.sglang->max_prefill_tokens = sglang::Forward{}.max_prefill_tokens;
    out.push_back(std::move(next));
  }
}

// No graph, then no prefill or decode graph, fewer and smaller buckets, no earlier replay.
void simpler_graphs(const Case& c, Candidates& out) {
  if (!sglang_case(c) || !c.sglang->cuda_graph) return;
  const sglang::Forward& f = *c.sglang;
  const auto& g = *f.cuda_graph;
  {
    Case next = c;
    next.sglang->cuda_graph.reset();
    next.sglang->last_decode_bucket.reset();
    out.push_back(std::move(next));
  }
  if (f.last_decode_bucket) {
    Case next = c;
    next.sglang->last_decode_bucket.reset();
    out.push_back(std::move(next));
  }
  // Every bucket halved at once (aligned, deduplicated): large production buckets shrink in a
  // few steps instead of one bucket at a time.
  if (!g.decode.empty() && g.decode.back() > bucket_alignment(c)) {
    Case next = c;
    const int64_t a = bucket_alignment(c);
    auto half = [a](int64_t b) { return std::max(a, b / 2 / a * a); };
    for (int64_t& b : next.sglang->cuda_graph->decode) b = half(b);
    auto& d = next.sglang->cuda_graph->decode;
    d.erase(std::unique(d.begin(), d.end()), d.end());
    if (next.sglang->last_decode_bucket) next.sglang->last_decode_bucket = half(*next.sglang->last_decode_bucket);
    out.push_back(std::move(next));
  }
  auto lists = {&sglang::CudaGraphs::decode, &sglang::CudaGraphs::prefill};
  for (auto list : lists) {
    const std::vector<int64_t>& buckets = g.*list;
    const int64_t step = list == &sglang::CudaGraphs::decode ? bucket_alignment(c) : 1;
    for (auto [begin, end] : removable_chunks(buckets.size())) {
      Case next = c;
      auto& l = (*next.sglang->cuda_graph).*list;
      l.erase(l.begin() + static_cast<std::ptrdiff_t>(begin), l.begin() + static_cast<std::ptrdiff_t>(end));
      const auto& d = next.sglang->cuda_graph->decode;
      if (next.sglang->last_decode_bucket && std::find(d.begin(), d.end(), *next.sglang->last_decode_bucket) == d.end())
        next.sglang->last_decode_bucket.reset();
      out.push_back(std::move(next));
    }
    for (size_t i = 0; i < buckets.size(); ++i) {
      const int64_t floor = i == 0 ? step : buckets[i - 1] + step;
      for (int64_t v : smaller_values(buckets[i] / step, floor / step)) {
        Case next = c;
        const int64_t old = buckets[i];
        ((*next.sglang->cuda_graph).*list)[i] = v * step;
        if (list == &sglang::CudaGraphs::decode && next.sglang->last_decode_bucket == old)
          next.sglang->last_decode_bucket = v * step;
        out.push_back(std::move(next));
      }
    }
  }
}

void no_tbo(const Case& c, Candidates& out) {
  if (!sglang_case(c) || !c.sglang->tbo) return;
  Case next = c;
  next.sglang->tbo = false;
  out.push_back(std::move(next));
}

// verify -> decode (spec_width 1), a smaller spec width.
void simpler_forward(const Case& c, Candidates& out) {
  if (!sglang_case(c) || c.sglang->kind != sglang::ForwardKind::verify) return;
  for (int64_t w : smaller_values(c.sglang->spec_width, 2)) {
    Case next = c;
    next.sglang->spec_width = w;
    out.push_back(std::move(next));
  }
  Case decode = c;
  decode.sglang->kind = sglang::ForwardKind::decode;
  decode.sglang->spec_width = 1;
  out.push_back(std::move(decode));
}

// The a2a backend toward none, then deepep, then the first of the other backends (mooncake):
// every backend of one capture class reaches the same reproducer. The capture layout changes.
void simpler_a2a(const Case& c, Candidates& out) {
  if (!sglang_case(c)) return;
  const auto rank = [](sglang::A2a a) { return static_cast<int>(a); };  // none < deepep < mooncake < ...
  for (sglang::A2a a : {sglang::A2a::none, sglang::A2a::deepep, sglang::A2a::mooncake}) {
    if (rank(a) >= rank(c.sglang->a2a)) continue;
    Case next = c;
    next.sglang->a2a = a;
    realign_buckets(next);
    out.push_back(std::move(next));
  }
}

}  // namespace

void append_sglang_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) {
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

}  // namespace r3
