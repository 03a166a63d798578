// Field names follow what SGLang's code reads, paths under python/sglang/srt/ (upstream main at
// 30cb848d4b455a288a37cfeb6a45aff34f5634a6): forward_batch.global_num_tokens_cpu and
// out_cache_loc (model_executor/forward_batch_info.py), the decode runner's bs and
// captured_req_width (model_executor/runner/decode_cuda_graph_runner.py), can_run_graph
// (model_runner.py, _forward_raw), get_parallel().attn_tp_size / attn_tp_rank.
#include <algorithm>
#include "fuzz/engines/sglang/protocol.hpp"

#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "fuzz/adapter/protocol.hpp"
#include "fuzz/adapter/row_writes.hpp"
#include "fuzz/oracle/host_executor.hpp"
#include "reference/capturer.hpp"

namespace r3 {
namespace {

using nlohmann::json;
using sglang::CaptureLayout;
using sglang::ForwardKind;

std::string_view forward_mode(ForwardKind kind) {
  switch (kind) {
    case ForwardKind::extend: return "extend";
    case ForwardKind::decode: return "decode";
    case ForwardKind::verify: return "target_verify";  // ForwardMode.TARGET_VERIFY
  }
  return "extend";
}

// What attn_tp_all_gather_into_tensor returns on this rank: the group's attn-TP slices in TP
// order. DeepEP's capture always gathers (attn_tp 1 included); for the other scattered
// backends it is sent when attn_tp > 1, for a capturer that gathers them as DeepEP's does.
bool sends_gather(const sglang::ForwardLayout& f, int tp) {
  return f.capture == CaptureLayout::deepep_gather || (f.capture == CaptureLayout::attn_tp_slice && tp > 1);
}

json server_args(const Case& c) {
  const sglang::Forward& f = *sglang::forward_of(c);
  json decode = json::array(), prefill = json::array();
  if (f.cuda_graph) {
    decode = f.cuda_graph->decode;
    prefill = f.cuda_graph->prefill;
  }
  return {{"chunked_prefill_size", f.chunked_prefill_size},
          {"max_running_requests", f.max_running_requests},
          {"max_prefill_tokens", f.max_prefill_tokens},
          {"cuda_graph_bs", decode},
          {"prefill_cuda_graph_tokens", prefill},
          {"speculative_num_draft_tokens", f.spec_width}};
}

}  // namespace

json sglang_request_fields(int64_t id, const Case& c, const Step& step, int dp, int tp) {
  const sglang::ForwardLayout& f = *sglang::forward_of(step);
  const size_t d = static_cast<size_t>(dp);
  const int K = c.model.top_k;
  json calls = json::array();
  RowTensor scratch;
  for (const Call& call : step.calls) {
    const RankView view = call.view(dp, tp);
    const size_t k = static_cast<size_t>(call.index);
    json entry = {{"topk_ids", tensor_values(call.input_of(view), K)},
                  {"dp_local_start", f.segment_start[k][d]},
                  {"dp_local_num_tokens", f.call_rows[k][d].size()},
                  {"batch_offset", f.call_rows[k][d].lo}};
    if (sends_gather(f, step.tp)) entry["attn_tp_all_gather"] = tensor_values(copy_source(call, view, true, step.tp, scratch), K);
    calls.push_back(std::move(entry));
  }
  const int64_t bs = f.runner_bs[d];
  return {{"type", "capture"},
          {"engine", "sglang"},
          {"id", id},
          {"rank", {{"dp", dp}, {"tp", tp}}},
          {"dp_size", step.dp},
          {"attn_tp_size", step.tp},
          {"attn_tp_rank", tp},
          {"dp_attention", f.dp_attention},
          {"a2a", sglang::to_string(f.a2a)},
          {"layer", step.layer},
          {"num_layers", c.model.layers},
          {"top_k", K},
          {"server_args", server_args(c)},
          {"calls", std::move(calls)},
          {"forward_batch",
           {{"forward_mode", forward_mode(f.kind)},
            {"global_num_tokens_cpu", f.global_num_tokens_cpu},
            {"out_cache_loc", f.out_cache_loc[d]},
            {"real_tokens", f.tokens[d]}}},
          {"can_run_graph", f.can_run_graph()},
          {"decode_cuda_graph_runner", {{"bs", bs > 0 ? json(bs) : json(nullptr)}, {"captured_req_width", f.spec_width}}}};
}

json sglang_request(int64_t id, const json& case_json, const Case& c, const Step& step, int dp, int tp) {
  json request = sglang_request_fields(id, c, step, dp, tp);
  request["case"] = case_json;
  return request;
}

std::string sglang_batch_request(int64_t first_id, const json& case_json, const Case& c, const Step& step) {
  std::string requests;
  int64_t id = first_id;
  for (int dp = 0; dp < step.dp; ++dp)
    for (int tp = 0; tp < step.tp; ++tp) {
      if (!requests.empty()) requests += ',';
      requests += sglang_request_fields(id++, c, step, dp, tp).dump();
    }
  return R"({"type":"batch","engine":"sglang","case":)" + case_json.dump() + R"(,"requests":[)" + requests + "]}";
}

namespace {

constexpr int64_t kRowLimit = int64_t{1} << 40;  // as protocol.cpp: far beyond any buffer

// One published row: top_k values, all of them negative for a stale row (the capturer's
// device buffer starts as -1, what an earlier forward left: docs/adapter-protocol.md).
Result<std::optional<std::vector<int32_t>>> read_row(const json& values, const std::string& where, int top_k) {
  if (!values.is_array() || values.size() != static_cast<size_t>(top_k)) {
    return Error{where + ": expected a list of " + std::to_string(top_k) + " integers (top_k), got " +
                 (values.is_array() ? std::to_string(values.size()) + " entries" : std::string(reply_type_name(values)))};
  }
  std::vector<int32_t> row;
  int negative = 0;
  for (size_t k = 0; k < values.size(); ++k) {
    R3_TRY(int64_t v, read_reply_int(values[k], where + "[" + std::to_string(k) + "]",
                                     std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    negative += v < 0;
    row.push_back(static_cast<int32_t>(v));
  }
  if (negative == top_k) return std::optional<std::vector<int32_t>>();
  if (negative > 0) return Error{where + ": mixes negative (stale) and routed values"};
  return std::optional<std::vector<int32_t>>(std::move(row));
}

}  // namespace

Result<SglangReply> read_sglang_reply(const json& reply, int top_k) {
  SglangReply out;
  R3_TRY(out.id, reply_id(reply));
  R3_TRY_STATUS(only_reply_keys(reply, "", {"id", "buffer_rows", "rows", "error", "branch", "window"}));
  if (reply.contains("rows") == reply.contains("error"))
    return Error{"expected exactly one of \"rows\" or \"error\""};
  if (!reply.contains("buffer_rows")) return Error{"missing \"buffer_rows\" (the rows of the capturer's device buffer)"};
  R3_TRY(out.buffer_rows, read_reply_int(reply["buffer_rows"], "buffer_rows", 0, kRowLimit));
  if (reply.contains("branch")) {
    R3_TRY(out.branch, read_reply_string(reply["branch"], "branch"));
    if (out.branch.empty() || out.branch.size() > 64) return Error{"branch: expected 1 to 64 characters"};
  }
  if (reply.contains("window")) {
    const json& w = reply["window"];
    if (!w.is_array() || w.size() != 2) return Error{"window: expected [start, rows]"};
    Window window;
    R3_TRY(window.start, read_reply_int(w[0], "window[0]", -kRowLimit, kRowLimit));
    R3_TRY(window.rows, read_reply_int(w[1], "window[1]", -kRowLimit, kRowLimit));
    out.window = window;
  }
  if (reply.contains("error")) {
    R3_TRY(out.error, read_reply_string(reply["error"], "error"));
    out.rejected = true;
    if (out.branch.empty()) out.branch = "error";
    return out;
  }
  const json& rows = reply["rows"];
  if (!rows.is_array()) return Error{"rows: expected a list, got " + std::string(reply_type_name(rows))};
  for (size_t i = 0; i < rows.size(); ++i) {
    R3_TRY(auto row, read_row(rows[i], "rows[" + std::to_string(i) + "]", top_k));
    out.rows.push_back(std::move(row));
  }
  if (out.branch.empty()) out.branch = "unnamed";
  return out;
}

namespace {

// The replies as a policy with no copies, so the host executor builds the ranks, their calls
// and their untouched guarded images exactly as for a model; the published rows go in after.
class PublishedReplies final : public CapturePolicy {
 public:
  PublishedReplies(Allocation allocation, const std::vector<SglangReply>& replies, int tp)
      : allocation_(allocation), replies_(replies), tp_(tp) {}
  std::string_view name() const override { return "external"; }
  Engine engine() const override { return sglang::engine(); }
  Allocation allocate(const Case&) const override { return allocation_; }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    const SglangReply& reply = replies_[static_cast<size_t>(call.dp_rank * tp_ + call.tp_rank)];
    const bool last = call.call_index == call.call_count - 1;
    out.branch = adapter_branch_name(reply.rejected ? std::string("unnamed") : reply.branch);  // error: set below
    out.window = reply.window;
    if (reply.rejected && last) out.reject(reply.error);
  }

 private:
  Allocation allocation_;
  const std::vector<SglangReply>& replies_;
  int tp_;
};

// The rows of a published image the judge can tell apart on this step: the most rows a capture
// call writes (the capacity check's bound) and every rank's KV slots (a reply publishes at most
// that many rows, and the real tokens among them are the rows the reference expects). Past
// them, every row is untouched in the image and in the reference alike.
int64_t judged_rows(const Step& step) {
  int64_t most = step.capture_rows_needed;
  for (int64_t slots : sglang::forward_of(step)->out_cache_loc) most = std::max(most, slots);
  for (int64_t real : step.num_tokens_across_dp) most = std::max(most, real);
  return most;
}

std::string rank_name(size_t r, int tp) {
  return "dp " + std::to_string(r / static_cast<size_t>(tp)) + " tp " + std::to_string(r % static_cast<size_t>(tp));
}

}  // namespace

Result<ConcreteOutcome> sglang_outcome(const Case& c, const Step& step, const std::vector<SglangReply>& replies) {
  const size_t rank_count = static_cast<size_t>(step.dp) * step.tp;
  if (replies.size() != rank_count)
    return Error{"expected " + std::to_string(rank_count) + " replies, got " + std::to_string(replies.size())};
  const int64_t buffer_rows = replies.front().buffer_rows;
  for (size_t r = 1; r < rank_count; ++r)
    if (replies[r].buffer_rows != buffer_rows)
      return Error{rank_name(r, step.tp) + " says buffer_rows " + std::to_string(replies[r].buffer_rows) +
                   ", dp 0 tp 0 says " + std::to_string(buffer_rows) + " (every rank allocates the same buffer)"};
  // The forward end stores one row per KV slot: a reply cannot publish more.
  for (size_t r = 0; r < rank_count; ++r) {
    const int64_t slots = sglang::forward_of(step)->out_cache_loc[r / static_cast<size_t>(step.tp)];
    if (static_cast<int64_t>(replies[r].rows.size()) > slots)
      return Error{rank_name(r, step.tp) + ": rows: " + std::to_string(replies[r].rows.size()) +
                   " published rows, more than the rank's " + std::to_string(slots) +
                   " KV slots (forward_batch.out_cache_loc)"};
  }
  // buffer_rows sizes nothing past what the case can use (docs/SECURITY.md): a larger buffer is
  // legitimate (SGLang sizes it from the server arguments, not the forward) and judged as its
  // first judged_rows() rows, which give the same verdict and detail as the whole buffer would:
  // the capacity check reads rows below them, and so does every published row.
  Allocation allocation;
  allocation.capture_rows = std::min(buffer_rows, judged_rows(step));
  const PublishedReplies policy(allocation, replies, step.tp);
  ConcreteOutcome outcome = execute_on_host(c, step, policy);
  for (size_t r = 0; r < rank_count; ++r) {
    if (replies[r].rejected) continue;
    std::vector<RowWrite> writes;
    // The published rows are the host cache's KV slots, not the device buffer's rows: a row past
    // the image's R rows (a one-row window broadcast to more slots) is left unwritten, a wrong row
    // all the same, as the models leave it (reference/engines/sglang/policy.cpp), never an overflow.
    const size_t shown = std::min(replies[r].rows.size(), static_cast<size_t>(std::max<int64_t>(0, allocation.capture_rows)));
    for (size_t j = 0; j < shown; ++j)
      if (replies[r].rows[j]) writes.push_back({static_cast<int64_t>(j), *replies[r].rows[j]});
    apply_row_writes(outcome.ranks[r].capture, step.layer, c.model.top_k, writes, kMinGuardRows);  // rows < R: no growth
  }
  return outcome;
}

}  // namespace r3
