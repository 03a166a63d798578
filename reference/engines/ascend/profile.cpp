#include "reference/engines/ascend/profile.hpp"

#include <algorithm>
#include <numeric>

#include "reference/engines/ascend/comm.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/ascend/layout.hpp"

namespace r3::ascend {
namespace {

int64_t most(const std::vector<int64_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

// Upstream use_sequence_parallel_moe (vllm-ascend utils.enable_sp at main, #13946 92616f3a64):
// EP, T > 1, D > 1 with the default all2all backend. Before #13946 (v0.26) platform.py forced
// flashinfer_all2allv, which keeps upstream SP off.
bool sp_runs(const Case& c, Variant version) {
  return version != Variant::v026 && c.topology.ep && c.topology.tp > 1 && c.topology.dp > 1;
}

// model_runner_v1.py, _determine_batch_execution_and_padding / _sync_metadata_across_dp: every
// rank is padded to the max when SP is on (or its graph mode is not NONE); MRv2 (upstream
// dispatch_cg_and_sync_dp) keeps raw counts in an eager step.
PaddingMode eager_padding(const Case& c, const Fields& f) {
  return f.runner == Runner::v1 && c.topology.sp ? PaddingMode::dp_max : PaddingMode::none;
}

Status check_graph(const Case& c, const Fields& f) {
  const std::string mode(to_string(f.graph));
  if (f.graph == Graph::eager) {
    const PaddingMode want = eager_padding(c, f);
    if (c.padding.mode != want) {
      return Error{"padding: an eager step on runner " + std::string(to_string(f.runner)) + (c.topology.sp ? " with SP" : " without SP") +
                   " is padded " + std::string(to_string(want)) + ", the case has " + std::string(to_string(c.padding.mode)) +
                   " (model_runner_v1.py, _determine_batch_execution_and_padding; MRv2: dispatch_cg_and_sync_dp)"};
    }
    return ok_status();
  }
  if (c.padding.mode != PaddingMode::cudagraph) {
    return Error{"padding: a " + mode + " graph step runs at one capture size on every rank (padding cudagraph), the case has " +
                 std::string(to_string(c.padding.mode))};
  }
  const std::vector<int64_t>& sizes = c.padding.cudagraph_sizes;
  if (sizes.back() > c.max_num_tokens) {
    return Error{"padding.cudagraph: size " + std::to_string(sizes.back()) + " is above max_num_tokens " +
                 std::to_string(c.max_num_tokens) + " (upstream VllmConfig._set_cudagraph_sizes clamps them)"};
  }
  if (c.topology.sp) {
    for (int64_t s : sizes)
      if (s % c.topology.tp != 0) {
        return Error{"padding.cudagraph: size " + std::to_string(s) + " is not a multiple of tp " + std::to_string(c.topology.tp) +
                     " (under SP capture sizes are TP-aligned: platform.py, _setup_compile_backend)"};
      }
  }
  std::vector<int64_t> real = c.tokens;
  for (int64_t& x : real) x = std::max<int64_t>(x, c.idle_dummy ? 1 : 0);
  if (most(real) > sizes.back()) {
    return Error{"graph: " + std::to_string(most(real)) + " tokens are above the largest capture size " + std::to_string(sizes.back()) +
                 ", so the step runs eager (graph eager)"};
  }
  return ok_status();
}

}  // namespace

Status check_profile(const Case& c, Variant version) {
  const Fields& f = *fields_of(c);
  const int D = c.topology.dp, T = c.topology.tp;
  if (sum(c.tokens) == 0) return Error{"tokens: every rank is idle; no step runs then"};
  if (D > 1 && !c.idle_dummy) {
    return Error{"idle_dummy: must be true with dp > 1 (an idle DP rank runs a dummy batch: worker/worker.py, "
                 "NPUWorker.execute_dummy_batch)"};
  }
  if (c.topology.sp != sp_runs(c, version)) {
    return Error{std::string("topology.sp: ") + (sp_runs(c, version) ? "upstream SP is on" : "SP is off") +
                 (version == Variant::v026 ? " in v0.26 (platform.py forces flashinfer_all2allv, before #13946)"
                                           : " exactly when ep, tp > 1 and dp > 1 (utils.enable_sp -> use_sequence_parallel_moe, #13946)")};
  }
  if (version == Variant::v026 && f.runner != Runner::v1) {
    return Error{"ascend.runner: releases/v0.26.0rc has no MRv2 runner (#13975 landed on main after the branch)"};
  }
  R3_TRY_STATUS(check_graph(c, f));
  if (version == Variant::aligned && c.topology.sp && f.runner == Runner::mrv2 && f.graph == Graph::eager) {
    for (size_t d = 0; d < c.tokens.size(); ++d) {
      const int64_t x = std::max<int64_t>(c.tokens[d], c.idle_dummy ? 1 : 0);
      if (x % T != 0) {
        return Error{"tokens[" + std::to_string(d) + "]: " + std::to_string(x) + " is not a multiple of tp " + std::to_string(T) +
                     " (profile ascend-mrv2-rounded reads upstream MRv2 as rounding SP counts to TP)"};
      }
    }
  }
  const std::vector<int64_t> n = derive_counts(c);
  if (most(n) > c.max_num_tokens) {
    return Error{"tokens: a rank runs " + std::to_string(most(n)) + " tokens, above max_num_tokens " + std::to_string(c.max_num_tokens) +
                 " (the scheduler's limit; SP rounding above it is not modelled)"};
  }
  const Comm derived = derive_comm(c, f, most(n));
  if (f.comm && *f.comm != derived) {
    return Error{"ascend.comm: the case names " + std::string(to_string(*f.comm)) + ", select_moe_comm_method picks " +
                 std::string(to_string(derived)) + " (ascend_forward_context.py)"};
  }
  return ok_status();
}

Case fit_to_profile(Case c, Variant version) {
  if (!fields_of(c) || c.tokens.empty()) return c;  // not an Ascend case: nothing to fit
  Fields& f = *fields_of(c);
  const int D = c.topology.dp, T = c.topology.tp;
  if (D > 1) c.idle_dummy = true;
  if (sum(c.tokens) == 0) c.tokens[0] = 1;
  c.topology.sp = sp_runs(c, version);
  if (version == Variant::v026) f.runner = Runner::v1;
  if (c.max_num_tokens < T) c.max_num_tokens = T;
  // Keep every count within M after SP rounding.
  const int64_t cap = c.topology.sp ? c.max_num_tokens / T * T : c.max_num_tokens;
  for (int64_t& x : c.tokens) x = std::min(x, cap);
  if (f.graph != Graph::eager) {
    std::vector<int64_t> sizes;
    if (c.padding.mode == PaddingMode::cudagraph)
      for (int64_t s : c.padding.cudagraph_sizes) {
        const int64_t aligned = c.topology.sp ? T * ceil_div(s, T) : s;
        if (aligned <= c.max_num_tokens && (sizes.empty() || aligned > sizes.back())) sizes.push_back(aligned);
      }
    int64_t real = 0;
    for (int64_t x : c.tokens) real = std::max<int64_t>(real, std::max<int64_t>(x, c.idle_dummy ? 1 : 0));
    if (sizes.empty() || real > sizes.back()) {
      f.graph = Graph::eager;
    } else {
      c.padding.mode = PaddingMode::cudagraph;
      c.padding.cudagraph_sizes = sizes;
    }
  }
  if (f.graph == Graph::eager) {
    c.padding.mode = eager_padding(c, f);
    c.padding.cudagraph_sizes.clear();
  }
  if (version == Variant::aligned && c.topology.sp && f.runner == Runner::mrv2 && f.graph == Graph::eager)
    for (int64_t& x : c.tokens) x = std::min(cap, T * ceil_div(std::max<int64_t>(x, 1), T));
  if (f.comm && *f.comm != derive_comm(c, f, most(derive_counts(c)))) f.comm.reset();
  return c;
}

}  // namespace r3::ascend
