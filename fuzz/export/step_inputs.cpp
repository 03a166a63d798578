#include "fuzz/export/step_inputs.hpp"

#include <algorithm>
#include <map>

#include "fuzz/export/engine_target.hpp"
#include "reference/capturer.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

// Each distinct tensor once: on the gathered path every rank receives the same batch, and a
// step of D*T ranks would otherwise repeat it D*T times. Linear in the step (comparing every
// rank's tensor by content took 30 s at dp 256, tp 64, and minutes at dp 1024): a rank's tensor
// is first looked up by where its rows come from (which tensor of the call, which rows; for a TP
// all-gather, its DP rank), so each source is materialised and compared by content once, not
// once per (d, t).
class TensorTable {
 public:
  explicit TensorTable(std::vector<std::vector<RowRun>>& tensors) : tensors_(tensors) {}

  int64_t runs() const { return runs_; }  // of every distinct tensor so far

  // The tensor `view` receives in `call`.
  int received(const Call& call, const RankView& view) {
    const std::string where = source_key(call.index, view.received, view.rows);
    if (auto it = by_source_.find(where); it != by_source_.end()) return it->second;
    return by_source_[where] = index(call.rows_of(view, scratch_));
  }

  // What the TP all-gather returns on `view` (copy_source with from_tp_gather): a function of its
  // DP rank's members' received rows, or of the tensor the call gathers for that DP rank; so of the
  // DP rank, looked up by it first (the members' rows are listed once per DP rank, not per rank).
  int tp_gathered(const Call& call, const RankView& view, int tp) {
    const std::string dp_rank = "d" + std::to_string(call.index) + ":" + std::to_string(view.dp);
    if (auto it = by_source_.find(dp_rank); it != by_source_.end()) return it->second;
    return by_source_[dp_rank] = tp_gathered_of_dp_rank(call, view, tp);
  }

 private:
  int tp_gathered_of_dp_rank(const Call& call, const RankView& view, int tp) {
    std::string where = "g" + std::to_string(call.index) + ":" + std::to_string(view.tp_gathered) + ":";
    if (view.tp_gathered < 0 && call.split_across_tp()) where += std::to_string(view.received);
    else if (view.tp_gathered < 0)
      for (int t = 0; t < tp; ++t) {
        const RankView member = call.view(view.dp, t);
        where += source_key(-1, member.received, member.rows);
      }
    if (auto it = by_source_.find(where); it != by_source_.end()) return it->second;
    return by_source_[where] = index(copy_source(call, view, true, tp, scratch_));
  }

  static std::string source_key(int call, int tensor, RowRange rows) {
    return std::to_string(call) + ":" + std::to_string(tensor) + ":" + std::to_string(rows.lo) + ":" +
           std::to_string(rows.hi) + ";";
  }

  int index(const RowTensor& t) {
    std::vector<RowRun> runs(t.runs().begin(), t.runs().end());
    std::string key;
    for (const RowRun& r : runs)
      key += std::to_string(static_cast<int>(r.kind)) + ":" + std::to_string(r.dp) + ":" + std::to_string(r.first) +
             ":" + std::to_string(r.length) + ";";
    auto [it, added] = seen_.emplace(key, static_cast<int>(tensors_.size()));
    if (added) {
      runs_ += static_cast<int64_t>(runs.size());
      tensors_.push_back(std::move(runs));
    }
    return it->second;
  }

  std::vector<std::vector<RowRun>>& tensors_;
  std::map<std::string, int> seen_;       // by content
  std::map<std::string, int> by_source_;  // by where the rows come from
  RowTensor scratch_;
  int64_t runs_ = 0;
};

// The refusal of a step whose module would list more than kMaxExportEntries entries.
Error too_many_entries(const Step& step) {
  return Error{"the step is too large to export: its module would list more than " +
               std::to_string(kMaxExportEntries) + " entries, the most one module lists (each rank's tensor per "
               "capture call, " + std::to_string(step.calls.size()) + " calls of " +
               std::to_string(int64_t{step.dp} * step.tp) +
               " ranks; the runs of rows of every distinct tensor and of the rows each rank must hold)"};
}

// Per call: each rank's received and all-gathered tensor, and the call's per-DP-rank lists.
int64_t entries_per_call(const Step& step, const Call& call) {
  int64_t n = 2 * static_cast<int64_t>(call.rank_count()) + 3 * int64_t{step.dp};
  if (call.metadata && call.metadata->local_sizes) n += static_cast<int64_t>(call.metadata->local_sizes->size());
  return n;
}

int64_t run_end(const RowRun& r) { return r.kind == RowKind::placeholder ? r.first + 1 : r.first + r.length; }

