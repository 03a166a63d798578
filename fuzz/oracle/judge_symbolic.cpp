// The symbolic judge. It runs once per generated case on production layouts (hundreds of
// ranks), so the hot path allocates nothing it can keep (thread-local scratch), decides each
// rank in O(1) (indexed metadata), judges classes of identical ranks rather than ranks (the
// TP ranks of a DP rank that read the same rows and decide alike share one simulation), and
// renders words, rejection messages included, only for the ranks a report will show.
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

// Why a rank failed, kept as data until someone needs the words.
struct Finding {
  enum class Kind { none, raised, short_read, overflow, difference } kind = Kind::none;
  int call = 0;       // raised: the call whose decision raised (decided again for its words)
  Copy copy;          // short_read
  int64_t source_rows = 0;
  int64_t past_end = 0;  // overflow
  int64_t before_start = 0;
  int64_t buffer_rows = 0;
  RowImage::Difference difference;
};

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

// What a judgement needs to word a rank's finding: the message a rejecting decision raised is
// not kept while judging (most rejecting ranks are never reported), so the rank decides again.
struct Wording {
  const Step& step;
  const CapturePolicy& policy;
  const BufferShape& buffer;
};

std::string raised_message(const Wording& w, size_t r, int call) {
  const Call& c = w.step.calls[static_cast<size_t>(call)];
  CaptureDecision decision;  // wants words
  w.policy.decide(capture_call_for(w.step, c, c.view(r), w.buffer), decision);
  return decision.error;
}

std::string render(const Finding& f, const Wording& w, size_t r, int dp, int tp) {
  const size_t calls = w.step.calls.size();
  switch (f.kind) {
    case Finding::Kind::none:
      return "";
    case Finding::Kind::raised:
      return rank_name(dp, tp) + " raised on a valid case" + (calls > 1 ? " in " + call_name(f.call, calls) : "") +
             ": " + raised_message(w, r, f.call);
    case Finding::Kind::short_read:
      return rank_name(dp, tp) + " copies rows [" + std::to_string(f.copy.src_row) + ", " +
             std::to_string(f.copy.src_row + f.copy.rows) + ") of a " + std::to_string(f.source_rows) + "-row tensor";
    case Finding::Kind::overflow:
      // The same words as the concrete judge's guard check, so both modes name a bug alike.
      return "capture buffer of " + rank_name(dp, tp) + ": " +
             (f.past_end > 0 ? std::to_string(f.past_end) + " rows written past its end"
                             : std::to_string(f.before_start) + " rows written before its start") +
             " (it holds " + std::to_string(f.buffer_rows) + " rows)";
    case Finding::Kind::difference:
      return describe_difference(f.difference, dp, tp, calls);
  }
  return "";
}

// The per-call vectors of rank judgements a smaller case left over, storage intact: rank
// counts swing from 1 to 512 between cases, and allocating every rank's vectors each time
// dominated. Only the vectors are kept (moving whole judgements copied their strings).
struct SpareStorage {
  std::vector<std::vector<std::string_view>> branches;
  std::vector<std::vector<char>> tp_gathers;
};

struct Scratch {
  std::vector<CaptureDecision> decisions;  // per call: the decisions of the current class
  std::vector<CaptureDecision> candidate;  // per call: a TP rank's own, when it decides again
  std::vector<CaptureDecision> shared;     // per call: the checks every rank makes alike
  std::vector<Finding> findings;           // per class of identical ranks
  std::vector<RankJudgement> split;        // every_rank: the classes, failing ones split into ranks
  RowImage image;
  RowTensor gathered;
  SpareStorage spare;
};

// A fresh entry takes per-call vectors a smaller case left over, when there are some.
void take_spare(RankJudgement& rank, SpareStorage& spare) {
  if (spare.branches.empty()) return;
  rank.branches = std::move(spare.branches.back());
  rank.tp_gathers = std::move(spare.tp_gathers.back());
  spare.branches.pop_back();
  spare.tp_gathers.pop_back();
}

