// Layout derivation (docs/layout-contract.md sections 1 to 5 and 9): from a case to the step every rank runs,
// as a sequence of capture calls, each with its DP metadata and the tensor each (d, t) receives.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/case.hpp"
#include "reference/engine_data.hpp"
#include "reference/error.hpp"
#include "reference/rows.hpp"

namespace r3 {

// DP metadata as capture() sees it during one call.
struct DpMetadata {
  std::vector<int64_t> num_tokens_across_dp;
  std::optional<std::vector<int64_t>> local_sizes;  // nullopt: unset

  // Prefix sums, the sums every capture decision takes. A policy runs once per rank, so
  // summing from scratch would cost O(D*T) per rank and O((D*T)^2) per case; index() makes
  // each sum O(1). derive_step() indexes every call; call index() again after any change.
  void index();
  int64_t tokens_before(size_t dp) const;        // sum of num_tokens_across_dp[0, dp)
  int64_t total_tokens() const { return tokens_before(num_tokens_across_dp.size()); }
  int64_t local_sizes_before(size_t i) const;    // sum of local_sizes[0, i); 0 when unset
  int64_t gathered_rows() const { return local_sizes ? local_sizes_before(local_sizes->size()) : 0; }

  std::vector<int64_t> token_prefix = {};  // filled by index()
  std::vector<int64_t> local_prefix = {};
};

// One contribution to the all-gatherv: group rank `group_rank` (d*T+t with SP, d without).
struct Segment {
  int dp = 0;
  int tp = 0;  // 0 when SP is off (the DP group has one member per DP rank)
  int group_rank = 0;
  int64_t offset = 0;        // first row in the gathered tensor
  int64_t rows = 0;          // local_sizes[group_rank]
  int64_t token_rows = 0;    // rows holding tokens of rank dp
  int64_t padding_rows = 0;  // SP tail padding
};

// What one (d, t) receives in one call: rows `rows` of tensor `received` (the whole tensor but
// on an SP shard or an attn-TP slice, which are rows of their DP rank's tensor).
struct RankView {
  int dp = 0;
  int tp = 0;
  int received = 0;      // index into Call::tensors
  RowRange rows;         // the rows of tensors[received] capture() is given
  int tp_gathered = -1;  // index into Call::tensors: the TP all-gather of the group's shards (sp_shard, DeepEP)
};

// How the ranks of a call receive their tensors. A formula of (d, t): a call holds its tensors
// once per DP rank (or once), never once per (d, t), so a wide step costs a tensor per DP rank
// and its TP ranks cost nothing until a consumer asks for a rank's rows.
enum class Receipt : uint8_t {
  per_dp,    // (d, t) receives tensor d whole (its DP rank's batch)
  shared,    // every rank receives tensor 0 whole (the gathered batch)
  tp_slice,  // (d, t) receives slice t of T equal slices of tensor d (an SP shard, an attn-TP slice)
  tp_split,  // (d, t) receives part t of torch.tensor_split(tensor d, T): the first rows % T parts
             // one row longer (an uneven TP split, e.g. vllm-ascend's ALLTOALL prepare)
};

struct Call {
  int index = 0;
  std::optional<DpMetadata> metadata;  // nullopt: no DP metadata (D = 1)
  // Per DP rank: token indices this call carries (before the SP split). For a DP chunk: rows
  // [lo, hi) of each TP rank's share (after the SP split when SP is on), empty once the rank finished.
  std::vector<RowRange> tokens;
  int64_t row_offset = 0;              // first step row of this call (micro-batch start, chunk start)
  int64_t chunk_size = 0;              // C when DP chunking, else 0
  std::vector<Segment> segments;       // the gathered layout of this call, when there is DP metadata
  int64_t gathered_rows = 0;           // sum of local_sizes (0 without DP metadata)
  int64_t kernel_rows = 0;             // rows a monolithic kernel processes in this call
  std::vector<RowTensor> tensors;
  int dp_size = 1;
  int tp_size = 1;
  Receipt receipt = Receipt::per_dp;
  bool tp_gather = false;  // tp_slice: tensor d is also what the TP all-gather of its slices returns

