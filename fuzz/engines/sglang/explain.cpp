// `r3fuzz explain` of an SGLang case: the forward (counts, padding, graph, window inputs of each
// DP rank), each rank's tensor at every capture call and the rows it writes, then each SGLang
// model's window (start, n), the rows it publishes and its verdict. The SGLang engine's explain
// part (fuzz/cli/engine_explain.hpp), which fuzz/cli/explain.cpp reaches through the registry.
#include <optional>
#include <sstream>

#include "fuzz/cli/engine_explain.hpp"
#include "fuzz/cli/explain.hpp"
#include "fuzz/cli/explain_table.hpp"
#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/oracle/row_image.hpp"
#include "reference/capturer.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/policy.hpp"

namespace r3::sglang {
namespace {

using ojson = nlohmann::ordered_json;
using namespace explain_text;  // NOLINT: the bounded tables and lists every explanation prints

std::string num(int64_t v) { return std::to_string(v); }

RowTensor written_tensor(const Call& call, const RankView& v) {
  return v.tp_gathered >= 0 ? call.tensors[static_cast<size_t>(v.tp_gathered)] : call.input_of(v);
}

// "tokens (0, 0..7), tokens (1, 0..3)": a tensor as its runs, cut at kMaxListEntries runs.
std::string runs_text(const RowTensor& t) {
  std::string s;
  size_t shown = 0;
  for (const RowRun& run : t.runs()) {
    if (shown == kMaxListEntries) {
      s += ", ... " + num(static_cast<int64_t>(t.runs().size() - shown)) + " more runs";
      break;
    }
    s += (shown++ ? ", " : "") + describe_run(run, run.length);
  }
  return s.empty() ? "no rows" : s;
}

ojson runs_json(const RowTensor& t) {
  ojson runs = ojson::array();
  for (const RowRun& run : t.runs())
    runs.push_back({{"dp", run.dp}, {"first", run.first}, {"rows", run.length}});
  return runs;
}

// Each model's decisions on every rank and call, decided again for the window they read.
struct Decisions {
  std::vector<std::vector<CaptureDecision>> per_rank;  // [rank][call]
  int64_t buffer_rows = 0;
};

Decisions decide_all(const Explanation& e, const Judgement& j) {
  const std::unique_ptr<CapturePolicy> policy = make_policy(j.impl);
  Decisions d;
  d.buffer_rows = j.allocation.capture_rows;
  const BufferShape buffer{j.allocation.capture_rows, e.c.model.layers, e.c.model.top_k};
  const size_t ranks = static_cast<size_t>(e.step.dp) * static_cast<size_t>(e.step.tp);
  d.per_rank.assign(ranks, std::vector<CaptureDecision>(e.step.calls.size()));
  for (size_t r = 0; r < ranks; ++r)
    for (size_t k = 0; k < e.step.calls.size(); ++k) {
      const Call& call = e.step.calls[k];
      policy->decide(capture_call_for(e.step, call, call.view(r), buffer), d.per_rank[r][k]);
    }
  return d;
}

// The window the forward end reads: the last call's (with tbo-offsets each call has its own).
std::string window_text(const std::vector<CaptureDecision>& calls) {
  std::string s;
  for (const CaptureDecision& d : calls) {
    if (!d.window) continue;
    if (!s.empty()) s += " ";
    // Appended piece by piece: `"[" + std::string` trips GCC 12's -Warray-bounds false positive.
    s.append("[").append(num(d.window->start)).append(", ").append(num(d.window->start + d.window->rows)).append(")");
  }
  return s.empty() ? "-" : s;
}

std::string published_text(const std::vector<CaptureDecision>& calls) {
  std::string s;
  for (size_t k = 0; k < calls.size(); ++k)
    for (const Copy& c : calls[k].copies) {
      if (!s.empty()) s += " ";
      s += "call " + num(static_cast<int64_t>(k + 1)) + ": " + num(c.src_row) + ".." + num(c.src_row + c.rows - 1) +
           " -> " + num(c.dst_row);
    }
  return s.empty() ? "none" : s;
}

std::string forward_text(const Case& c, const ForwardLayout& f) {
  const Forward& fw = *forward_of(c);
  std::string s = std::string(to_string(fw.kind));
  if (fw.kind == ForwardKind::extend) s += ", tokens " + list_text(c.tokens);
  else s += ", requests " + list_text(fw.requests) + " x " + num(fw.spec_width) + " = tokens " + list_text(f.tokens);
  if (f.decode_graph) s += "; decode graph replay";
  else if (f.prefill_graph) s += "; breakable prefill graph";
  else s += "; eager";
  s += fw.tbo ? "; TBO (two capture calls)" : "";
  return s;
}

void write_ranks(const Explanation& e, std::ostringstream& out) {
  const ForwardLayout& f = *forward_of(e.step);
  out << "\nDP ranks (the forward batch the window reads)\n";
  Table t({"dp", "tokens", "padded", "global_num_tokens_cpu", "out_cache_loc", "runner bs"}, 1);
  for (int d = 0; d < e.step.dp; ++d) {
    const size_t r = static_cast<size_t>(d);
    t.add({num(d), num(f.tokens[r]), num(f.padded[r]), num(f.global_num_tokens_cpu[r]), num(f.out_cache_loc[r]),
           f.runner_bs[r] > 0 ? num(f.runner_bs[r]) : "unset"});
  }
  out << t.render();
}

void write_calls(const Explanation& e, std::ostringstream& out) {
  const Step& s = e.step;
  for (const Call& call : s.calls) {
    if (static_cast<size_t>(call.index) == kMaxCallsShown) break;
    out << "\ncapture call " << call.index + 1 << " of " << s.calls.size()
        << " (capture writes the whole tensor at row 0";
    if (forward_of(s)->capture == CaptureLayout::deepep_gather) out << ", after the attn-TP all-gather";
    out << ")\n";
    Table t({"dp", "tp", "rows written", "tensor"}, 2);
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView v = call.view(r);
      const RowTensor written = written_tensor(call, v);
      t.add({num(v.dp), num(v.tp), num(written.rows()), runs_text(written)});
    }
    out << t.render();
  }
}

void write_policies(const Explanation& e, std::ostringstream& out) {
  out << "\nmodels (published row j of a rank must hold its token j)\n";
  for (const Judgement& j : e.policies) {
    const Decisions d = decide_all(e, j);
    out << "  " << j.impl << ": " << to_string(j.verdict)
        << (j.severity == Severity::none ? "" : " (" + std::string(to_string(j.severity)) + ")");
    if (!j.detail.empty()) out << ": " << terminal_safe(j.detail);
    out << "\n    device buffer " << d.buffer_rows << " rows\n";
    Table t({"dp", "tp", "window", "branch", "published (source rows -> row)", "verdict"}, 2);
    for (size_t r = 0; r < j.classes.size(); ++r) {
      const RankJudgement& rank = j.classes[r];
      t.add({num(rank.dp), num(rank.tp), window_text(d.per_rank[r]), std::string(d.per_rank[r].back().branch),
             published_text(d.per_rank[r]), std::string(to_string(rank.verdict))});
    }
    out << t.render("    ");
  }
}

ojson policy_json(const Explanation& e, const Judgement& j) {
  const Decisions d = decide_all(e, j);
  ojson ranks = ojson::array();
  for (size_t r = 0; r < j.classes.size(); ++r) {
    ojson calls = ojson::array();
    for (const CaptureDecision& dec : d.per_rank[r]) {
      ojson copies = ojson::array();
      for (const Copy& c : dec.copies)
        copies.push_back({{"src_row", c.src_row}, {"dst_row", c.dst_row}, {"rows", c.rows}, {"gathered", c.from_tp_gather}});
      calls.push_back({{"branch", std::string(dec.branch)},
                       {"window", dec.window ? ojson{{"start", dec.window->start}, {"rows", dec.window->rows}} : ojson(nullptr)},
                       {"rejected", dec.rejected},
                       {"published", std::move(copies)}});
    }
    ranks.push_back({{"dp", j.classes[r].dp},
                     {"tp", j.classes[r].tp},
                     {"verdict", std::string(to_string(j.classes[r].verdict))},
                     {"calls", std::move(calls)}});
  }
  return {{"verdict", std::string(to_string(j.verdict))},
          {"severity", j.severity == Severity::none ? ojson(nullptr) : ojson(std::string(to_string(j.severity)))},
          {"branch", j.branch.empty() ? ojson(nullptr) : ojson(j.branch)},
          {"detail", j.detail},
          {"buffer_rows", d.buffer_rows},
          {"ranks", std::move(ranks)}};
}

// What json_of() lists beyond its rank entries, counted without building it
// (explain.hpp, check_json_size): the runs of every rank's written tensor in every call, and the
// copies every model publishes on every rank and call.
int64_t written_runs(const Step& s) {
  int64_t runs = 0;
  RowTensor scratch;
  for (const Call& call : s.calls)
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView v = call.view(r);
      // written_tensor() without its copy: a whole tensor is read in place, a slice cut once.
      const RowTensor& written =
          v.tp_gathered >= 0 ? call.tensors[static_cast<size_t>(v.tp_gathered)] : call.rows_of(v, scratch);
      runs += static_cast<int64_t>(written.runs().size());
    }
  return runs;
}

