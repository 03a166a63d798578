#include "reference/case_measure.hpp"

#include <algorithm>
#include <functional>

namespace r3 {
namespace {

// Long lists read as their first entries and a count: tokens of 32 ranks fit on one line.
std::string list_text(const std::vector<int64_t>& v) {
  constexpr size_t kShown = 8;
  std::string text = "[";
  for (size_t i = 0; i < v.size() && i < kShown; ++i) text += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > kShown) text += ", ... (" + std::to_string(v.size()) + " entries)";
  return text + "]";
}

std::string padding_text(const Padding& p) {
  if (p.mode != PaddingMode::cudagraph) return std::string(to_string(p.mode));
  return "cudagraph " + list_text(p.cudagraph_sizes);
}

std::string metadata_text(const std::optional<MetadataOverride>& m) {
  if (!m) return "derived";
  std::string text = "num_tokens_across_dp ";
  text += m->num_tokens_across_dp ? list_text(*m->num_tokens_across_dp) : "derived";
  text += ", local_sizes ";
  text += !m->local_sizes_given ? "derived" : m->local_sizes ? list_text(*m->local_sizes) : "unset";
  return text;
}

std::string flag(bool b) { return b ? "true" : "false"; }

std::string buckets_text(const std::optional<sglang::CudaGraphs>& g) {
  if (!g) return "none";
  return "decode " + list_text(g->decode) + " prefill " + list_text(g->prefill);
}

std::string optional_text(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "none"; }

// SGLang's fields beyond the shared ones (topology, model, layer, tokens, note, expect).
int sglang_non_default_fields(const sglang::Forward& f) {
  const sglang::Forward d;
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

void describe_sglang_changes(const sglang::Forward& a, const sglang::Forward& b,
                             const std::function<void(const char*, const std::string&, const std::string&)>& item) {
  auto num = [](int64_t v) { return std::to_string(v); };
  item("dp_attention", flag(a.dp_attention), flag(b.dp_attention));
  item("a2a", std::string(sglang::to_string(a.a2a)), std::string(sglang::to_string(b.a2a)));
  item("forward", std::string(sglang::to_string(a.kind)), std::string(sglang::to_string(b.kind)));
  item("requests", list_text(a.requests), list_text(b.requests));
  item("spec_width", num(a.spec_width), num(b.spec_width));
  item("cuda_graph", buckets_text(a.cuda_graph), buckets_text(b.cuda_graph));
  item("last_decode_bucket", optional_text(a.last_decode_bucket), optional_text(b.last_decode_bucket));
  item("tbo", flag(a.tbo), flag(b.tbo));
  item("chunked_prefill_size", num(a.chunked_prefill_size), num(b.chunked_prefill_size));
  item("max_running_requests", num(a.max_running_requests), num(b.max_running_requests));
  item("max_prefill_tokens", num(a.max_prefill_tokens), num(b.max_prefill_tokens));
}

std::string summarize_sglang(const Case& c) {
  const sglang::Forward& f = *c.sglang;
  std::string text = "sglang dp " + std::to_string(c.topology.dp) + " tp " + std::to_string(c.topology.tp);
  if (f.dp_attention) text += " dp-attention";
  text += ", a2a " + std::string(sglang::to_string(f.a2a)) + ", " + std::string(sglang::to_string(f.kind));
  text += f.kind == sglang::ForwardKind::extend ? ", tokens " + list_text(c.tokens) : ", requests " + list_text(f.requests);
  if (f.kind == sglang::ForwardKind::verify) text += " x " + std::to_string(f.spec_width);
  if (f.cuda_graph) {
    text += ", graphs " + buckets_text(f.cuda_graph);
    if (f.last_decode_bucket) text += " (last decode bucket " + std::to_string(*f.last_decode_bucket) + ")";
  }
  if (f.tbo) text += ", tbo";
  text += ", cps " + std::to_string(f.chunked_prefill_size) + " mrr " + std::to_string(f.max_running_requests);
  if (f.max_prefill_tokens != sglang::Forward{}.max_prefill_tokens)
    text += " max_prefill_tokens " + std::to_string(f.max_prefill_tokens);
  text += ", L " + std::to_string(c.model.layers) + " K " + std::to_string(c.model.top_k) + " E " +
          std::to_string(c.model.experts) + ", layer " + std::to_string(c.layer);
  return text;
}

}  // namespace

int non_default_fields(const Case& c) {
  const Case d;
  int n = 0;
  n += c.topology.dp != d.topology.dp;
  n += c.topology.tp != d.topology.tp;
  n += c.topology.ep != d.topology.ep;
  n += c.topology.sp != d.topology.sp;
  n += c.model.layers != d.model.layers;
  n += c.model.top_k != d.model.top_k;
  n += c.model.experts != d.model.experts;
  n += c.max_num_tokens != d.max_num_tokens;
  n += static_cast<int>(std::count_if(c.tokens.begin(), c.tokens.end(), [](int64_t t) { return t != 0; }));
  n += c.padding.mode != d.padding.mode;
  n += static_cast<int>(c.padding.cudagraph_sizes.size());
  n += c.idle_dummy != d.idle_dummy;
  n += c.path != d.path;
  n += c.monolithic != d.monolithic;
  n += c.layer != d.layer;
  n += c.microbatches != d.microbatches;
  n += c.dp_chunk.has_value();
  if (c.metadata) {
    n += c.metadata->num_tokens_across_dp ? static_cast<int>(c.metadata->num_tokens_across_dp->size()) : 0;
    n += c.metadata->local_sizes_given ? 1 + static_cast<int>(c.metadata->local_sizes.value_or(std::vector<int64_t>{}).size()) : 0;
  }
  n += !c.note.empty();
  n += c.expect.has_value();
  if (c.sglang) n += sglang_non_default_fields(*c.sglang);
  return n;
}

std::vector<std::string> describe_changes(const Case& before, const Case& after) {
  std::vector<std::string> out;
  auto item = [&](const char* name, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(std::string(name) + " " + a + " -> " + b);
  };
  auto num = [](int64_t v) { return std::to_string(v); };
  item("dp", num(before.topology.dp), num(after.topology.dp));
  item("tp", num(before.topology.tp), num(after.topology.tp));
  item("ep", flag(before.topology.ep), flag(after.topology.ep));
  item("sp", flag(before.topology.sp), flag(after.topology.sp));
  item("tokens", list_text(before.tokens), list_text(after.tokens));
  item("max_num_tokens", num(before.max_num_tokens), num(after.max_num_tokens));
  item("layers", num(before.model.layers), num(after.model.layers));
  item("layer", num(before.layer), num(after.layer));
  item("top_k", num(before.model.top_k), num(after.model.top_k));
  item("experts", num(before.model.experts), num(after.model.experts));
  item("padding", padding_text(before.padding), padding_text(after.padding));
  item("idle_dummy", flag(before.idle_dummy), flag(after.idle_dummy));
  item("microbatches", num(before.microbatches), num(after.microbatches));
  item("dp_chunk", before.dp_chunk ? num(*before.dp_chunk) : "none", after.dp_chunk ? num(*after.dp_chunk) : "none");
  item("monolithic", flag(before.monolithic), flag(after.monolithic));
  item("path", std::string(to_string(before.path)), std::string(to_string(after.path)));
  item("metadata", metadata_text(before.metadata), metadata_text(after.metadata));
  if (before.sglang && after.sglang) describe_sglang_changes(*before.sglang, *after.sglang, item);
  return out;
}

std::string summarize(const Case& c) {
  if (c.engine == Engine::sglang) return summarize_sglang(c);
  std::string text = "dp " + std::to_string(c.topology.dp) + " tp " + std::to_string(c.topology.tp);
  if (c.topology.ep) text += " ep";
  if (c.topology.sp) text += " sp";
  text += ", M " + std::to_string(c.max_num_tokens) + ", tokens " + list_text(c.tokens);
  text += ", L " + std::to_string(c.model.layers) + " K " + std::to_string(c.model.top_k) + " E " +
          std::to_string(c.model.experts);
  text += ", padding " + padding_text(c.padding);
  if (c.idle_dummy) text += " + idle dummy";
  text += ", path " + std::string(to_string(c.path));
  if (c.monolithic) text += " monolithic";
  text += ", layer " + std::to_string(c.layer);
  if (c.microbatches > 1) text += ", microbatches " + std::to_string(c.microbatches);
  if (c.dp_chunk) text += ", dp_chunk " + std::to_string(*c.dp_chunk);
  if (c.metadata) text += ", metadata {" + metadata_text(c.metadata) + "}";
  return text;
}

}  // namespace r3
