#include "reference/fault.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "reference/layout.hpp"

namespace r3 {
namespace {

// The engines whose capture can have the bug.
enum EngineMask : unsigned { kVllm = 1, kSglang = 2, kBoth = 3 };

struct FaultInfo {
  Fault fault;
  std::string_view name;
  std::string_view bug_class;
  FaultLayer layer;
  std::string_view description;
  unsigned engines = kVllm;
};

// In Fault's order (info() indexes it), none first.
constexpr std::array<FaultInfo, 17> kFaults{{
    {Fault::none, "none", "none", FaultLayer::decision, "no fault", kBoth},
    {Fault::replay_per_rank, "replay-per-rank", "overflow", FaultLayer::allocation,
     "monolithic replay buffer of M rows (vLLM before PR #50874)"},
    {Fault::replay_dp_under_ep, "replay-dp-under-ep", "overflow (needs heavy SP padding)", FaultLayer::allocation,
     "monolithic replay buffer of M*D rows, also under EP+SP"},
    {Fault::tp_major_order, "tp-major-order", "ordering", FaultLayer::gather,
     "gathered SP shards (SGLang: the attn-TP slices of the MAX_LEN DP gather) ordered as if the group were t*D + d",
     kBoth},
    {Fault::unpadded_offset, "unpadded-offset", "ordering", FaultLayer::decision,
     "gathered_shards starts at sum(num_tokens_across_dp[:d]) (no SP padding)"},
    {Fault::no_trim, "no-trim", "overflow / garbage", FaultLayer::decision,
     "SP branches copy T*s_d rows (the padded shard total) instead of n_d"},
    {Fault::floor_sp, "floor-sp", "ordering / lost rows", FaultLayer::gather,
     "SP shard size floor(n_d/T): shard test, offsets and row counts use it"},
    {Fault::skip_tp_gather, "skip-tp-gather", "wrong rows", FaultLayer::gather,
     "sp_allgather copies the local shard, without the TP all-gather"},
    {Fault::last_shard_pad, "last-shard-pad", "ordering", FaultLayer::decision,
     "SP branches take (T-1)*s_d rows as real when padding spans several shards"},
    {Fault::layer_unchecked, "layer-unchecked", "overflow", FaultLayer::check,
     "layer >= L is not rejected (the case format cannot express such a layer)"},
    {Fault::narrow_int16, "narrow-int16", "value overflow", FaultLayer::allocation,
     "replay ids stored in 16 bits whatever E is"},
    {Fault::off_by_one_copy, "off-by-one-copy", "overflow", FaultLayer::decision,
     "every copy of a call moves one row too many (SGLang: every copy the window publishes)", kBoth},
    {Fault::chunk_row0, "chunk-row0", "ordering", FaultLayer::decision, "every DP chunk is written at buffer row 0"},
    // SGLang's: the mismatches its design invites between the layout capture sees and the window.
    {Fault::window_request_bucket, "window-request-bucket", "ordering", FaultLayer::decision,
     "a decode/verify-graph window under DP attention starts at r*bs (requests) instead of r*bs*w (tokens), "
     "upstream's cuda_graph_batch",
     kSglang},
    {Fault::no_attn_tp_gather, "no-attn-tp-gather", "wrong rows", FaultLayer::gather,
     "capture writes its attn-TP slice without the attn-TP all-gather (DeepEP and the scattered backends)", kSglang},
    {Fault::no_attn_tp_align, "no-attn-tp-align", "ordering", FaultLayer::decision,
     "a DP-gathered rank's rows looked up at offsets of the raw counts n, not of the attn_tp-aligned a", kSglang},
    {Fault::tbo_row0, "tbo-row0", "ordering", FaultLayer::decision,
     "every TBO child written at row 0 (sglang-fixed's TBO fix undone)", kSglang},
}};

constexpr bool table_in_enum_order() {
  for (size_t i = 0; i < kFaults.size(); ++i)
    if (static_cast<size_t>(kFaults[i].fault) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "kFaults is indexed by Fault");

constexpr std::array<Fault, kFaults.size() - 1> kTable = [] {
  std::array<Fault, kFaults.size() - 1> order{};
  for (size_t i = 1; i < kFaults.size(); ++i) order[i - 1] = kFaults[i].fault;
  return order;
}();

const FaultInfo& info(Fault f) { return kFaults[static_cast<size_t>(f)]; }

int64_t own_count(const CaptureCall& call) {
  return call.metadata->num_tokens_across_dp[static_cast<size_t>(call.dp_rank)];
}

// gathered_shards located at the prefix sum of the token counts, as if no rank were padded.
void unpadded_offset(const CaptureCall& call, CaptureDecision& out) {
  if (out.branch != branch::gathered_shards) return;
  const auto& across = call.metadata->num_tokens_across_dp;
  const int64_t start = std::accumulate(across.begin(), across.begin() + call.dp_rank, int64_t{0});
  for (Copy& copy : out.copies) copy.src_row = start;
}

void no_trim(const CaptureCall& call, CaptureDecision& out) {
  if (!sp_sharded_call(call) || !is_sp_branch(out)) return;
  const int T = call.tp_size;
  if (call.chunk_size == 0) {
    for (Copy& copy : out.copies) copy.rows = T * ceil_div(own_count(call), T);
    return;
  }
  // A DP chunk: every TP rank's chunk copied whole, padding included.
  const int64_t per_tp = ceil_div(own_count(call), T);
  out.copies.clear();
  for (int t = 0; t < T; ++t) out.copies.push_back({t * per_tp + call.row_offset, t * call.rows, call.rows, true});
}

void last_shard_pad(const CaptureCall& call, CaptureDecision& out) {
  if (!sp_sharded_call(call) || !is_sp_branch(out) || call.chunk_size > 0 || out.copies.empty()) return;
  const int64_t n_d = own_count(call);
  const int T = call.tp_size;
  out.copies.front().rows = std::max(n_d, (T - 1) * ceil_div(n_d, T));
}

// --- SGLang (reference/engines/sglang/; ../shared/spec/sglang-contract.md) ---------------

using sglang::CaptureLayout;

// window-request-bucket: in a decode/verify-graph replay under DP attention (layout dp_graph)
// rank r's rows start at r * bs * w, the token bucket; upstream's window passes the request
// bucket bs as cuda_graph_batch (model_runner.py, forward; layers/dp_attention.py,
// get_dp_local_slice_cpu), so it starts at r * bs: the token offset read as a request count.
void window_request_bucket(const CaptureCall& call, CaptureDecision& out) {
  const sglang::ForwardLayout& f = *call.sglang;
  if (f.capture != CaptureLayout::dp_graph || f.spec_width <= 1) return;
  for (Copy& copy : out.copies) copy.src_row /= f.spec_width;
  if (out.window) out.window->start /= f.spec_width;
}

// no-attn-tp-align: where a DP gather (MAX_LEN or SUM_LEN) placed rank r at an offset of the
// aligned counts a_j = ceil_align(n_j, attn_tp) (forward_batch_info.py, prepare_mlp_sync_batch),
// the faulty reader computes it from the raw counts n_j: sum(n[:r]) for SUM_LEN, r * max(n)
// for MAX_LEN. Every copy of the rank (and its window) moves by the difference.
void no_attn_tp_align(const CaptureCall& call, CaptureDecision& out) {
  const sglang::ForwardLayout& f = *call.sglang;
  if (f.capture != CaptureLayout::dp_max_len && f.capture != CaptureLayout::dp_sum_len) return;
  const size_t r = static_cast<size_t>(call.dp_rank);
  int64_t aligned = 0, raw = 0;
  if (f.capture == CaptureLayout::dp_sum_len) {
    for (size_t j = 0; j < r; ++j) aligned += f.global_num_tokens_cpu[j], raw += f.tokens[j];
  } else {
    aligned = static_cast<int64_t>(r) * f.global_num_tokens_cpu[r];
    raw = static_cast<int64_t>(r) * *std::max_element(f.tokens.begin(), f.tokens.end());
  }
  const int64_t shift = raw - aligned;
  for (Copy& copy : out.copies) copy.src_row = std::max<int64_t>(0, copy.src_row + shift);
  if (out.window) out.window->start = std::max<int64_t>(0, out.window->start + shift);
}

void apply_sglang_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) {
  switch (f) {
    case Fault::off_by_one_copy:
      for (Copy& copy : out.copies) copy.rows += 1;
      return;
    case Fault::window_request_bucket: return window_request_bucket(call, out);
    case Fault::no_attn_tp_align: return no_attn_tp_align(call, out);
    case Fault::no_attn_tp_gather:
      // call_under_fault handed capture the slice; the copies read it, not a gather.
      for (Copy& copy : out.copies) copy.from_tp_gather = false;
      return;
    case Fault::tbo_row0:
      // sglang-fixed writes TBO child k at its rows' place in the batch (call_rows[k][r].lo).
      if (call.call_count > 1)
        for (Copy& copy : out.copies)
          copy.dst_row -= call.sglang->call_rows[static_cast<size_t>(call.call_index)][static_cast<size_t>(call.dp_rank)].lo;
      for (Copy& copy : out.copies) copy.dst_row = std::max<int64_t>(0, copy.dst_row);
      return;
    default: return;  // tp-major-order is the gather's (the pipeline's, or faulty_policy's emulation)
  }
}

}  // namespace

std::span<const Fault> all_faults() { return kTable; }

std::vector<Fault> faults_for(Engine engine) {
  std::vector<Fault> out;
  for (Fault f : all_faults())
    if (fault_applies(f, engine)) out.push_back(f);
  return out;
}

bool fault_applies(Fault f, Engine engine) {
  return (info(f).engines & (engine == Engine::sglang ? kSglang : kVllm)) != 0;
}

CaptureCall call_under_fault(Fault f, CaptureCall call) {
  if (f == Fault::no_attn_tp_gather && call.sglang && call.sglang->capture == CaptureLayout::deepep_gather)
    call.rows_written = call.rows;
  return call;
}

SglangGatherSlices sglang_tp_major_slices(Fault f, const CaptureCall& call) {
  if (f != Fault::tp_major_order || !call.sglang || call.tp_size < 2) return {};
  const sglang::ForwardLayout& lay = *call.sglang;
  if (lay.capture != CaptureLayout::dp_max_len && lay.capture != CaptureLayout::dp_graph) return {};
  const int64_t m = lay.call_rows[static_cast<size_t>(call.call_index)].front().size();
  if (m == 0 || m % call.tp_size != 0) return {};
  return {true, m / call.tp_size};
}

std::string_view to_string(Fault f) { return info(f).name; }

std::string_view to_string(FaultLayer layer) {
  switch (layer) {
    case FaultLayer::allocation: return "allocation";
    case FaultLayer::check: return "check";
    case FaultLayer::decision: return "decision";
    case FaultLayer::gather: return "gather";
  }
  return "?";
}

std::string_view fault_class(Fault f) { return info(f).bug_class; }

std::string_view fault_description(Fault f) { return info(f).description; }

FaultLayer fault_layer(Fault f) { return info(f).layer; }

Result<Fault> parse_fault(std::string_view name) {
  std::string names;
  for (Fault f : all_faults()) {
    if (to_string(f) == name) return f;
    names += (names.empty() ? "" : ", ") + std::string(to_string(f));
  }
  return Error{"fault: \"" + std::string(name) + "\" is not one of " + names};
}

bool sp_sharded_call(const CaptureCall& call) {
  const auto* md = call.metadata;
  return md && md->local_sizes && call.tp_size > 1 &&
         md->local_sizes->size() == static_cast<size_t>(call.dp_size) * static_cast<size_t>(call.tp_size);
}

bool is_sp_branch(const CaptureDecision& d) {
  return d.branch == branch::gathered_shards || d.branch == branch::sp_allgather;
}

void apply_allocation_fault(Fault f, const Case& c, Allocation& a) {
  // narrow-int16 narrows the replay ids; without a replay buffer there are none to narrow.
  if (!c.monolithic) return;
  if (f == Fault::replay_per_rank) a.replay_rows = c.max_num_tokens;
  if (f == Fault::replay_dp_under_ep) a.replay_rows = c.max_num_tokens * c.topology.dp;
  if (f == Fault::narrow_int16) a.replay_bits = 16;
}

void apply_decision_fault(Fault f, const CaptureCall& call, CaptureDecision& out) {
  if (out.rejected) return;
  const Engine engine = call.sglang ? Engine::sglang : Engine::vllm;
  if (!fault_applies(f, engine)) return;
  if (call.sglang) return apply_sglang_decision_fault(f, call, out);
  switch (f) {
    case Fault::unpadded_offset: return unpadded_offset(call, out);
    case Fault::no_trim: return no_trim(call, out);
    case Fault::last_shard_pad: return last_shard_pad(call, out);
    case Fault::off_by_one_copy:
      // One off-by-one in the engine's copy loop: every copy it makes is one row long.
      for (Copy& copy : out.copies) copy.rows += 1;
      return;
    case Fault::chunk_row0:
      // A copy that already starts before the chunk's offset (vllm-50874 writes every chunk at
      // row 0) stays at row 0.
      if (call.chunk_size > 0)
        for (Copy& copy : out.copies) copy.dst_row = std::max<int64_t>(0, copy.dst_row - call.row_offset);
      return;
    default: return;  // a fault of another layer
  }
}

}  // namespace r3
