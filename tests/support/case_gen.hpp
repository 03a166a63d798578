// The tests' generator of valid cases: the case domain (fuzz/generate/case_domain.hpp) drawn
// through RapidCheck (rc_source.hpp), so RapidCheck shrinks its choices and the tests see the
// same rules as every other producer. Sizes stay small so properties explore many layouts.
#pragma once

#include <optional>
#include <algorithm>
#include <string>

#include <rapidcheck.h>

#include "fuzz/generate/case_domain.hpp"
#include "reference/case.hpp"
#include "reference/engines/vllm/model.hpp"
#include "reference/profile.hpp"
#include "tests/support/rc_source.hpp"

namespace r3::test {

struct CaseGenOptions {
  bool microbatches = false;  // allow U > 1 (docs/layout-contract.md 9.1)
  bool dp_chunk = false;      // allow DP chunking (docs/layout-contract.md 9.2)
  bool cudagraph = true;      // allow CUDA-graph padding (buckets may exceed M)
  bool extras = false;        // metadata overrides (profile any), note and expect (codec round trips)
  bool force_sp = false;      // only SP topologies (dp > 1, tp > 1, ep, sp)
  int min_dp = 1;
  int max_dp = 4;
  int max_tp = 4;
  int64_t max_rows = 16;      // M at most this
  Profile profile = Profile::any();  // every case lies inside it
  // Under profile any, the engine of every case (the properties written for vLLM keep vLLM's
  // cases); nullopt: each case draws its engine.
  std::optional<Engine> engine = vllm::engine();
};

// The domain these options describe.
inline CaseDomain case_domain_of(const CaseGenOptions& o) {
  DomainBounds b;
  b.min_dp = o.min_dp;
  b.max_dp = std::max(o.min_dp, o.max_dp);
  b.max_tp = std::max(2, o.max_tp);
  b.max_ranks = b.max_dp * b.max_tp;
  b.max_tokens = o.max_rows;
  b.max_top_k = 8;
  b.max_experts = 64;
  b.max_microbatches = 3;
  b.cudagraph = o.cudagraph;
  b.microbatching = o.microbatches;
  b.dp_chunking = o.dp_chunk;
  b.metadata_overrides = o.extras;
  b.require_sp = o.force_sp;
  return {o.profile, b, o.engine};
}

inline rc::Gen<Case> gen_valid_case(CaseGenOptions o = {}) {
  // Fixed size: RapidCheck scales integer ranges by size, and small sizes would give mostly dp 1.
  return rc::gen::resize(50, rc::gen::exec([o] {
    RcSource source;
    Case c = draw(source, case_domain_of(o));
    if (o.extras) {  // no behaviour: the codecs must carry them
      c.note = *rc::gen::element<std::string>("", "from a production log", "quote \" and \\ and \xc3\xa9");
      if (*rc::gen::arbitrary<bool>()) {
        c.expect = Expectation{*rc::gen::element<std::string>("vllm-50874", "vllm-pre-50874"),
                               *rc::gen::element(Verdict::pass, Verdict::wrong_rows, Verdict::capacity),
                               *rc::gen::element(Severity::none, Severity::failure, Severity::latent)};
      }
    }
    return c;
  }));
}

}  // namespace r3::test
