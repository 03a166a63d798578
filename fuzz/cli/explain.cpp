#include "fuzz/cli/explain.hpp"

#include <algorithm>
#include <optional>
#include <sstream>

#include "fuzz/cli/engine_explain.hpp"
#include "fuzz/cli/explain_table.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/capturer.hpp"
#include "reference/engine_model.hpp"
#include "reference/policy.hpp"

namespace r3 {
namespace {

using ojson = nlohmann::ordered_json;
using namespace explain_text;  // NOLINT: the bounded tables and lists every explanation prints

ojson range_json(const std::optional<RowRange>& r) {
  return r ? ojson::array({r->lo, r->hi}) : ojson(nullptr);
}

ojson list_json(const std::optional<std::vector<int64_t>>& v) { return v ? ojson(*v) : ojson(nullptr); }

std::string range_text(const std::optional<RowRange>& r) {
  return r ? "[" + std::to_string(r->lo) + ", " + std::to_string(r->hi) + ")" : "-";
}

// Rows capture() receives on view `v` of a call.
int64_t received_rows(const RankView& v) { return v.rows.size(); }

std::string received_text(Path path, const Call& call, const RankView& v) {
  switch (path) {
    case Path::single: return "its batch";
    case Path::gathered: return "the gathered batch";
    case Path::local: return "its DP rank's batch";
    case Path::sp_shard:
      return "its SP shard (TP all-gather: " + std::to_string(call.tensors[static_cast<size_t>(v.tp_gathered)].rows()) +
             " rows)";
  }
  return "?";
}

std::string severity_text(Severity s) { return s == Severity::none ? "" : " (" + std::string(to_string(s)) + ")"; }

// One rank's branch for the whole step: "error" if any call raised, else its last call's branch.
std::string step_branch(const RankJudgement& r) {
  for (std::string_view b : r.branches)
    if (b == branch::error) return std::string(branch::error);
  return r.branches.empty() ? "none" : std::string(r.branches.back());
}

ojson call_json(const Explanation& e, const Call& call) {
  ojson tokens = ojson::array();
  for (const RowRange& r : call.tokens) tokens.push_back(ojson::array({r.lo, r.hi}));
  ojson ranks = ojson::array();
  for (size_t r = 0; r < call.rank_count(); ++r) {
    const RankView v = call.view(r);
    ranks.push_back({{"dp", v.dp},
                     {"tp", v.tp},
                     {"n", received_rows(v)},
                     {"expected", range_json(expected_source_range(call, v))},
                     {"tp_gather", v.tp_gathered >= 0}});
  }
  ojson branches = ojson::object();
  for (const Judgement& j : e.policies) {
    ojson per_rank = ojson::array();
    for (const RankJudgement& r : j.classes) per_rank.push_back(std::string(r.branches[static_cast<size_t>(call.index)]));
    branches[j.impl] = std::move(per_rank);
  }
  // A DP chunk covers rows of each TP rank's share (after the SP split), not one token range.
  return {{"index", call.index},
          {"row_offset", call.row_offset},
          {call.chunk_size > 0 ? "chunk_rows" : "tokens", std::move(tokens)},
          {"num_tokens_across_dp", call.metadata ? ojson(call.metadata->num_tokens_across_dp) : ojson(nullptr)},
          {"local_sizes", call.metadata ? list_json(call.metadata->local_sizes) : ojson(nullptr)},
          {"gathered_rows", call.metadata ? ojson(call.gathered_rows) : ojson(nullptr)},
          {"ranks", std::move(ranks)},
          {"branches", std::move(branches)}};
}

ojson policy_json(const Judgement& j) {
  ojson ranks = ojson::array();
  for (const RankJudgement& r : j.classes) {
    ojson branches = ojson::array();
    for (std::string_view b : r.branches) branches.push_back(std::string(b));
    ranks.push_back({{"dp", r.dp},
                     {"tp", r.tp},
                     {"branch", step_branch(r)},
                     {"rows", range_json(r.rows)},
                     {"verdict", std::string(to_string(r.verdict))},
                     {"branches", std::move(branches)},
                     {"detail", r.detail}});
  }
  return {{"capture_rows_allocated", j.allocation.capture_rows},
          {"replay_rows_allocated", j.allocation.replay_rows ? ojson(*j.allocation.replay_rows) : ojson(nullptr)},
          {"verdict", std::string(to_string(j.verdict))},
          {"severity", j.severity == Severity::none ? ojson(nullptr) : ojson(std::string(to_string(j.severity)))},
          {"branch", j.branch.empty() ? ojson(nullptr) : ojson(j.branch)},
          {"detail", j.detail},
          {"ranks", std::move(ranks)}};
}

void write_ranks_table(const Explanation& e, std::ostringstream& out) {
  const Step& s = e.step;
  out << "\nDP ranks (n_d: the rows each rank runs with, padding included)\n";
  Table t(s.sp ? std::vector<std::string>{"dp", "real", "n_d", "shard s_d", "SP padding rows"}
               : std::vector<std::string>{"dp", "real", "n_d", "dummy rows"},
          1);
  for (int d = 0; d < s.dp; ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t n = s.num_tokens_across_dp[i];
    if (s.sp) {
      t.add({std::to_string(d), std::to_string(s.real_tokens[i]), std::to_string(n), std::to_string(s.shard_rows[i]),
             std::to_string(s.tp * s.shard_rows[i] - n)});
    } else {
      t.add({std::to_string(d), std::to_string(s.real_tokens[i]), std::to_string(n), std::to_string(n - s.real_tokens[i])});
    }
  }
  out << t.render();
}

void write_segments_table(const Explanation& e, std::ostringstream& out) {
  const Step& s = e.step;
  if (!s.local_sizes) return;
  out << "\ngathered layout (all-gatherv over the " << (s.sp ? "EP group, rank d*T+t" : "DP group, rank d") << "): G = "
      << s.gathered_rows << " rows, local_sizes " << list_text(s.local_sizes) << "\n";
  Table t({"group rank", "dp", "tp", "rows", "tokens", "padding"}, 3);
  // The whole step's layout, derived here: a step keeps only its calls' (D*T segments with SP).
  for (const Segment& g : derive_segments(s.num_tokens_across_dp, s.tp, s.sp)) {
    t.add({std::to_string(g.group_rank), std::to_string(g.dp), s.sp ? std::to_string(g.tp) : "-",
           range_text(RowRange{g.offset, g.offset + g.rows}),
           g.token_rows ? range_text(RowRange{g.offset, g.offset + g.token_rows}) : "-",
           std::to_string(g.padding_rows)});
  }
  out << t.render();
}

void write_calls(const Explanation& e, std::ostringstream& out) {
  const Step& s = e.step;
  if (s.calls.empty()) out << "\nno capture call: every rank is idle (DP chunking issues no chunk)\n";
  for (const Call& call : s.calls) {
    if (static_cast<size_t>(call.index) == kMaxCallsShown && s.calls.size() > kMaxCallsShown + 1) {
      out << "\n... calls " << kMaxCallsShown + 1 << " to " << s.calls.size() - 1 << " not shown" << kCutNote << "\n";
    }
    const bool shown = static_cast<size_t>(call.index) < kMaxCallsShown || call.index + 1 == static_cast<int>(s.calls.size());
    if (!shown) continue;
    if (s.calls.size() > 1) {
      out << "\ncall " << call.index + 1 << " of " << s.calls.size() << ": ";
      const char* what = call.chunk_size > 0 ? " chunk rows " : " tokens ";
      const size_t ranks_shown = std::min(call.tokens.size(), kMaxListEntries);
      for (size_t d = 0; d < ranks_shown; ++d)
        out << (d ? ", " : "") << "dp " << d << what << range_text(call.tokens[d]);
      if (ranks_shown < call.tokens.size()) out << ", ... " << call.tokens.size() - ranks_shown << " more DP ranks";
      if (call.chunk_size > 0 && s.sp) out << " (of each TP rank's SP shard)";
      out << "\n  num_tokens_across_dp " << list_text(call.metadata->num_tokens_across_dp) << ", local_sizes "
          << list_text(call.metadata->local_sizes) << "\n";
    } else {
      out << "\ncapture() on each rank (expected: the rows holding the rank's tokens, in what it copies from)\n";
    }
    std::vector<std::string> header = {"dp", "tp", "receives", "n", "expected"};
    for (const Judgement& j : e.policies) header.push_back(j.impl);
    Table t(header, 2);
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView v = call.view(r);
      std::vector<std::string> row = {std::to_string(v.dp), std::to_string(v.tp), received_text(s.path, call, v),
                                      std::to_string(received_rows(v)),
                                      range_text(expected_source_range(call, v))};
      for (const Judgement& j : e.policies) row.push_back(std::string(j.classes[r].branches[static_cast<size_t>(call.index)]));
      t.add(row);
    }
    out << t.render();
  }
}

void write_policies(const Explanation& e, std::ostringstream& out) {
  out << "\npolicies\n";
  for (const Judgement& j : e.policies) {
    out << "  " << j.impl << ": " << to_string(j.verdict) << severity_text(j.severity);
    if (!j.detail.empty()) out << ": " << j.detail;
    out << "\n    capture buffer " << j.allocation.capture_rows << " rows";
    if (j.allocation.replay_rows) out << ", replay buffer " << *j.allocation.replay_rows << " rows";
    out << "\n";
    Table t({"dp", "tp", "branch", "rows", "verdict"}, 2);
    for (const RankJudgement& r : j.classes)
      t.add({std::to_string(r.dp), std::to_string(r.tp), step_branch(r), range_text(r.rows), std::string(to_string(r.verdict))});
    out << t.render("    ");
  }
}

}  // namespace