void resize_keeping_storage(std::vector<RankJudgement>& ranks, size_t count, SpareStorage& spare) {
  for (size_t r = count; r < ranks.size(); ++r) {
    spare.branches.push_back(std::move(ranks[r].branches));
    spare.tp_gathers.push_back(std::move(ranks[r].tp_gathers));
  }
  const size_t before = ranks.size();
  ranks.resize(count);
  for (size_t r = before; r < count; ++r) take_spare(ranks[r], spare);
}

// Rejection messages are not compared: they are not built while judging (Wording builds them).
bool same_decision(const CaptureDecision& a, const CaptureDecision& b) {
  return a.branch == b.branch && a.rejected == b.rejected && a.copies == b.copies;
}

// True when rank r's capture() sees exactly what its TP neighbour r-1 saw but for the TP rank,
// so a policy that ignores the TP rank decides the same. Neither this nor mirrors_neighbour is
// asked about a lead (TP rank 0), which has no TP neighbour.
bool same_view_as_neighbour(const Step& step, size_t r) {
  for (const Call& call : step.calls)
    if (call.view(r).rows.size() != call.view(r - 1).rows.size()) return false;
  return true;
}

// True when two ranks receive the same rows of the same tensor.
bool same_input(const RankView& a, const RankView& b) { return a.received == b.received && a.rows == b.rows; }

// True when rank r belongs to the class of its TP neighbour r-1: it reads exactly what r-1
// read and decided the same (`decided_again` false: the decisions are r-1's by construction),
// so its buffer, verdict and finding are r-1's.
bool mirrors_neighbour(const Step& step, size_t r, const std::vector<CaptureDecision>& mine,
                       const std::vector<CaptureDecision>& theirs, bool decided_again) {
  for (size_t k = 0; k < step.calls.size(); ++k) {
    if (decided_again && !same_decision(mine[k], theirs[k])) return false;
    const Call& call = step.calls[k];
    if (same_input(call.view(r), call.view(r - 1))) continue;
    for (const Copy& copy : mine[k].copies)
      if (!copy.from_tp_gather) return false;  // the TP all-gather is the same for the whole group
  }
  return true;
}

// Per call, the checks every rank makes alike (CapturePolicy::check_shared), made once.
void check_shared(const Step& step, const BufferShape& buffer, const CapturePolicy& policy,
                  std::vector<CaptureDecision>& shared) {
  for (size_t k = 0; k < step.calls.size(); ++k) {
    const Call& call = step.calls[k];
    shared[k].clear();
    policy.check_shared(capture_call_for(step, call, call.view(size_t{0}), buffer), shared[k]);
  }
}

// Rank r's decisions: a call whose shared checks rejected rejects on every rank.
void decide_rank(const Step& step, size_t r, const BufferShape& buffer, const CapturePolicy& policy,
                 const std::vector<CaptureDecision>& shared, std::vector<CaptureDecision>& out) {
  for (size_t k = 0; k < step.calls.size(); ++k) {
    const Call& call = step.calls[k];
    out[k].clear();
    if (shared[k].rejected) {
      out[k].reject("");
      continue;
    }
    policy.decide_checked(capture_call_for(step, call, call.view(r), buffer), out[k]);
  }
}

// Where one copy's rows land: how many the source holds, and how far they reach past either
// end of a buffer of `buffer_rows` rows (an empty copy aimed past the end still overflows).
struct Landing {
  int64_t readable = 0;
  int64_t past_end = 0;
  int64_t before_start = 0;
};

Landing land(const Copy& copy, const RowTensor& source, int64_t buffer_rows) {
  Landing l;
  l.readable = std::clamp<int64_t>(source.rows() - copy.src_row, 0, copy.rows);
  l.past_end = copy.dst_row + l.readable - buffer_rows;
  l.before_start = std::min(-copy.dst_row, l.readable);
  return l;
}

// True when rows [src, src + n) of `source` are tokens (dp, 0 .. n-1) in one run.
bool holds_own_tokens(const RowTensor& source, int64_t src, int64_t n, int dp) {
  const size_t i = source.run_holding(src);
  const RowRun& run = source.runs()[i];
  const int64_t start = source.run_start(i);
  return run.kind == RowKind::token && run.dp == dp && run.first + (src - start) == 0 && start + run.length >= src + n;
}

