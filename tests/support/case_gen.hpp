// A small RapidCheck generator of valid cases for the tests (the harness's seeded generator
// lives in fuzz/generate; it has no shrinking, RapidCheck shrinks these). Sizes stay small so
// properties explore many layouts.
#pragma once

#include <algorithm>
#include <set>

#include <rapidcheck.h>

#include "reference/case.hpp"
#include "reference/profile.hpp"

namespace r3::test {

struct CaseGenOptions {
  bool microbatches = false;  // allow U > 1 (docs/layout-contract.md 9.1)
  bool dp_chunk = false;      // allow DP chunking (docs/layout-contract.md 9.2)
  bool cudagraph = true;      // allow CUDA-graph padding (buckets may exceed M)
  bool extras = false;        // metadata overrides, note and expect (codec round trips)
  bool force_sp = false;      // only SP topologies (dp > 1, tp > 1, ep, sp)
  int min_dp = 1;
  int max_dp = 4;
  int max_tp = 4;
  int64_t max_rows = 16;      // M at most this
  // The profile every case lies in: drawn over the whole space, then fitted (fit_to_profile).
  Profile profile = Profile::any;
};

inline rc::Gen<Case> gen_valid_case(CaseGenOptions o = {}) {
  // Fixed size: RapidCheck scales integer ranges by size, and small sizes would give mostly dp 1.
  return rc::gen::resize(50, rc::gen::exec([o] {
    Case c;
    const int min_dp = o.force_sp ? std::max(2, o.min_dp) : o.min_dp;
    c.topology.dp = *rc::gen::inRange(min_dp, std::max(min_dp, o.max_dp) + 1);
    c.topology.tp = *rc::gen::inRange(o.force_sp ? 2 : 1, std::max(2, o.max_tp) + 1);
    c.topology.ep = o.force_sp || *rc::gen::arbitrary<bool>();
    const bool sp_allowed = c.topology.ep && c.topology.tp > 1 && c.topology.dp > 1;
    c.topology.sp = sp_allowed && (o.force_sp || *rc::gen::arbitrary<bool>());
    c.model.layers = *rc::gen::inRange(1, 5);
    c.model.experts = *rc::gen::inRange(1, 65);
    c.model.top_k = *rc::gen::inRange(1, std::min(8, c.model.experts) + 1);
    c.layer = *rc::gen::inRange(0, c.model.layers);
    c.max_num_tokens = *rc::gen::inRange<int64_t>(1, o.max_rows + 1);
    const int64_t M = c.max_num_tokens;
    c.tokens = *rc::gen::container<std::vector<int64_t>>(static_cast<size_t>(c.topology.dp),
                                                          rc::gen::inRange<int64_t>(0, M + 1));
    const int mode = *rc::gen::inRange(0, o.cudagraph ? 3 : 2);
    c.padding.mode = mode == 0 ? PaddingMode::none : mode == 1 ? PaddingMode::dp_max : PaddingMode::cudagraph;
    if (c.padding.mode == PaddingMode::cudagraph) {
      const auto sizes = *rc::gen::nonEmpty(rc::gen::container<std::set<int64_t>>(rc::gen::inRange<int64_t>(1, 2 * M + 2)));
      c.padding.cudagraph_sizes.assign(sizes.begin(), sizes.end());
    }
    if (c.topology.dp == 1) {
      c.path = Path::single;
    } else if (c.topology.sp) {
      c.path = *rc::gen::element(Path::gathered, Path::sp_shard);
    } else {
      c.path = *rc::gen::element(Path::gathered, Path::local);
    }
    c.monolithic = (c.path == Path::single || c.path == Path::gathered) && *rc::gen::arbitrary<bool>();
    if (o.microbatches && c.topology.dp > 1 && *rc::gen::arbitrary<bool>()) {
      c.padding = Padding{PaddingMode::dp_max, {}};
      c.microbatches = *rc::gen::inRange(1, 4);
    }
    if (o.dp_chunk && c.microbatches == 1 && (c.path == Path::local || c.path == Path::sp_shard) &&
        *rc::gen::arbitrary<bool>()) {
      c.dp_chunk = *rc::gen::inRange<int64_t>(1, 6);
    }
    if (o.extras && c.microbatches == 1 && !c.dp_chunk && *rc::gen::arbitrary<bool>()) {
      MetadataOverride m;
      if (*rc::gen::arbitrary<bool>()) {
        m.num_tokens_across_dp = *rc::gen::container<std::vector<int64_t>>(rc::gen::inRange<int64_t>(0, 20));
      }
      m.local_sizes_given = *rc::gen::arbitrary<bool>();
      if (m.local_sizes_given && *rc::gen::arbitrary<bool>()) {
        m.local_sizes = *rc::gen::container<std::vector<int64_t>>(rc::gen::inRange<int64_t>(0, 20));
      }
      c.metadata = m;
    }
    if (o.extras) {
      c.note = *rc::gen::element<std::string>("", "from a production log", "quote \" and \\ and \xc3\xa9");
      if (*rc::gen::arbitrary<bool>()) {
        c.expect = Expectation{*rc::gen::element<std::string>("vllm-50874", "vllm-pre-50874"),
                               *rc::gen::element(Verdict::pass, Verdict::wrong_rows, Verdict::capacity),
                               *rc::gen::element(Severity::none, Severity::failure, Severity::latent)};
      }
    }
    if (c.topology.dp > 1 && !c.metadata) c.idle_dummy = *rc::gen::arbitrary<bool>();
    return fit_to_profile(std::move(c), o.profile);
  }));
}

}  // namespace r3::test
