#include "fuzz/implementations/implementation_name.hpp"

namespace r3 {
namespace {

constexpr std::string_view kExternalPrefix = "external:";
constexpr std::string_view kRetiredFaultPrefix = "fault:";  // "gpu+fault:NAME", before one grammar

}  // namespace

std::string ImplementationName::text() const {
  return fault == Fault::none ? base : base + "+" + std::string(to_string(fault));
}

Result<ImplementationName> parse_implementation_name(std::string_view spec) {
  const auto error = [spec](const std::string& why) { return Error{"--impl " + std::string(spec) + ": " + why}; };
  if (spec.starts_with(kExternalPrefix)) return ImplementationName{std::string(spec), Fault::none};
  const size_t plus = spec.find('+');
  if (plus == std::string_view::npos) return ImplementationName{std::string(spec), Fault::none};
  const std::string_view base = spec.substr(0, plus);
  const std::string_view fault = spec.substr(plus + 1);
  if (base.empty()) return error("no implementation before the '+' (IMPL+FAULT)");
  if (fault.empty()) return error("no fault after the '+' (IMPL+FAULT)");
  if (fault.find('+') != std::string_view::npos) {
    return error("one fault at most, and \"" + std::string(fault) + "\" names more (IMPL+FAULT)");
  }
  if (fault.starts_with(kRetiredFaultPrefix)) {
    return error("\"+fault:NAME\" is no longer accepted; write " + std::string(base) + "+" +
                 std::string(fault.substr(kRetiredFaultPrefix.size())));
  }
  auto parsed = parse_fault(fault);
  if (!parsed) return error(parsed.error().message);
  return ImplementationName{std::string(base), *parsed};
}

Result<ImplementationName> with_fault_flag(ImplementationName name, std::string_view fault_flag) {
  if (fault_flag.empty()) return name;
  if (name.fault != Fault::none) {
    return Error{"--impl " + name.text() + ": names a fault already, and --fault gives " + std::string(fault_flag)};
  }
  auto fault = parse_fault(fault_flag);
  if (!fault) return Error{"--fault: " + fault.error().message};
  name.fault = *fault;
  return name;
}

}  // namespace r3
