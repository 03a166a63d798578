// How an SGLang case reads: its one-line summary, and the measures of its own fields that the
// shrinker reports (reference/case_measure.hpp).
#include "reference/engines/sglang/measure.hpp"

#include <algorithm>

#include "reference/case_measure.hpp"
#include "reference/engines/sglang/fields.hpp"

namespace r3::sglang {
namespace {

std::string flag(bool b) { return b ? "true" : "false"; }

std::string buckets_text(const std::optional<CudaGraphs>& g) {
  if (!g) return "none";
  return "decode " + list_text(g->decode) + " prefill " + list_text(g->prefill);
}

std::string optional_text(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "none"; }

}  // namespace

// SGLang's fields beyond the shared ones (topology, model, layer, tokens, note, expect).
int own_non_default_fields(const Forward& f) {
  const Forward d;
  int n = 0;
  n += f.dp_attention != d.dp_attention;
  n += f.a2a != d.a2a;
  n += f.kind != d.kind;
  n += static_cast<int>(std::count_if(f.requests.begin(), f.requests.end(), [](int64_t r) { return r != 0; }));
  n += f.spec_width != d.spec_width;
  if (f.cuda_graph) n += 1 + static_cast<int>(f.cuda_graph->decode.size() + f.cuda_graph->prefill.size());
  n += f.last_decode_bucket.has_value();
  n += f.tbo;
  n += f.chunked_prefill_size != d.chunked_prefill_size;
  n += f.max_running_requests != d.max_running_requests;
  n += f.max_prefill_tokens != d.max_prefill_tokens;
  return n;
}

void describe_own_changes(const Forward& a, const Forward& b, const ChangeItem& item) {
  auto num = [](int64_t v) { return std::to_string(v); };
  item("dp_attention", flag(a.dp_attention), flag(b.dp_attention));
  item("a2a", std::string(to_string(a.a2a)), std::string(to_string(b.a2a)));
  item("forward", std::string(to_string(a.kind)), std::string(to_string(b.kind)));
  item("requests", list_text(a.requests), list_text(b.requests));
  item("spec_width", num(a.spec_width), num(b.spec_width));
  item("cuda_graph", buckets_text(a.cuda_graph), buckets_text(b.cuda_graph));
  item("last_decode_bucket", optional_text(a.last_decode_bucket), optional_text(b.last_decode_bucket));
  item("tbo", flag(a.tbo), flag(b.tbo));
  item("chunked_prefill_size", num(a.chunked_prefill_size), num(b.chunked_prefill_size));
  item("max_running_requests", num(a.max_running_requests), num(b.max_running_requests));
  item("max_prefill_tokens", num(a.max_prefill_tokens), num(b.max_prefill_tokens));
}

std::string summarize(const Case& c) {
  const Forward& f = *forward_of(c);
  std::string text = "sglang dp " + std::to_string(c.topology.dp) + " tp " + std::to_string(c.topology.tp);
  if (f.dp_attention) text += " dp-attention";
  text += ", a2a " + std::string(to_string(f.a2a)) + ", " + std::string(to_string(f.kind));
  text += f.kind == ForwardKind::extend ? ", tokens " + list_text(c.tokens) : ", requests " + list_text(f.requests);
  if (f.kind == ForwardKind::verify) text += " x " + std::to_string(f.spec_width);
  if (f.cuda_graph) {
    text += ", graphs " + buckets_text(f.cuda_graph);
    if (f.last_decode_bucket) text += " (last decode bucket " + std::to_string(*f.last_decode_bucket) + ")";
  }
  if (f.tbo) text += ", tbo";
  text += ", cps " + std::to_string(f.chunked_prefill_size) + " mrr " + std::to_string(f.max_running_requests);
  if (f.max_prefill_tokens != Forward{}.max_prefill_tokens)
    text += " max_prefill_tokens " + std::to_string(f.max_prefill_tokens);
  text += ", L " + std::to_string(c.model.layers) + " K " + std::to_string(c.model.top_k) + " E " +
          std::to_string(c.model.experts) + ", layer " + std::to_string(c.layer);
  return text;
}

}  // namespace r3::sglang
