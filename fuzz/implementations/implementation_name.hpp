// The one grammar of implementation names: IMPL or IMPL+FAULT, for every implementation
// ("r3-fixed+no-trim", "gpu+no-trim", "gpu:r3-fixed+chunk-row0"). IMPL is a registered name
// (registry.hpp), FAULT a name of reference/fault.hpp's table. An external:COMMAND name is
// the whole command: a program's command line may hold a '+', and external programs carry
// no fault. Faulted implementations report the same spelling as their name(), so findings
// and regression entries name them the way a command line does.
#pragma once

#include <string>
#include <string_view>

#include "reference/error.hpp"
#include "reference/fault.hpp"

namespace r3 {

struct ImplementationName {
  std::string base;           // the registered name: "r3-fixed", "gpu:r3-fixed", "external:python3 a.py"
  Fault fault = Fault::none;  // the fault injected into it
  std::string text() const;   // base, or base+fault
  bool operator==(const ImplementationName&) const = default;
};

// Errors, each starting with "--impl SPEC: ": nothing before or after the '+', a fault not
// in the table, more than one fault, and the retired "+fault:NAME" spelling.
Result<ImplementationName> parse_implementation_name(std::string_view spec);

// `name` with the fault a --fault flag gives ("" for none). Errors: the name has a fault
// already, or the flag's is not in the table.
Result<ImplementationName> with_fault_flag(ImplementationName name, std::string_view fault_flag);

}  // namespace r3
