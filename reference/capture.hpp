// The seam between the harness and an implementation under test: what one rank's capture()
// sees in one call, and what it decides. Policy models, the GPU pipeline and external
// adapters all answer in these terms.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reference/layout.hpp"

namespace r3 {

struct BufferShape {
  int64_t rows = 0;  // M
  int layers = 0;    // L
  int top_k = 0;     // K
};

// Everything vLLM's capture() can see on one rank in one call, plus what an engine could
// pass a fixed capture (the call's row offset in the step and the DP chunk size).
struct CaptureCall {
  int dp_rank = 0;
  int tp_rank = 0;
  int dp_size = 1;
  int tp_size = 1;
  int64_t rows = 0;                     // n: rows of the routing tensor capture() receives
  const DpMetadata* metadata = nullptr;  // null: no DP metadata
  int layer = 0;
  BufferShape capture_buffer;
  int call_index = 0;
  int call_count = 1;
  int64_t row_offset = 0;  // micro-batch start or chunk start (0 on single-call steps)
  int64_t chunk_size = 0;  // DP chunk size, 0 when the step is not chunked
  // The step's engine, and what its own derivation added to the step (Step::engine_step; null
  // when it added nothing). SGLang's capture writes the whole tensor at row 0; the window its
  // policy picks runs after the last call.
  Engine engine;
  const EngineData* engine_step = nullptr;
  int64_t rows_written = 0;  // with engine_step: rows this call writes (SGLang: the DeepEP gather of the tensor, else the tensor)
};

// SGLang's forward-end window (state_capturer/routed_experts.py, _get_local_slice): buffer rows
// [start, start + rows) of this DP rank, as the policy computed them.
struct Window {
  int64_t start = 0;
  int64_t rows = 0;
  bool per_call = false;  // this call's own window (tbo-offsets), read right after it
  bool operator==(const Window&) const = default;
};

// Copies rows [src_row, src_row + rows) of the received tensor (or of the TP all-gather of
// the group's received tensors) into capture-buffer rows [dst_row, dst_row + rows) at the layer.
struct Copy {
  int64_t dst_row = 0;
  int64_t src_row = 0;
  int64_t rows = 0;
  bool from_tp_gather = false;
  bool operator==(const Copy&) const = default;
};

namespace branch {
inline constexpr std::string_view single = "single";
inline constexpr std::string_view naive_total = "naive_total";
inline constexpr std::string_view local = "local";
inline constexpr std::string_view gathered_shards = "gathered_shards";
inline constexpr std::string_view sp_allgather = "sp_allgather";
inline constexpr std::string_view skip = "skip";  // r3-fixed: a finished rank's placeholder chunk
inline constexpr std::string_view error = "error";
}  // namespace branch

struct CaptureDecision {
  std::string_view branch = branch::error;
  bool rejected = false;
  std::string error;  // the message raised, when rejected (empty when the caller wants no words)
  std::vector<Copy> copies;
  // SGLang policies: the window the forward end reads. Each call's copies are then the rows
  // of that call's write the window publishes (buffer row start + j lands in published row j),
  // so applying the calls in order gives what the window reads after the last one.
  std::optional<Window> window;
  // Set by the caller, kept by clear(): false when it decides for many ranks and reads no
  // message (the symbolic judge words only the reported rank, deciding it again). Building
  // every rejecting rank's message cost more than the judging.
  bool wants_words = true;

  void clear() {
    branch = branch::error;
    rejected = false;
    error.clear();
    copies.clear();
    window.reset();
  }
  void reject(std::string message) {
    mark_rejected();
    if (wants_words) error = std::move(message);
  }
  // The same with the message built by `words()`, called only when the caller wants words.
  template <std::invocable Words>
  void reject(Words&& words) {
    mark_rejected();
    if (wants_words) error = words();
  }

 private:
  void mark_rejected() {
    branch = branch::error;
    rejected = true;
    error.clear();
    copies.clear();
  }
};

}  // namespace r3