int64_t published_copies(const Explanation& e) {
  int64_t copies = 0;
  CaptureDecision decision;
  decision.wants_words = false;  // only the copies are counted
  for (const Judgement& j : e.policies) {
    // decide_all() one decision at a time: nothing is kept but the count.
    const std::unique_ptr<CapturePolicy> policy = make_policy(j.impl);
    const BufferShape buffer{j.allocation.capture_rows, e.c.model.layers, e.c.model.top_k};
    const size_t ranks = static_cast<size_t>(e.step.dp) * static_cast<size_t>(e.step.tp);
    for (size_t r = 0; r < ranks; ++r)
      for (const Call& call : e.step.calls) {
        decision.clear();
        policy->decide(capture_call_for(e.step, call, call.view(r), buffer), decision);
        copies += static_cast<int64_t>(decision.copies.size());
      }
  }
  return copies;
}

ojson json_of(const Explanation& e) {
  const Step& s = e.step;
  const ForwardLayout& f = *forward_of(s);
  ojson ranks = ojson::array();
  for (int d = 0; d < s.dp; ++d) {
    const size_t r = static_cast<size_t>(d);
    ranks.push_back({{"dp", d},
                     {"tokens", f.tokens[r]},
                     {"padded", f.padded[r]},
                     {"global_num_tokens_cpu", f.global_num_tokens_cpu[r]},
                     {"out_cache_loc", f.out_cache_loc[r]},
                     {"runner_bs", f.runner_bs[r] > 0 ? ojson(f.runner_bs[r]) : ojson(nullptr)}});
  }
  ojson calls = ojson::array();
  for (const Call& call : s.calls) {
    ojson tensors = ojson::array();
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView v = call.view(r);
      const RowTensor written = written_tensor(call, v);
      tensors.push_back({{"dp", v.dp},
                         {"tp", v.tp},
                         {"received_rows", v.rows.size()},
                         {"rows_written", written.rows()},
                         {"written", runs_json(written)}});
    }
    calls.push_back({{"index", call.index}, {"ranks", std::move(tensors)}});
  }
  ojson policies = ojson::object();
  for (const Judgement& j : e.policies) policies[j.impl] = policy_json(e, j);
  return {{"engine", "sglang"},
          {"capture_layout", std::string(to_string(f.capture))},
          {"dp_padding", std::string(to_string(f.padding))},
          {"can_run_graph", f.can_run_graph()},
          {"decode_graph", f.decode_graph},
          {"prefill_graph", f.prefill_graph},
          {"spec_width", f.spec_width},
          {"capture_rows_needed", s.capture_rows_needed},
          {"dp_ranks", std::move(ranks)},
          {"calls", std::move(calls)},
          {"policies", std::move(policies)}};
}

