// vllm-ascend's explain part (fuzz/cli/engine_explain.hpp): the generic layout report of the step
// (its calls are laid out in base terms), preceded by what places the rows: the comm type and why
// select_moe_comm_method picks it, SP, and the rows each TP rank holds after prepare (spec 2.4).
#include <optional>
#include <string>

#include "fuzz/cli/engine_explain.hpp"
#include "fuzz/cli/explain.hpp"
#include "fuzz/engines/ascend/parts.hpp"
#include "reference/engines/ascend/comm.hpp"
#include "reference/engines/ascend/fields.hpp"
#include "reference/engines/ascend/layout.hpp"

namespace r3::ascend {
namespace {

// Why the step has its comm type, in the selector's order.
std::string why(const Case& c, const Fields& f, Comm comm) {
  const int64_t ep = static_cast<int64_t>(c.topology.dp) * c.topology.tp;
  if (!c.topology.ep) return "EP off";
  if (ep == 1) return "an EP group of 1";
  if (f.lora) return "LoRA with EP";
  std::string capacity = "MC2 capacity " + std::to_string(mc2_capacity(c, f));
  switch (comm) {
    case Comm::fused_mc2: return "fused MC2 with EP " + std::to_string(ep);
    case Comm::mc2: return std::string(to_string(f.chip)) + ", the step's largest count within the " + capacity;
    case Comm::alltoall: return std::string(to_string(f.chip)) + ", the step's largest count above the " + capacity;
    case Comm::allgather: return std::string(to_string(f.chip)) + ": EP " + std::to_string(ep);
  }
  return {};
}

class AscendExplain final : public EngineExplain {
 public:
  nlohmann::ordered_json json(const Explanation& e) const override {
    nlohmann::ordered_json doc = layout_explanation_json(e);
    const StepFields* sf = step_fields_of(e.step);
    if (!sf) return doc;
    nlohmann::ordered_json ascend = nlohmann::ordered_json::object();
    ascend["comm"] = std::string(to_string(sf->comm));
    ascend["sp"] = sf->sp;
    ascend["why"] = why(e.c, *fields_of(e.c), sf->comm);
    doc["ascend"] = std::move(ascend);
    return doc;
  }
  std::string text(const Explanation& e) const override {
    const StepFields* sf = step_fields_of(e.step);
    if (!sf) return layout_explanation_text(e);
    const Fields& f = *fields_of(e.c);
    std::string out = "vllm-ascend: comm type " + std::string(to_string(sf->comm)) + " (" + why(e.c, f, sf->comm) + "), SP " +
                      (sf->sp ? "on" : "off") + ", runner " + std::string(to_string(f.runner)) + ", graph " +
                      std::string(to_string(f.graph)) + "\n";
    out += "rows each TP rank holds after prepare (dp: tp0 tp1 ...):";
    const int D = e.step.dp, T = e.step.tp;
    for (int d = 0; d < D && d < 8; ++d) {
      out += "\n  dp " + std::to_string(d) + ":";
      for (int t = 0; t < T && t < 8; ++t) out += " " + std::to_string(rows_held(sf->comm, sf->sp, e.step.num_tokens_across_dp, d, t, T));
      if (T > 8) out += " ...";
    }
    if (D > 8) out += "\n  ...";
    return out + "\n" + layout_explanation_text(e);
  }
  std::optional<int64_t> written_runs(const Step&) const override { return std::nullopt; }
  int64_t published_copies(const Explanation&) const override { return 0; }
};

}  // namespace

const EngineExplain& explain_part() {
  static const AscendExplain part;
  return part;
}

}  // namespace r3::ascend