Result<Explanation> explain_case(const Case& c) {
  R3_TRY(Step step, derive_step(c));
  Explanation e{c, std::move(step), {}};
  for (std::string_view name : explained_policy_names(c.engine)) {
    const std::unique_ptr<CapturePolicy> policy = make_policy(name);
    Judgement& j = e.policies.emplace_back(judge_symbolic(c, e.step, *policy, policy->name()));
    split_into_ranks(j);  // explain shows every rank
  }
  return e;
}

std::vector<std::string_view> explained_policy_names(Engine engine) {
  const EngineModel& model = engine.model();
  std::vector<std::string_view> names = model.released_policies();
  names.push_back(model.fixed_policy());
  return names;
}

ojson explanation_json(const Explanation& e) {
  if (const EngineExplain* own = engine_explain(e.c.engine)) return own->json(e);
  return layout_explanation_json(e);
}

ojson layout_explanation_json(const Explanation& e) {
  const Step& s = e.step;
  const bool one_call = s.calls.size() == 1;
  // The ranks come from the topology, not from a call: a DP-chunked step whose ranks are all
  // idle has no capture call at all (zero chunks), and reading calls.front() then crashed.
  ojson ranks = ojson::array();
  for (int d = 0; d < s.dp; ++d) {
    for (int t = 0; t < s.tp; ++t) {
      ojson n = nullptr, expected = nullptr;
      if (one_call) {
        const Call& call = s.calls.front();
        const RankView v = call.view(d, t);
        n = received_rows(v);
        expected = range_json(expected_source_range(call, v));
      }
      ranks.push_back({{"dp", d}, {"tp", t}, {"n", std::move(n)}, {"expected", std::move(expected)}});
    }
  }
  ojson policies = ojson::object();
  for (const Judgement& j : e.policies) policies[j.impl] = policy_json(j);
  ojson calls = ojson::array();
  for (const Call& call : s.calls) calls.push_back(call_json(e, call));
  return {{"path", std::string(to_string(s.path))},
          {"real_tokens", s.real_tokens},
          {"num_tokens_across_dp", s.num_tokens_across_dp},
          {"local_sizes", list_json(s.local_sizes)},
          {"gathered_rows", s.local_sizes ? ojson(s.gathered_rows) : ojson(nullptr)},
          {"capture_rows_needed", s.capture_rows_needed},
          {"capture_rows_allocated", e.c.max_num_tokens},
          {"replay_rows_needed", s.replay_rows_needed ? ojson(*s.replay_rows_needed) : ojson(nullptr)},
          {"rejection", s.rejection ? ojson(*s.rejection) : ojson(nullptr)},
          {"ranks", std::move(ranks)},
          {"calls", std::move(calls)},
          {"policies", std::move(policies)}};
}