// The common case settled without simulating: a one-call step whose single copy lands whole,
// inside the buffer, as exactly the rank's own tokens at row 0 (or lands nothing where the
// rank has nothing to capture). True only when the simulation below would pass the rank; any
// other case (a short read, an overflow, a misplaced row) returns false and is simulated.
bool passes_at_sight(const Step& step, size_t r, const std::vector<CaptureDecision>& decisions, int64_t buffer_rows,
                     Scratch& s, RankJudgement& rank) {
  if (step.calls.size() != 1 || step.rejection) return false;
  const CaptureDecision& decision = decisions.front();
  if (decision.rejected || decision.copies.size() != 1) return false;
  const Copy& copy = decision.copies.front();
  const Call& call = step.calls.front();
  const RowTensor& source = copy_source(call, call.view(r), copy.from_tp_gather, step.tp, s.gathered);
  const Landing l = land(copy, source, buffer_rows);
  if (l.readable < copy.rows || l.past_end > 0 || l.before_start > 0) return false;
  const int64_t n = std::min(step.num_tokens_across_dp[static_cast<size_t>(rank.dp)], buffer_rows);
  const bool own_rows = l.readable == n && (n == 0 || (copy.dst_row == 0 && holds_own_tokens(source, copy.src_row, n, rank.dp)));
  if (!own_rows) return false;
  if (copy.from_tp_gather) rank.tp_gathers[0] = 1;
  rank.rows = RowRange{copy.src_row, copy.src_row + copy.rows};
  return true;
}

// Simulates one class's step from its decisions and fills its verdict and finding.
void judge_rank(const Step& step, size_t r, const std::vector<CaptureDecision>& decisions, int64_t buffer_rows,
                Scratch& s, RankJudgement& rank, Finding& finding) {
  if (passes_at_sight(step, r, decisions, buffer_rows, s, rank)) return;
  s.image.clear();
  int64_t past_end = 0, before_start = 0;
  int copies_made = 0;
  for (size_t k = 0; k < step.calls.size(); ++k) {
    const Call& call = step.calls[k];
    const RankView view = call.view(r);
    const CaptureDecision& decision = decisions[k];
    if (decision.rejected) {
      if (!rank.rejected && !step.rejection) {
        rank.verdict = Verdict::spurious_reject;
        finding.kind = Finding::Kind::raised;
        finding.call = call.index;
      }
      rank.rejected = true;
      continue;
    }
    for (const Copy& copy : decision.copies) {
      if (copy.from_tp_gather) rank.tp_gathers[k] = 1;
      const RowTensor& source = copy_source(call, view, copy.from_tp_gather, step.tp, s.gathered);
      rank.rows = ++copies_made == 1 ? std::optional<RowRange>(RowRange{copy.src_row, copy.src_row + copy.rows})
                                     : std::nullopt;
      const Landing l = land(copy, source, buffer_rows);
      const int64_t readable = l.readable;
      if (readable < copy.rows && rank.verdict == Verdict::pass) {
        rank.verdict = Verdict::wrong_rows;
        finding.kind = Finding::Kind::short_read;
        finding.copy = copy;
        finding.source_rows = source.rows();
      }
      past_end = std::max(past_end, l.past_end);
      before_start = std::max(before_start, l.before_start);
      // Only rows inside [0, buffer_rows) reach the image; the rest are the overflow.
      const int64_t skip = std::clamp<int64_t>(-copy.dst_row, 0, readable);
      const int64_t fits = std::clamp<int64_t>(buffer_rows - (copy.dst_row + skip), 0, readable - skip);
      s.image.write(copy.dst_row + skip, source, copy.src_row + skip, fits, call.index);
    }
  }
  if (rank.rejected || step.rejection) return;
  if (past_end > 0 || before_start > 0) {
    rank.verdict = Verdict::overflow;
    finding.kind = Finding::Kind::overflow;
    finding.past_end = past_end;
    finding.before_start = before_start;
    finding.buffer_rows = buffer_rows;
    return;
  }
  if (rank.verdict != Verdict::pass) return;
  const int64_t n_d = step.num_tokens_across_dp[static_cast<size_t>(rank.dp)];
  if (auto diff = s.image.first_difference(rank.dp, std::min(n_d, buffer_rows))) {
    rank.verdict = Verdict::wrong_rows;
    finding.kind = Finding::Kind::difference;
    finding.difference = std::move(*diff);
  }
}