std::string text_of(const Explanation& e) {
  const Case& c = e.c;
  const ForwardLayout& f = *forward_of(e.step);
  const Forward& fw = *forward_of(c);
  std::ostringstream out;
  if (!c.note.empty()) out << "note: " << terminal_safe(c.note) << "\n";
  out << "engine: sglang; topology: dp " << c.topology.dp << (fw.dp_attention ? " (DP attention)" : "")
      << ", attn-TP " << c.topology.tp << ", a2a " << to_string(fw.a2a) << "\n";
  out << "model: layer " << c.layer << " of " << c.model.layers << ", top_k " << c.model.top_k << ", experts "
      << c.model.experts << "; chunked_prefill_size " << fw.chunked_prefill_size << ", max_running_requests "
      << fw.max_running_requests << "\n";
  out << "forward: " << forward_text(c, f) << "\n";
  out << "capture layout " << to_string(f.capture) << ", DP padding " << to_string(f.padding)
      << ", can_run_graph " << (f.can_run_graph() ? "true" : "false") << "; the largest write is "
      << e.step.capture_rows_needed << " rows\n";
  write_ranks(e, out);
  write_calls(e, out);
  write_policies(e, out);
  return out.str();
}

class SglangExplain final : public EngineExplain {
 public:
  ojson json(const Explanation& e) const override { return json_of(e); }
  std::string text(const Explanation& e) const override { return text_of(e); }
  std::optional<int64_t> written_runs(const Step& s) const override {
    if (!forward_of(s)) return std::nullopt;  // a step of another engine: nothing of SGLang's to list
    return sglang::written_runs(s);
  }
  int64_t published_copies(const Explanation& e) const override { return sglang::published_copies(e); }
};

}  // namespace

const EngineExplain& explain_part() {
  static const SglangExplain part;
  return part;
}

}  // namespace r3::sglang