namespace {

// What explanation_json() lists whose number grows with the case, counted before it is built.
struct JsonSize {
  int64_t ranks = 0;
  int64_t calls = 0;
  int64_t policies = 0;
  bool lists_runs = false;  // the engine's own document lists runs and copies (EngineExplain::written_runs)
  int64_t runs = 0;         // the runs of the tensor each rank writes, per call
  int64_t copies = 0;       // the copies each model publishes, per rank and call
  // At most 2^16 ranks * (1 + 2^16 calls * (1 + a handful of policies)), plus runs and copies each
  // far below 2^60: no overflow.
  int64_t entries() const { return ranks * (1 + calls * (1 + policies)) + runs + copies; }
};

JsonSize json_size(const Step& s) {
  JsonSize n{int64_t{s.dp} * s.tp, static_cast<int64_t>(s.calls.size()),
             static_cast<int64_t>(explained_policy_names(s.engine).size())};
  if (const EngineExplain* own = engine_explain(s.engine))
    if (const std::optional<int64_t> runs = own->written_runs(s)) {
      n.lists_runs = true;
      n.runs = *runs;
    }
  return n;
}

// `copies_counted`: n.copies holds the published copies (counted once the policies are judged).
Status json_size_status(const JsonSize& n, bool copies_counted) {
  if (n.entries() <= kMaxJsonRankEntries) return ok_status();
  std::string what = std::to_string(n.ranks) + " ranks, " + std::to_string(n.calls) + " calls, " +
                     std::to_string(n.policies) + " policies";
  if (n.lists_runs) {
    what += "; " + std::to_string(n.runs) + " runs of rows written";
    if (copies_counted) what += ", " + std::to_string(n.copies) + " copies published";
  }
  return Error{"--json: this case's explanation lists " + std::to_string(n.entries()) + " rank entries" +
               (n.lists_runs ? " and runs" : "") + " (" + what + "); at most " + std::to_string(kMaxJsonRankEntries) +
               " are written as JSON. The text output (without --json) is bounded and shows this case"};
}

}  // namespace

