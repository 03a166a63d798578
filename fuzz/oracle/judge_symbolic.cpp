#include <algorithm>

#include "fuzz/oracle/judge.hpp"
#include "fuzz/oracle/row_image.hpp"
#include "reference/capturer.hpp"

namespace r3 {
namespace {

std::string rank_name(int dp, int tp) { return "dp " + std::to_string(dp) + " tp " + std::to_string(tp); }

std::string call_name(int call, size_t calls) {
  return "call " + std::to_string(call + 1) + " of " + std::to_string(calls);
}

// The TP all-gather an implementation asked for where the reference has none: the
// concatenation of what every TP rank of the group received (spec corner case 10).
const RowTensor& tp_gather_source(const Call& call, const RankView& view, int tp, RowTensor& scratch) {
  if (view.tp_gathered >= 0) return call.tensors[static_cast<size_t>(view.tp_gathered)];
  scratch.clear();
  for (int t = 0; t < tp; ++t) {
    const RowTensor& part = call.tensors[static_cast<size_t>(call.ranks[static_cast<size_t>(view.dp * tp + t)].received)];
    scratch.append_slice(part, {0, part.rows()});
  }
  return scratch;
}

std::string describe_difference(const RowImage::Difference& diff, int dp, int tp, size_t calls) {
  std::string text = "buffer row " + std::to_string(diff.row) + " of " + rank_name(dp, tp) + " holds " +
                     (diff.got.kind == RowKind::untouched ? std::string("an untouched row") : describe(diff.got)) +
                     ", expected " +
                     (diff.expected.kind == RowKind::untouched ? std::string("it untouched") : describe(diff.expected));
  if (diff.writer && calls > 1) {
    const auto& w = *diff.writer;
    text += " (" + call_name(w.call, calls) + " wrote " + describe_run(w.source, w.hi - w.lo) + " over rows " +
            std::to_string(w.lo) + ".." + std::to_string(w.hi - 1) + ")";
  }
  return text;
}

}  // namespace

Judgement judge_symbolic(const Case& c, const Step& step, const CapturePolicy& policy, std::string_view impl_name) {
  Judgement j;
  j.impl = std::string(impl_name);
  j.allocation = policy.allocate(c);
  const BufferShape buffer{j.allocation.capture_rows, c.model.layers, c.model.top_k};
  const size_t rank_count = static_cast<size_t>(step.dp) * step.tp;
  j.ranks.resize(rank_count);
  CaptureDecision decision;
  RowImage image;
  RowTensor scratch;
  for (size_t r = 0; r < rank_count; ++r) {
    RankJudgement& rank = j.ranks[r];
    const RankView& first_view = step.calls.empty() ? RankView{static_cast<int>(r) / step.tp,
                                                               static_cast<int>(r) % step.tp, 0, -1}
                                                    : step.calls.front().ranks[r];
    rank.dp = first_view.dp;
    rank.tp = first_view.tp;
    image.clear();
    int64_t past_end = 0;
    int copies_made = 0;
    for (const Call& call : step.calls) {
      const RankView& view = call.ranks[r];
      decision.clear();
      policy.decide(capture_call_for(step, call, view, buffer), decision);
      rank.branches.push_back(decision.branch);
      rank.tp_gathers.push_back(0);
      if (decision.rejected) {
        if (!rank.rejected && !step.rejection) {
          rank.verdict = Verdict::spurious_reject;
          rank.detail = rank_name(rank.dp, rank.tp) + " raised on a valid case" +
                        (step.calls.size() > 1 ? " in " + call_name(call.index, step.calls.size()) : "") + ": " +
                        decision.error;
        }
        rank.rejected = true;
        continue;
      }
      for (const Copy& copy : decision.copies) {
        if (copy.from_tp_gather) rank.tp_gathers.back() = 1;
        const RowTensor& source = copy.from_tp_gather ? tp_gather_source(call, view, step.tp, scratch)
                                                      : call.tensors[static_cast<size_t>(view.received)];
        rank.rows = ++copies_made == 1 ? std::optional<RowRange>(RowRange{copy.src_row, copy.src_row + copy.rows})
                                       : std::nullopt;
        const int64_t readable = std::clamp<int64_t>(source.rows() - copy.src_row, 0, copy.rows);
        if (readable < copy.rows && rank.verdict == Verdict::pass) {
          rank.verdict = Verdict::wrong_rows;
          rank.detail = rank_name(rank.dp, rank.tp) + " copies rows [" + std::to_string(copy.src_row) + ", " +
                        std::to_string(copy.src_row + copy.rows) + ") of a " + std::to_string(source.rows()) +
                        "-row tensor";
        }
        const int64_t fits = std::clamp<int64_t>(buffer.rows - copy.dst_row, 0, readable);
        past_end = std::max(past_end, copy.dst_row + readable - buffer.rows);
        image.write(copy.dst_row, source, copy.src_row, fits, call.index);
      }
    }
    if (rank.rejected || step.rejection) continue;
    if (past_end > 0) {
      rank.verdict = Verdict::overflow;
      rank.detail = "capture buffer of " + rank_name(rank.dp, rank.tp) + ": " + std::to_string(past_end) +
                    " rows written past its end (it holds " + std::to_string(buffer.rows) + " rows)";
      continue;
    }
    if (rank.verdict != Verdict::pass) continue;
    const int64_t n_d = step.num_tokens_across_dp[static_cast<size_t>(rank.dp)];
    if (auto diff = image.first_difference(rank.dp, std::min(n_d, buffer.rows))) {
      rank.verdict = Verdict::wrong_rows;
      rank.detail = describe_difference(*diff, rank.dp, rank.tp, step.calls.size());
    }
  }
  conclude(j, c, step);
  return j;
}

}  // namespace r3
