// Implementations under test, by name. Each entry builds one implementation from its name
// (and, for prefixed entries such as "external:COMMAND", the text after the prefix), the fault
// to inject (implementation_name.hpp: IMPL+FAULT) and the options a command line may set.
// Each engine's policy models come from its model (EngineModel::policies()); adding another
// kind of implementation is one line in registry.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/implementations/implementation_name.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"
#include "reference/profile.hpp"

namespace r3 {

// Options an implementation may take; each entry rejects options it has no use for.
struct ImplementationOptions {
  std::string backend;  // gpu: which all-gather backend runs ("" = its default)
  std::string fault;    // --fault: a fault to inject, for a name without one ("" = none)
  std::string selection;  // gpu: host-decision | device-offsets ("" = its default)
  std::chrono::milliseconds adapter_timeout{5000};  // external: how long one reply may take
  std::chrono::milliseconds adapter_startup_timeout{30000};  // external: how long the hello may take
  std::string adapter_log;                          // external: append the adapter's stderr here ("" = ours)
  const std::atomic<bool>* stop = nullptr;          // external: set by a signal, ends waits (ExternalOptions)
};

struct RegisteredImplementation {
  std::string_view name;     // exact name, or a prefix ending in ':' that takes an argument
  std::string_view summary;  // one line for --help and error messages
  // Builds it; `argument` is the text after a prefix entry's ':' (empty otherwise). An entry
  // that cannot carry `fault` (anything but Fault::none) says so.
  std::function<Result<std::unique_ptr<Implementation>>(std::string_view argument, Fault fault,
                                                         const ImplementationOptions&)>
      make;
  std::string_view argument = "COMMAND";  // a prefix entry's argument, as --help and the README name it
};

const std::vector<RegisteredImplementation>& registered_implementations();

// "vllm-50874", "r3-fixed+no-trim", "gpu+no-trim", "external:python3 adapter.py", ... (IMPL or
// IMPL+FAULT, implementation_name.hpp). Unknown names list the known ones; options.fault is
// the fault for a name without one (naming two is an error).
Result<std::unique_ptr<Implementation>> make_implementation(std::string_view spec, const ImplementationOptions& options);
Result<std::unique_ptr<Implementation>> make_implementation(const ImplementationName& name,
                                                            const ImplementationOptions& options);

// What `r3fuzz run` and `r3fuzz replay` test when no --impl is given: the released versions of
// the profile's engine (EngineModel::released_policies: vllm-50874, vllm-pre-50874; sglang,
// sglang-miles), every engine's under any, in registry order.
std::vector<std::string> default_implementation_names(Profile profile = kDefaultProfile);

// "vllm-50874, vllm-pre-50874, r3-fixed, external:COMMAND, gpu, gpu:POLICY".
std::string known_implementation_names();

// True when building `spec` could start a program: any name containing "external:" (under a
// prefix such as gpu:, or with a +FAULT suffix, too). Files are data, never commands
// (docs/SECURITY.md): replay, shrink and the fuzz targets refuse such a name when it comes from
// a file's "expect.impl" rather than from the command line. Deliberately broad: a name that only
// looks external is refused, never run.
bool names_external_command(std::string_view spec);

// The message for a refused file-named external implementation (the caller adds the file).
std::string external_from_file_refusal(std::string_view spec);

}  // namespace r3