  size_t rank_count() const { return static_cast<size_t>(dp_size) * static_cast<size_t>(tp_size); }
  // Inline: the symbolic judge asks for a view several times a rank.
  RankView view(int dp, int tp) const {
    const int64_t rows = tensors[receipt == Receipt::shared ? 0 : static_cast<size_t>(dp)].rows();
    switch (receipt) {
      case Receipt::per_dp: return {dp, tp, dp, {0, rows}, -1};
      case Receipt::shared: return {dp, tp, 0, {0, rows}, -1};
      case Receipt::tp_slice: break;
      case Receipt::tp_split: {
        const int64_t q = rows / tp_size, longer = rows % tp_size;
        const int64_t lo = tp * q + std::min<int64_t>(tp, longer);
        return {dp, tp, dp, {lo, lo + q + (tp < longer ? 1 : 0)}, tp_gather ? dp : -1};
      }
    }
    const int64_t slice = rows / tp_size;
    return {dp, tp, dp, {tp * slice, (tp + 1) * slice}, tp_gather ? dp : -1};
  }
  // Whether the TP ranks of a DP rank receive different rows of one tensor (its slices or parts),
  // which the TP all-gather of those rows gives back whole.
  bool split_across_tp() const { return receipt == Receipt::tp_slice || receipt == Receipt::tp_split; }
  RankView view(size_t rank) const {  // rank d*T + t, DP-major
    const size_t T = static_cast<size_t>(tp_size);
    return view(static_cast<int>(rank / T), static_cast<int>(rank % T));
  }
  // The rows (d, t) receives, materialised (a slice of its tensor): for consumers that read
  // rows one by one (the concrete judge, an adapter request, the GPU plan, explain).
  RowTensor input_of(const RankView& view) const;
  // The same without a copy: the received tensor itself when (d, t) receives it whole, else its
  // slice, built in `scratch` (the symbolic judge reads a rank's rows case after case).
  const RowTensor& rows_of(const RankView& view, RowTensor& scratch) const;
};

struct Step {
  Engine engine;
  int dp = 1;
  int tp = 1;
  bool sp = false;
  Path path = Path::single;
  int layer = 0;
  int64_t max_num_tokens = 0;
  std::vector<int64_t> real_tokens;
  std::vector<int64_t> num_tokens_across_dp;  // n_d: the counts ranks run with (derived, never overridden)
  std::vector<int64_t> shard_rows;            // s_d = ceil(n_d / T) when SP is on, else empty
  std::optional<std::vector<int64_t>> local_sizes;  // whole-step local_sizes (nullopt when D = 1)
  int64_t gathered_rows = 0;
  int64_t capture_rows_needed = 0;            // max n_d
  std::optional<int64_t> replay_rows_needed;  // monolithic cases: most rows the kernel processes in one call
  std::vector<Call> calls;
  // Set when the case's metadata override disagrees with its layout: every implementation
  // must then reject the step. Holds the reason, naming the field.
  std::optional<std::string> rejection;
  // What an engine's own derivation adds to the fields above (SGLang's forward layout and
  // window inputs, reference/engines/sglang/forward_layout.hpp); empty for the base layout.
  // Capture calls point at it (CaptureCall::engine_step).
  EngineData engine_step;
};

int64_t ceil_div(int64_t a, int64_t b);

// Each derivation below also comes as *_into, which writes into a vector it reuses: a campaign
// derives a step per case, and allocating the step's vectors afresh each time cost more than
// filling them.

// docs/layout-contract.md section 1: the counts each rank runs the model with.
std::vector<int64_t> derive_num_tokens_across_dp(const Case& c);
void derive_num_tokens_across_dp_into(const Case& c, std::vector<int64_t>& n);

// docs/layout-contract.md section 2: local_sizes for counts n (SP repeats ceil(n_d/T) T times).
std::vector<int64_t> derive_local_sizes(const std::vector<int64_t>& n, int tp, bool sp);
void derive_local_sizes_into(const std::vector<int64_t>& n, int tp, bool sp, std::vector<int64_t>& sizes);

// docs/layout-contract.md section 4: the gathered segments for counts n.
std::vector<Segment> derive_segments(const std::vector<int64_t>& n, int tp, bool sp);
void derive_segments_into(const std::vector<int64_t>& n, int tp, bool sp, std::vector<Segment>& segments);

// The most rows one (d, t) holds before DP chunking (section 9.2): n_d, or ceil(n_d / T) with SP.
// DP chunking splits these rows; the chunk count of a step is ceil(this / C).
int64_t most_rows_to_chunk(const std::vector<int64_t>& n, int tp, bool sp);
int64_t most_rows_to_chunk(const Case& c);

// Everything above plus the calls, for the case's engine (EngineModel::derive_step_into).
// The case must be valid (validate() first); this checks it again.
Result<Step> derive_step(const Case& c);
// The same into `s`, whatever it held: a base-layout step reuses the storage of the step it held
// before (a campaign's worker derives every case into one). On an error `s` is left unspecified.
Status derive_step_into(Step& s, const Case& c);
// The layout of the case's own fields (docs/layout-contract.md sections 1 to 9), for an engine
// whose steps are laid out that way.
Status derive_base_step_into(Step& s, const Case& c);

}  // namespace r3
