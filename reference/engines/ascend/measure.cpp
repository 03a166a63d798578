#include "reference/engines/ascend/measure.hpp"

#include "reference/case_measure.hpp"
#include "reference/engines/ascend/layout.hpp"
#include "reference/engines/ascend/validate.hpp"

namespace r3::ascend {
namespace {

std::string comm_text(const std::optional<Comm>& comm) { return comm ? std::string(to_string(*comm)) : "derived"; }
std::string flag(bool b) { return b ? "true" : "false"; }

}  // namespace

std::string capture_layout_text(const Case& c) {
  if (!validate(c).ok()) return {};  // the comm type reads the counts of a valid case
  return std::string(to_string(comm_of(c))) + (c.topology.sp ? "+sp" : "");
}

std::string summarize(const Case& c) {
  if (!fields_of(c)) return summarize_base(c);
  const Fields& f = *fields_of(c);
  return summarize_base(c) + ", " + std::string(to_string(f.chip)) + " " + capture_layout_text(c) + ", runner " +
         std::string(to_string(f.runner)) + ", graph " + std::string(to_string(f.graph));
}

int own_non_default_fields(const Fields& f) {
  const Fields d;
  return (f.chip != d.chip) + (f.comm != d.comm) + (f.runner != d.runner) + (f.graph != d.graph) + (f.lora != d.lora) +
         (f.fused_mc2 != d.fused_mc2) + (f.mega_moe != d.mega_moe) + (f.mc2_tokens != d.mc2_tokens);
}

void describe_own_changes(const Fields& a, const Fields& b, const ChangeItem& item) {
  auto change = [&](const char* name, const std::string& x, const std::string& y) {
    if (x != y) item(name, x, y);
  };
  change("ascend.chip", std::string(to_string(a.chip)), std::string(to_string(b.chip)));
  change("ascend.comm", comm_text(a.comm), comm_text(b.comm));
  change("ascend.runner", std::string(to_string(a.runner)), std::string(to_string(b.runner)));
  change("ascend.graph", std::string(to_string(a.graph)), std::string(to_string(b.graph)));
  change("ascend.lora", flag(a.lora), flag(b.lora));
  change("ascend.fused_mc2", flag(a.fused_mc2), flag(b.fused_mc2));
  change("ascend.mega_moe", flag(a.mega_moe), flag(b.mega_moe));
  change("ascend.mc2_tokens", std::to_string(a.mc2_tokens), std::to_string(b.mc2_tokens));
}

}  // namespace r3::ascend
