#include "reference/case_measure.hpp"

#include <algorithm>
#include <functional>

#include "reference/engine_model.hpp"

namespace r3 {

std::string list_text(const std::vector<int64_t>& v) {
  constexpr size_t kShown = 8;
  std::string text = "[";
  for (size_t i = 0; i < v.size() && i < kShown; ++i) text += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > kShown) text += ", ... (" + std::to_string(v.size()) + " entries)";
  return text + "]";
}

namespace {

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
  n += c.engine.model().own_non_default_fields(c);
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
  if (before.engine == after.engine) before.engine.model().describe_own_changes(before, after, item);
  return out;
}

std::string summarize(const Case& c) { return c.engine.model().summarize(c); }

std::string summarize_base(const Case& c) {
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
