// Which valid SGLang cases each SGLang version runs (profiles sglang and sglang-miles,
// docs/layout-contract.md section 11.7). Each rule names the code it comes from.
#pragma once

#include "reference/case.hpp"
#include "reference/engines/sglang/forward.hpp"
#include "reference/error.hpp"

namespace r3::sglang {

// SGLang's profiles, in the order the engine registers them: sglang (upstream main, the
// default) and sglang-miles (the RL branch). Any other profile (any) reads as upstream.
bool is_miles(Profile profile);

// Why `c` is a forward `profile`'s version never runs; ok when it runs it.
Status check_profile(const Case& c, Profile profile);

// The smallest edits that bring `c` inside (prefill buckets dropped where the version disables
// the breakable graph, TBO dropped where it cannot run, one request or token for a forward in
// which every rank is idle). A valid case stays valid.
Case fit_to_profile(Case c, Profile profile);

// Whether the version of `profile` captures a breakable prefill graph for this configuration
// (server_args.py, _disable_breakable_cudagraph_if_incompatible). The case domain asks it
// before drawing prefill buckets.
bool prefill_graph_allowed(const Case& c, Profile profile);

// TBO with a2a none needs DP attention (server_args.py, _check_two_batch_overlap).
bool tbo_allowed(const Case& c);

}  // namespace r3::sglang
