// The Ascend part of a case (../shared/spec/ascend-contract.md): what vllm-ascend adds to a vLLM
// step, held in Case::engine_fields. The vLLM part (topology, model, tokens, padding, layer) is the
// base case's. Plain data: the comm type it derives is comm.hpp's, the rows layout.hpp's.
//
// Sources read: vllm-project/vllm-ascend main at 182b75ea84ff13ece27b57391331ef8935410aea and
// releases/v0.26.0rc at cf0baa38dfb2aef4faf6baaaa97beb4ac974ae35 (paths under vllm_ascend/).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"

namespace r3::ascend {

// The SoC (utils.py, AscendDeviceType), which picks the comm type's rule (comm.hpp).
enum class Chip : uint8_t { a2, a3, a5, p310 };
// ascend_forward_context.py, MoECommType (the enum's order).
enum class Comm : uint8_t { allgather, mc2, alltoall, fused_mc2 };
// worker/model_runner_v1.py (V1) or worker/v2/model_runner.py (MRv2, #13975).
enum class Runner : uint8_t { v1, mrv2 };
// The ACL graph mode of the step's runner: eager (NONE), PIECEWISE, FULL_DECODE_ONLY, or the
// npugraph_ex backend. A graph step runs at one capture size on every rank (padding.cudagraph).
enum class Graph : uint8_t { eager, piecewise, full_decode_only, npugraph_ex };

struct Fields {
  Chip chip = Chip::a3;
  // The comm type as the case names it, when it does; the profile then checks it is the one
  // select_moe_comm_method derives (comm.hpp). nullopt: derived.
  std::optional<Comm> comm;
  Runner runner = Runner::v1;
  Graph graph = Graph::eager;
  bool lora = false;       // a LoRA config is set (LoRA with EP forces ALLTOALL)
  bool fused_mc2 = false;  // ascend_config.enable_fused_mc2
  bool mega_moe = false;   // cann_ops_transformer is installed (ascend_config.py, _MEGA_MOE_SUPPORTED)
  // B of set_mc2_tokens_capacity (ascend_forward_context.py): max_num_batched_tokens with
  // enable_prefill_mc2, else the largest graph capture size, else max_num_reqs x the decode
  // query length. 0: derived as the largest capture size of padding.cudagraph, else M.
  int64_t mc2_tokens = 0;
  bool operator==(const Fields&) const = default;
};

// The engine's handle in the registry (reference/engines/registry.cpp).
Engine engine();

inline const Fields* fields_of(const Case& c) { return c.engine_fields.get<Fields>(); }
inline Fields* fields_of(Case& c) { return c.engine_fields.get<Fields>(); }

std::string_view to_string(Chip chip);
std::string_view to_string(Comm comm);
std::string_view to_string(Runner runner);
std::string_view to_string(Graph graph);
// The comm type's member name in ascend_forward_context.py's MoECommType ("MC2", "FUSED_MC2"):
// what the plugin's capture compares _EXTRA_CTX.moe_comm_type with.
std::string_view comm_type_member(Comm comm);
// Each error names the key ("ascend.chip") and lists the allowed values.
Result<Chip> parse_chip(std::string_view text);
Result<Comm> parse_comm(std::string_view text);
Result<Runner> parse_runner(std::string_view text);
Result<Graph> parse_graph(std::string_view text);

inline constexpr int kChipCount = 4, kCommCount = 4, kRunnerCount = 2, kGraphCount = 4;

}  // namespace r3::ascend
