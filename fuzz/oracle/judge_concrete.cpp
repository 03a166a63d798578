#include <algorithm>
#include <mutex>
#include <optional>
#include <set>

#include "fuzz/oracle/host_executor.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/provenance.hpp"

namespace r3 {
namespace {

std::string rank_name(int dp, int tp) { return "dp " + std::to_string(dp) + " tp " + std::to_string(tp); }

// RankJudgement keeps branch names as views: map the ones an implementation reports onto
// storage that outlives its outcome (the known names are constants already).
std::string_view stable_branch(std::string_view name) {
  for (std::string_view known : {branch::single, branch::naive_total, branch::local, branch::gathered_shards,
                                 branch::sp_allgather, branch::skip, branch::error})
    if (name == known) return known;
  static std::mutex mutex;
  static std::set<std::string, std::less<>> names;
  std::lock_guard<std::mutex> lock(mutex);
  return *names.emplace(name).first;
}

std::optional<std::string> image_shape_error(const GuardedImage& img, const std::string& what, int64_t rows,
                                             int64_t width) {
  if (img.rows != rows) {
    return what + " has " + std::to_string(img.rows) + " rows, the allocation says " + std::to_string(rows);
  }
  if (img.row_width != width) {
    return what + " rows are " + std::to_string(img.row_width) + " values wide, expected " + std::to_string(width);
  }
  if (img.guard_rows < 0 || img.bits < 1 || img.bits > 32) return what + " has a negative guard or a bad width";
  const int64_t want = (img.rows + 2 * img.guard_rows) * img.row_width;
  if (static_cast<int64_t>(img.data.size()) != want) {
    return what + " holds " + std::to_string(img.data.size()) + " values, its shape needs " + std::to_string(want);
  }
  return std::nullopt;
}

std::optional<std::string> outcome_shape_error(const Case& c, const Step& step, const ConcreteOutcome& o) {
  const size_t rank_count = static_cast<size_t>(step.dp) * step.tp;
  if (o.ranks.size() != rank_count) {
    return "returned " + std::to_string(o.ranks.size()) + " ranks, the case has " + std::to_string(rank_count);
  }
  const bool replay = o.allocation.replay_rows.has_value() && step.replay_rows_needed.has_value();
  for (size_t r = 0; r < rank_count; ++r) {
    const ConcreteRank& rank = o.ranks[r];
    const int dp = static_cast<int>(r) / step.tp, tp = static_cast<int>(r) % step.tp;
    const bool labelled = rank.dp == dp && rank.tp == tp && rank.calls.size() == step.calls.size();
    auto shape_ok = [](const GuardedImage& img, int64_t rows, int64_t width) {
      return img.rows == rows && img.row_width == width && img.guard_rows >= 0 && img.bits >= 1 && img.bits <= 32 &&
             static_cast<int64_t>(img.data.size()) == (img.rows + 2 * img.guard_rows) * img.row_width;
    };
    // The common case, checked without building a single message.
    if (labelled && shape_ok(rank.capture, o.allocation.capture_rows, int64_t{c.model.layers} * c.model.top_k) &&
        replay == rank.replay.has_value() &&
        (!replay || shape_ok(*rank.replay, *o.allocation.replay_rows, c.model.top_k)))
      continue;
    const std::string name = rank_name(dp, tp);
    if (rank.dp != dp || rank.tp != tp) {
      return "rank " + std::to_string(r) + " is labelled " + rank_name(rank.dp, rank.tp) + ", expected " + name;
    }
    if (rank.calls.size() != step.calls.size()) {
      return name + " reports " + std::to_string(rank.calls.size()) + " capture calls, the step makes " +
             std::to_string(step.calls.size());
    }
    if (auto e = image_shape_error(rank.capture, "capture buffer of " + name, o.allocation.capture_rows,
                                   int64_t{c.model.layers} * c.model.top_k))
      return e;
    if (replay && !rank.replay) return name + " returned no replay buffer on a monolithic case";
    if (!replay && rank.replay) return name + " returned a replay buffer the case has no use for";
    if (replay) {
      if (auto e = image_shape_error(*rank.replay, "replay buffer of " + name, *o.allocation.replay_rows, c.model.top_k))
        return e;
    }
  }
  return std::nullopt;
}

// Rows written outside the body, read off the guard regions: everything from the buffer's
// end to the last guard row that lost its canary, or from the first such row before its start.
struct GuardDamage {
  int64_t before = 0;
  int64_t after = 0;
};

GuardDamage guard_damage(const GuardedImage& img) {
  const int32_t canary = stored_value(kCanary, img.bits);
  auto row_intact = [&](int64_t stored_row) {
    const int32_t* v = img.data.data() + stored_row * img.row_width;
    return std::all_of(v, v + img.row_width, [&](int32_t x) { return x == canary; });
  };
  GuardDamage g;
  for (int64_t i = 0; i < img.guard_rows; ++i)
    if (!row_intact(i)) {
      g.before = img.guard_rows - i;
      break;
    }
  for (int64_t i = img.guard_rows - 1; i >= 0; --i)
    if (!row_intact(img.guard_rows + img.rows + i)) {
      g.after = i + 1;
      break;
    }
  return g;
}

std::optional<std::string> overflow_detail(const GuardedImage& img, const std::string& buffer, int dp, int tp) {
  const GuardDamage g = guard_damage(img);
  if (g.after == 0 && g.before == 0) return std::nullopt;
  const std::string head = buffer + " of " + rank_name(dp, tp) + ": ";
  const std::string holds = " (it holds " + std::to_string(img.rows) + " rows)";
  if (g.after > 0) return head + std::to_string(g.after) + " rows written past its end" + holds;
  return head + std::to_string(g.before) + " rows written before its start" + holds;
}

std::string describe_capture_value(int32_t v, int64_t row, int layer, int k) {
  if (v == kCanary) return "the canary";
  const auto decoded = decode_value(v);
  if (!decoded) return "the value " + std::to_string(v);
  if (decoded->id.kind == RowKind::untouched) {
    if (decoded->id.dp == layer && decoded->id.index == row && decoded->k == k) return "an untouched row";
    return "a stale value (buffer row " + std::to_string(decoded->id.index) + ", layer " +
           std::to_string(decoded->id.dp) + ")";
  }
  std::string text = describe(decoded->id);
  if (decoded->k != k) text += " (its top-k slot " + std::to_string(decoded->k) + ")";
  return text;
}

// The reference capture body of DP rank `dp` ([rows, L*K]); the TP ranks of one DP rank share it.
void reference_capture_body(const GuardedImage& img, const Step& step, int dp, int K, std::vector<int32_t>& out) {
  const int64_t n_d = std::min(step.num_tokens_across_dp[static_cast<size_t>(dp)], img.rows);
  const int L = static_cast<int>(img.row_width / K);
  out.resize(static_cast<size_t>(img.rows * img.row_width));
  for (int64_t row = 0; row < img.rows; ++row)
    for (int l = 0; l < L; ++l)
      for (int k = 0; k < K; ++k)
        out[static_cast<size_t>(row * img.row_width + l * K + k)] =
            l == step.layer && row < n_d ? routing_value({RowKind::token, dp, row}, k) : untouched_value(row, l, k);
}

// Compares the capture body with the reference image; the first differing value in words.
std::optional<std::string> capture_difference(const GuardedImage& img, const Step& step, int dp, int tp, int K,
                                              const std::vector<int32_t>& reference) {
  const int32_t* body = img.data.data() + img.guard_rows * img.row_width;
  if (std::equal(reference.begin(), reference.end(), body)) return std::nullopt;
  const int64_t n_d = std::min(step.num_tokens_across_dp[static_cast<size_t>(dp)], img.rows);
  const int L = static_cast<int>(img.row_width / K);
  for (int64_t row = 0; row < img.rows; ++row) {
    const int32_t* values = body + row * img.row_width;
    for (int l = 0; l < L; ++l) {
      const bool token = l == step.layer && row < n_d;
      for (int k = 0; k < K; ++k) {
        const int32_t want = reference[static_cast<size_t>(row * img.row_width + l * K + k)];
        const int32_t got = values[l * K + k];
        if (got == want) continue;
        return "buffer row " + std::to_string(row) + (l != step.layer ? " (layer " + std::to_string(l) + ")" : "") +
               " of " + rank_name(dp, tp) + " holds " + describe_capture_value(got, row, l, k) + ", expected " +
               (token ? describe({RowKind::token, dp, row}) : std::string("it untouched"));
      }
    }
  }
  return std::nullopt;
}

// The replay body a correct kernel leaves: each call writes the routing of its input rows.
// Ranks that receive the same tensors in every call share it, so it is built once for them.
struct ReplayReference {
  std::vector<std::pair<int, RowRange>> received;  // per call: the tensor and rows the kernel processed
  int bits = 0;
  std::vector<int32_t> want;  // [rows, K]
  std::vector<RowId> source;  // per row: the routing row it holds
};

const ReplayReference& replay_reference(const GuardedImage& img, const Case& c, const Step& step, size_t r,
                                        ReplayReference& cache) {
  // Compared in place: building rank r's list first would allocate once per rank.
  const bool same = cache.bits == img.bits && !cache.want.empty() && cache.received.size() == step.calls.size() &&
                    std::equal(step.calls.begin(), step.calls.end(), cache.received.begin(),
                               [r](const Call& call, const std::pair<int, RowRange>& got) {
                                 const RankView v = call.view(r);
                                 return v.received == got.first && v.rows == got.second;
                               });
  if (same) return cache;
  cache.received.clear();
  for (const Call& call : step.calls) {
    const RankView v = call.view(r);
    cache.received.emplace_back(v.received, v.rows);
  }
  cache.bits = img.bits;
  const int K = c.model.top_k;
  std::vector<int32_t>& want = cache.want;
  std::vector<RowId>& source = cache.source;
  want.assign(static_cast<size_t>(img.rows * K), stored_value(kReplayUntouched, img.bits));
  source.assign(static_cast<size_t>(img.rows), RowId{});
  for (const Call& call : step.calls) {
    const RowTensor input = call.input_of(call.view(r));
    const int64_t rows = std::min({call.kernel_rows, input.rows(), img.rows});
    int64_t row = 0;
    for (const RowRun& run : input.runs()) {
      for (int64_t i = 0; i < run.length && row < rows; ++i, ++row) {
        source[static_cast<size_t>(row)] = run.at(i);
        for (int k = 0; k < K; ++k) want[static_cast<size_t>(row * K + k)] = replay_value(routing_value(run.at(i), k), c.model.experts);
      }
      if (row >= rows) break;
    }
  }
  return cache;
}

std::optional<std::string> replay_difference(const GuardedImage& img, const Case& c, const Step& step, size_t r,
                                             ReplayReference& cache) {
  const int K = c.model.top_k;
  const ReplayReference& ref = replay_reference(img, c, step, r, cache);
  const std::vector<int32_t>& want = ref.want;
  const std::vector<RowId>& source = ref.source;
  const int32_t* body = img.data.data() + img.guard_rows * img.row_width;
  // Most buffers are right: one pass over the whole body, as capture_difference does, before
  // the row-by-row search for the first difference.
  if (std::equal(want.begin(), want.end(), body)) return std::nullopt;
  for (int64_t row = 0; row < img.rows; ++row)
    for (int k = 0; k < K; ++k) {
      const int32_t got = body[row * K + k], expect = want[static_cast<size_t>(row * K + k)];
      if (got == expect) continue;
      const std::string whose = expect == kReplayUntouched ? std::string(" (a row the kernel never writes)")
                                                           : " (the routing of " + describe(source[static_cast<size_t>(row)]) + ")";
      return "replay buffer row " + std::to_string(row) + " of " + rank_name(static_cast<int>(r) / step.tp,
             static_cast<int>(r) % step.tp) + " holds expert id " + std::to_string(got) + " in top-k slot " +
             std::to_string(k) + ", expected " + std::to_string(expect) + whose +
             (img.bits < 32 ? " (stored as int" + std::to_string(img.bits) + ")" : "");
    }
  return std::nullopt;
}

}  // namespace

Judgement judge_concrete(const Case& c, const Step& step, const ConcreteOutcome& outcome, std::string_view impl_name) {
  Judgement j;
  j.impl = std::string(impl_name);
  j.allocation = outcome.allocation;
  if (auto why = outcome_shape_error(c, step, outcome)) {
    j.verdict = Verdict::adapter_error;
    j.severity = Severity::failure;
    j.branch = "none";
    j.detail = j.impl + " " + *why;
    return j;
  }
  const size_t rank_count = static_cast<size_t>(step.dp) * step.tp;
  j.classes.resize(rank_count);  // a class a rank: each buffer is compared on its own
  ReplayReference replay_cache;
  std::vector<int32_t> reference;  // capture body of DP rank reference_dp
  int reference_dp = -1;
  for (size_t r = 0; r < rank_count; ++r) {
    const ConcreteRank& got = outcome.ranks[r];
    RankJudgement& rank = j.classes[r];
    rank.dp = got.dp;
    rank.tp = got.tp;
    int copies_made = 0;
    for (size_t ci = 0; ci < got.calls.size(); ++ci) {
      const CaptureDecision& d = got.calls[ci];
      rank.branches.push_back(stable_branch(d.branch));
      const bool gathers = std::any_of(d.copies.begin(), d.copies.end(), [](const Copy& x) { return x.from_tp_gather; });
      rank.tp_gathers.push_back(gathers || (d.copies.empty() && !d.rejected && d.branch == branch::sp_allgather));
      if (d.rejected) {
        if (!rank.rejected && !step.rejection) {
          rank.verdict = Verdict::spurious_reject;
          rank.detail = rank_name(rank.dp, rank.tp) + " raised on a valid case" +
                        (step.calls.size() > 1 ? " in call " + std::to_string(ci + 1) + " of " +
                                                     std::to_string(step.calls.size())
                                               : "") +
                        ": " + d.error;
        }
        rank.rejected = true;
        continue;
      }
      for (const Copy& copy : d.copies)
        rank.rows = ++copies_made == 1 ? std::optional<RowRange>(RowRange{copy.src_row, copy.src_row + copy.rows})
                                       : std::nullopt;
    }
    if (rank.rejected || step.rejection) continue;
    std::optional<std::string> found = overflow_detail(got.capture, "capture buffer", rank.dp, rank.tp);
    if (!found && got.replay) found = overflow_detail(*got.replay, "replay buffer", rank.dp, rank.tp);
    if (found) {
      rank.verdict = Verdict::overflow;
      rank.detail = std::move(*found);
      continue;
    }
    if (reference_dp != rank.dp) {
      reference_capture_body(got.capture, step, rank.dp, c.model.top_k, reference);
      reference_dp = rank.dp;
    }
    found = capture_difference(got.capture, step, rank.dp, rank.tp, c.model.top_k, reference);
    if (!found && got.replay) found = replay_difference(*got.replay, c, step, r, replay_cache);
    if (found) {
      rank.verdict = Verdict::wrong_rows;
      rank.detail = std::move(*found);
    }
  }
  conclude(j, c, step);
  return j;
}

}  // namespace r3