// The rows a correct capture leaves on `view` in `call` (the reference's copies, as runs at their
// buffer rows): a function of the rows it copies from and its DP rank, so every TP rank that
// reads the same source shares them, computed once.
class ExpectedRows {
 public:
  const std::vector<ExpectedRun>& of(const Call& call, const RankView& view) {
    // The source: the TP all-gather when there is one (reference_source), else the rows received.
    std::string where = std::to_string(call.index) + ":" + std::to_string(view.dp) + ":";
    if (view.tp_gathered >= 0) where += "g" + std::to_string(view.tp_gathered);
    else
      where += std::to_string(view.received) + ":" + std::to_string(view.rows.lo) + ":" + std::to_string(view.rows.hi);
    auto [it, added] = seen_.emplace(where, std::vector<ExpectedRun>{});
    if (!added) return it->second;
    const RowTensor source = reference_source(call, view);
    for (const Copy& copy : expected_copies(call, view)) {
      RowTensor rows;
      rows.append_slice(source, {copy.src_row, copy.src_row + copy.rows});
      int64_t dst = copy.dst_row;
      for (const RowRun& run : rows.runs()) {
        it->second.push_back({dst, run});
        dst += run.length;
      }
    }
    return it->second;
  }

  // A call's entries are never asked for again once the next call starts.
  void forget() { seen_.clear(); }

 private:
  std::map<std::string, std::vector<ExpectedRun>> seen_;
};

}  // namespace

Result<StepInputs> step_inputs(const Case& c) {
  R3_TRY(const Step step, derive_step(c));
  R3_TRY(const EngineTarget* target, engine_target(c));
  // An engine that publishes its own rows (EngineTarget::published_run) keeps none of the copies.
  const bool publishes = target->published_run != nullptr;
  StepInputs out;
  out.num_tokens = step.num_tokens_across_dp;
  out.rejection = step.rejection;
  // Counted before the lists are allocated; the runs as they are found, so a step over the
  // bound is refused before more than the bound's worth is built.
  int64_t entries = 0;
  for (const Call& call : step.calls) entries += entries_per_call(step, call);
  if (publishes) entries += int64_t{step.dp} * step.tp;  // each rank's published rows: one run
  if (entries > kMaxExportEntries) return too_many_entries(step);
  int64_t expected_runs = 0;
  TensorTable table(out.tensors);
  ExpectedRows expected_rows;
  const size_t ranks = static_cast<size_t>(step.dp) * static_cast<size_t>(step.tp);
  out.expected.assign(out.rejection ? 0 : ranks, {});
  for (const Call& call : step.calls) {
    CallInputs in;
    in.index = call.index;
    in.row_offset = call.row_offset;
    in.chunk_size = call.chunk_size;
    in.kernel_rows = c.monolithic ? call.kernel_rows : 0;
    if (call.metadata) {
      in.num_tokens_across_dp = call.metadata->num_tokens_across_dp;
      in.local_sizes = call.metadata->local_sizes;
    }
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView view = call.view(r);
      in.received.push_back(table.received(call, view));
      in.tp_gather.push_back(step.tp > 1 ? table.tp_gathered(call, view, step.tp) : -1);
      if (!out.rejection && !publishes) {
        // The reference's copies, applied in call order, are the rows a correct capture leaves.
        const std::vector<ExpectedRun>& rows = expected_rows.of(call, view);
        expected_runs += static_cast<int64_t>(rows.size());
        if (entries + table.runs() + expected_runs > kMaxExportEntries) return too_many_entries(step);
        auto& expected = out.expected[static_cast<size_t>(view.dp * step.tp + view.tp)];
        expected.insert(expected.end(), rows.begin(), rows.end());
      } else if (entries + table.runs() > kMaxExportEntries) {
        return too_many_entries(step);
      }
    }
    expected_rows.forget();
    out.calls.push_back(std::move(in));
  }
  // An engine that publishes its own rows (SGLang: each rank's real tokens in order, whatever
  // slice of the batch its capture saw) names them itself.
  if (publishes && !out.rejection)
    for (size_t r = 0; r < ranks; ++r)
      if (const std::optional<ExpectedRun> run = target->published_run(step, r)) out.expected[r].push_back(*run);
  if (target->host_slots) out.host_slots = target->host_slots(step);
  for (const auto& tensor : out.tensors)
    for (const RowRun& r : tensor) out.row_span = std::max(out.row_span, run_end(r));
  for (const auto& rank : out.expected)
    for (const ExpectedRun& e : rank) out.row_span = std::max({out.row_span, run_end(e.run), e.dst_row + e.run.length});
  return out;
}

}  // namespace r3