Status check_json_size(const Step& s) { return json_size_status(json_size(s), false); }

Status check_json_size(const Explanation& e) {
  JsonSize n = json_size(e.step);
  // Counting the copies decides every rank again: only worth it while the rest fits.
  const bool count_copies = n.lists_runs && n.entries() <= kMaxJsonRankEntries;
  if (count_copies) n.copies = engine_explain(e.step.engine)->published_copies(e);
  return json_size_status(n, count_copies);
}

std::string explanation_text(const Explanation& e) {
  if (const EngineExplain* own = engine_explain(e.c.engine)) return own->text(e);
  return layout_explanation_text(e);
}

std::string layout_explanation_text(const Explanation& e) {
  const Case& c = e.c;
  const Step& s = e.step;
  std::ostringstream out;
  if (!c.note.empty()) out << "note: " << terminal_safe(c.note) << "\n";
  out << "topology: dp " << c.topology.dp << ", tp " << c.topology.tp << ", ep " << (c.topology.ep ? "on" : "off")
      << ", sp " << (c.topology.sp ? "on" : "off") << "; path " << to_string(c.path)
      << (c.monolithic ? ", monolithic MoE kernel" : ", router capture") << "\n";
  out << "model: layer " << c.layer << " of " << c.model.layers << ", top_k " << c.model.top_k << ", experts "
      << c.model.experts << "; max_num_tokens M = " << c.max_num_tokens << "; padding " << to_string(c.padding.mode);
  if (c.padding.mode == PaddingMode::cudagraph) out << " " << list_text(c.padding.cudagraph_sizes);
  out << "\n";
  out << "step: " << s.calls.size() << " capture call" << (s.calls.size() == 1 ? "" : "s") << " per layer";
  if (c.microbatches > 1) out << " (" << c.microbatches << " micro-batches)";
  if (c.dp_chunk) out << " (DP chunks of " << *c.dp_chunk << " rows)";
  out << "\n";
  write_ranks_table(e, out);
  write_segments_table(e, out);
  write_calls(e, out);
  out << "\nbuffers: capture rows needed " << s.capture_rows_needed << " (max n_d) of M = " << c.max_num_tokens;
  if (s.replay_rows_needed) out << "; replay rows needed " << *s.replay_rows_needed << " (monolithic kernel input)";
  out << "\n";
  if (s.rejection) out << "the reference rejects this step: " << *s.rejection << "\n";
  write_policies(e, out);
  return out.str();
}

}  // namespace r3
