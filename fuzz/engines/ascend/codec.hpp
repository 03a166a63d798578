// What vllm-ascend's codec part reads that its deployments read too: the "ascend" object of a
// case (chip, comm, runner, graph, lora, fused_mc2, mega_moe, mc2_tokens), errors naming the key.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "reference/engines/ascend/fields.hpp"
#include "reference/error.hpp"

namespace r3::ascend {

Result<Fields> read_ascend_fields(const nlohmann::json& v);

}  // namespace r3::ascend
