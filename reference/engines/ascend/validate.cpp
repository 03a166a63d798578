#include "reference/engines/ascend/validate.hpp"

#include "reference/engines/ascend/fields.hpp"
#include "reference/validate.hpp"

namespace r3::ascend {

// The comm type says where capture sees the routing, so the base case's path, monolithic
// replay buffer, micro-batches, DP chunks and metadata overrides are not part of an Ascend case:
// vllm-ascend resets enable_dbo (platform.py) and never chunks (AscendMoERunner.use_dp_chunking).
Status validate(const Case& c) {
  const Fields* f = fields_of(c);
  if (!f) return Error{"ascend: an ascend case needs its fields (chip, runner, graph)"};
  if (c.path != Path::single) return Error{"path: an ascend case has no path (its comm type places the rows), got " + std::string(to_string(c.path))};
  if (c.monolithic) return Error{"monolithic: an ascend case has no monolithic replay buffer"};
  if (c.microbatches != 1) return Error{"microbatches: vllm-ascend never micro-batches (platform.py resets enable_dbo), got " + std::to_string(c.microbatches)};
  if (c.dp_chunk) return Error{"dp_chunk: vllm-ascend never chunks the DP batch (AscendMoERunner.use_dp_chunking is False)"};
  if (c.metadata) return Error{"metadata: an ascend case derives its DP metadata"};
  if (f->mc2_tokens < 0 || f->mc2_tokens > (int64_t{1} << 20))
    return Error{"ascend.mc2_tokens: " + std::to_string(f->mc2_tokens) + " is outside [0, 1048576] (0: derived)"};
  // The base rules tie the path to D (single means no DP metadata); an Ascend case keeps path
  // single and its DP metadata follows D, so the base rules see the path that matches D.
  Case base = c;
  if (c.topology.dp > 1) base.path = Path::gathered;
  return validate_base(base);
}

}  // namespace r3::ascend
