// vllm-ascend's profiles (../shared/spec/ascend-contract.md section 5): which valid Ascend cases
// the plugin runs. Each rule names the code it comes from (main 182b75ea, releases/v0.26.0rc).
#pragma once

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3::ascend {

// The engine's profiles, in registry order (the first is the default).
//  main: main 182b75ea, V1 and MRv2, upstream SP; an MRv2 eager step under SP keeps raw counts
//        (#13946 deleted the wrapper that rounded them; whether upstream MRv2 rounds is open).
//  aligned: the same, reading upstream MRv2 as rounding SP counts to a multiple of T.
//  v026: releases/v0.26.0rc: V1 only (no #13975), SP never on (no #13946).
enum class Variant { main, aligned, v026 };

Status check_profile(const Case& c, Variant version);
// The smallest edits that bring a valid case inside `version`.
Case fit_to_profile(Case c, Variant version);

}  // namespace r3::ascend