size_t rank_index(const Step& step, const RankJudgement& rank) {
  return static_cast<size_t>(rank.dp) * static_cast<size_t>(step.tp) + static_cast<size_t>(rank.tp);
}

// The ranks whose words a report can show: the first failing rank conclude() may settle on
// with TP rank 0 or a non-latent verdict, and the first failing rank of all. Both lead their
// class (a class holds one DP rank's TP ranks in order, so its first failing rank is its lead).
void render_reported(Judgement& j, const Scratch& s, const Wording& w) {
  bool first = true, first_published = true;
  for (size_t k = 0; k < j.classes.size() && (first || first_published); ++k) {
    RankJudgement& rank = j.classes[k];
    if (rank.verdict == Verdict::pass) continue;
    const bool published = rank.tp == 0 || rank.verdict != Verdict::wrong_rows;
    if (first || (first_published && published))
      rank.detail = render(s.findings[k], w, rank_index(w.step, rank), rank.dp, rank.tp);
    first = false;
    if (published) first_published = false;
  }
}

// Every failing rank's words: a failing class becomes one class a member, each naming itself.
// A step the reference rejects splits every class: conclude() words each rank's missed rejection.
void render_every_rank(Judgement& j, Scratch& s, const Wording& w) {
  const bool split_all = w.step.rejection.has_value();
  const bool any_failing_class =
      std::any_of(j.classes.begin(), j.classes.end(), [](auto& c) { return c.verdict != Verdict::pass; });
  if (!any_failing_class && !split_all) return;
  s.split.clear();
  for (size_t k = 0; k < j.classes.size(); ++k) {
    const RankJudgement& c = j.classes[k];
    if (c.verdict == Verdict::pass && !split_all) {
      s.split.push_back(c);
      continue;
    }
    for (int t = c.tp; t <= c.last_tp(); ++t) {
      RankJudgement& rank = s.split.emplace_back(c);
      rank.tp = t;
      rank.members = 1;
      rank.detail = c.verdict == Verdict::pass ? "" : render(s.findings[k], w, rank_index(w.step, rank), rank.dp, t);
    }
  }
  j.classes.swap(s.split);
}

// A fresh class led by (dp, tp); the per-call vectors keep their storage (their size is the
// call count, which rarely changes between cases).
void reset(RankJudgement& rank, int dp, int tp, size_t calls) {
  rank.dp = dp;
  rank.tp = tp;
  rank.members = 1;
  rank.verdict = Verdict::pass;
  if (rank.branches.size() != calls) rank.branches.resize(calls);
  rank.rows.reset();
  rank.detail.clear();
  rank.rejected = false;
  if (rank.tp_gathers.size() != calls) rank.tp_gathers.resize(calls);
  std::fill(rank.tp_gathers.begin(), rank.tp_gathers.end(), char{0});
}

// True when every TP rank of a DP rank is in the class of TP rank 0, whose decisions are
// `lead`: a policy blind to the TP rank sees the same shapes on each (so decides alike), and
// each call either hands every TP rank the same tensor or has them copy only from the TP
// all-gather. The per-rank test (mirrors_neighbour) settles the groups this one does not.
// Settled from the call's receipt, in O(1) whatever T: a per-DP or shared tensor is the same
// on every TP rank, and TP slices are T equal slices of one tensor.
bool whole_group_alike(const Step& step, const std::vector<CaptureDecision>& lead) {
  for (size_t k = 0; k < step.calls.size(); ++k) {
    if (!step.calls[k].split_across_tp() || step.tp == 1) continue;
    if (step.calls[k].receipt == Receipt::tp_split) return false;  // uneven parts: TP ranks see different sizes
    for (const Copy& copy : lead[k].copies)
      if (!copy.from_tp_gather) return false;
  }
  return true;
}

