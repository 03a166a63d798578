// vllm-ascend's shrink part (fuzz/shrink/engine_shrink.hpp). The base passes reduce the vLLM part
// of the case, but an Ascend profile ties SP and the padding to the topology and the runner, so a
// base candidate (one DP rank fewer, say) would mostly fall outside the profile: each is offered
// fitted to each Ascend profile as well (the shrinker skips those outside the active one). Then
// the Ascend fields toward their defaults.
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "fuzz/engines/ascend/parts.hpp"
#include "fuzz/shrink/case_key.hpp"
#include "fuzz/shrink/engine_shrink.hpp"
#include "fuzz/shrink/passes.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/ascend/profile.hpp"

namespace r3::ascend {
namespace {

constexpr size_t kMostBasePasses = 32;

// Fitting reads the counts of every DP rank: a candidate whose tokens do not match its D (a pass
// that drops a rank first) is left to the shrinker's validation. Candidates the base rules reject
// only for the profile's sake (SP without D > 1, a capture size above M) are fitted.
bool fittable(const Case& c) {
  return fields_of(c) && c.topology.dp >= 1 && c.topology.tp >= 1 && c.max_num_tokens >= 1 &&
         c.tokens.size() == static_cast<size_t>(c.topology.dp);
}

const std::vector<ShrinkPass>& base_passes() {
  static const std::vector<ShrinkPass> passes = [] {
    std::vector<ShrinkPass> out;
    append_base_passes(out, false);
    return out;
  }();
  return passes;
}

// A case's size, which every candidate must lower: a fit can undo part of a pass's change (round
// counts up to T, turn a graph step eager), and without a measure two cases could each be offered
// from the other for ever.
int64_t size_of(const Case& c) {
  int64_t size = c.topology.dp + c.topology.tp + c.topology.ep + c.topology.sp + c.max_num_tokens + c.model.layers +
                 c.model.top_k + c.model.experts + c.layer + c.idle_dummy + static_cast<int64_t>(c.padding.mode) +
                 static_cast<int64_t>(c.padding.cudagraph_sizes.size());
  for (int64_t x : c.tokens) size += x;
  for (int64_t x : c.padding.cudagraph_sizes) size += x;
  if (const Fields* f = fields_of(c)) {
    const Fields d;
    size += (f->chip != d.chip) + f->comm.has_value() + static_cast<int64_t>(f->runner) + static_cast<int64_t>(f->graph) +
            f->lora + f->fused_mc2 + f->mega_moe + f->mc2_tokens;
  }
  return size;
}

// `c` fitted to each Ascend profile, then as it is: only those smaller than the current case,
// each once.
void offer(const Case& current, Case c, std::vector<Case>& out) {
  const int64_t limit = size_of(current);
  auto add = [&](Case x) {
    if (size_of(x) >= limit || std::find(out.begin(), out.end(), x) != out.end()) return;
    out.push_back(std::move(x));
  };
  for (Variant v : {Variant::main, Variant::aligned, Variant::v026}) add(fit_to_profile(c, v));
  add(std::move(c));
}

// Base pass I's candidates, each as it is and fitted to every Ascend profile.
template <size_t I>
void fitted(const Case& current, std::vector<Case>& out) {
  std::vector<Case> raw;
  base_passes()[I].propose(current, raw);
  for (Case& c : raw) {
    if (!fittable(c)) continue;
    offer(current, std::move(c), out);
  }
}

template <size_t... I>
constexpr std::array<void (*)(const Case&, std::vector<Case>&), sizeof...(I)> fitted_table(std::index_sequence<I...>) {
  return {&fitted<I>...};
}

// One Ascend field toward its default, fitted like the base candidates.
template <class Edit>
void toward_default(const Case& current, std::vector<Case>& out, Edit edit) {
  Case c = current;
  Fields* f = fields_of(c);
  if (!f || !edit(*f) || !fittable(c)) return;
  offer(current, std::move(c), out);
}

void graph_eager(const Case& c, std::vector<Case>& out) {
  toward_default(c, out, [](Fields& f) { return f.graph != Graph::eager && (f.graph = Graph::eager, true); });
}
void runner_v1(const Case& c, std::vector<Case>& out) {
  toward_default(c, out, [](Fields& f) { return f.runner != Runner::v1 && (f.runner = Runner::v1, true); });
}
void knobs_off(const Case& c, std::vector<Case>& out) {
  toward_default(c, out, [](Fields& f) { return f.lora && (f.lora = false, true); });
  toward_default(c, out, [](Fields& f) { return f.fused_mc2 && (f.fused_mc2 = false, true); });
  toward_default(c, out, [](Fields& f) { return f.mega_moe && (f.mega_moe = false, true); });
  toward_default(c, out, [](Fields& f) { return f.mc2_tokens != 0 && (f.mc2_tokens = 0, true); });
  toward_default(c, out, [](Fields& f) { return f.comm.has_value() && (f.comm.reset(), true); });
  toward_default(c, out, [](Fields& f) { return f.chip != Chip::a3 && (f.chip = Chip::a3, true); });
}

// A step above the MC2 capacity (A3's ALLTOALL, A5's ALLTOALL or ALLGATHER) keeps its comm type at
// a far smaller size when B is named smallest (mc2_tokens 1: a capacity of T rows) instead of
// derived from M: halve every count and M with B at 1. Without it a step whose B is derived stays
// above M/T*T rows, a thousand tokens where a handful show the same bug.
void small_capacity(const Case& c, std::vector<Case>& out) {
  const Fields* f = fields_of(c);
  if (!f || f->mc2_tokens == 1 || c.max_num_tokens < 2) return;
  Case smaller = c;
  fields_of(smaller)->mc2_tokens = 1;
  for (int64_t& n : smaller.tokens) n = (n + 1) / 2;
  smaller.max_num_tokens = (c.max_num_tokens + 1) / 2;
  if (!fittable(smaller)) return;
  offer(c, std::move(smaller), out);
}

class Shrink final : public EngineShrink {
 public:
  void append_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) const override {
    static constexpr auto table = fitted_table(std::make_index_sequence<kMostBasePasses>{});
    const std::vector<ShrinkPass>& base = base_passes();
    for (size_t i = 0; i < base.size() && i < kMostBasePasses; ++i) passes.push_back({base[i].name, base[i].part, table[i]});
    passes.push_back({"ascend graph eager", CasePart::padding, graph_eager});
    passes.push_back({"ascend runner v1", CasePart::padding, runner_v1});
    // The chip and knobs pick the comm type, which the signature names.
    (void)allow_path_change;  // a change of comm type changes the signature, which the shrinker refuses
    passes.push_back({"ascend knobs off", CasePart::path, knobs_off});
    passes.push_back({"ascend small capacity", CasePart::tokens, small_capacity});
  }
  void append_key(const Case& c, CaseKey& key) const override {
    const Fields* f = fields_of(c);
    if (!f) return;
    key.mark('A');
    key.put(static_cast<int64_t>(f->chip));
    key.put(f->comm ? static_cast<int64_t>(*f->comm) + 1 : 0);
    key.put(static_cast<int64_t>(f->runner));
    key.put(static_cast<int64_t>(f->graph));
    key.put(f->lora + 2 * f->fused_mc2 + 4 * f->mega_moe);
    key.put(f->mc2_tokens);
  }
};

}  // namespace

const EngineShrink& shrink_part() {
  static const Shrink part;
  return part;
}

}  // namespace r3::ascend