void prepare(Scratch& s, size_t rank_count, size_t calls) {
  if (s.findings.size() < rank_count) s.findings.resize(rank_count);
  s.decisions.resize(calls);
  s.candidate.resize(calls);
  s.shared.resize(calls);
  for (CaptureDecision& d : s.decisions) d.wants_words = false;
  for (CaptureDecision& d : s.candidate) d.wants_words = false;
  for (CaptureDecision& d : s.shared) d.wants_words = false;
}

}  // namespace

void judge_symbolic_into(Judgement& j, const Case& c, const Step& step, const CapturePolicy& policy,
                         std::string_view impl_name, RankDetails details, RankClasses classes) {
  thread_local Scratch s;
  j.impl.assign(impl_name);
  j.verdict = Verdict::pass;
  j.severity = Severity::none;
  j.branch.clear();
  j.detail.clear();
  j.allocation = policy.allocate(c);
  const BufferShape buffer{j.allocation.capture_rows, c.model.layers, c.model.top_k};
  const size_t rank_count = static_cast<size_t>(step.dp) * step.tp;
  const size_t calls = step.calls.size();
  const bool by_class = classes == RankClasses::identical_ranks_once;
  const bool per_tp_group = by_class && !policy.reads_tp_rank();
  prepare(s, rank_count, calls);
  check_shared(step, buffer, policy, s.shared);
  // Classes are written in order over the judgement's entries, which keep their storage from
  // the case before (rank counts swing from 1 to 512 between cases).
  size_t class_count = 0;
  auto start_class = [&]() -> RankJudgement& {
    if (class_count == j.classes.size()) take_spare(j.classes.emplace_back(), s.spare);
    return j.classes[class_count++];
  };
  const size_t tp = static_cast<size_t>(step.tp);
  // Rank r joins the class of its TP neighbour r-1 (the last class) or starts one of its own;
  // a lead (TP rank 0) always starts one.
  auto judge_in_turn = [&](size_t d, size_t t) {
    const size_t r = d * tp + t;
    const bool lead = t == 0;
    // A policy blind to the TP rank decides what the neighbour decided: keep its decisions.
    const bool decided_again = lead || !(per_tp_group && same_view_as_neighbour(step, r));
    if (decided_again) decide_rank(step, r, buffer, policy, s.shared, s.candidate);
    const std::vector<CaptureDecision>& mine = decided_again ? s.candidate : s.decisions;
    if (!lead && by_class && mirrors_neighbour(step, r, mine, s.decisions, decided_again)) {
      ++j.classes[class_count - 1].members;
      return;
    }
    if (decided_again) s.decisions.swap(s.candidate);
    RankJudgement& rank = start_class();
    reset(rank, static_cast<int>(d), static_cast<int>(t), calls);
    for (size_t k = 0; k < calls; ++k) rank.branches[k] = s.decisions[k].branch;
    Finding& finding = s.findings[class_count - 1];
    finding.kind = Finding::Kind::none;
    judge_rank(step, r, s.decisions, buffer.rows, s, rank, finding);
  };
  for (size_t d = 0; d < static_cast<size_t>(step.dp); ++d) {
    judge_in_turn(d, 0);
    if (per_tp_group && whole_group_alike(step, s.decisions)) {
      j.classes[class_count - 1].members = step.tp;
      continue;
    }
    for (size_t t = 1; t < tp; ++t) judge_in_turn(d, t);
  }
  resize_keeping_storage(j.classes, class_count, s.spare);
  const Wording words{step, policy, buffer};
  if (details == RankDetails::every_rank) {
    render_every_rank(j, s, words);
  } else {
    render_reported(j, s, words);
    // conclude() words every rank's missed rejection on a step the reference rejects.
    if (step.rejection) split_into_ranks(j);
  }
  conclude(j, c, step);
}

Judgement judge_symbolic(const Case& c, const Step& step, const CapturePolicy& policy, std::string_view impl_name,
                         RankDetails details, RankClasses classes) {
  Judgement j;
  judge_symbolic_into(j, c, step, policy, impl_name, details, classes);
  return j;
}

}  // namespace r3
