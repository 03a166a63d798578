#include "fuzz/campaign/registry.hpp"

#include <optional>
#include <utility>

#if R3FUZZ_HAVE_GPU
#include "gpu/gpu_implementation.hpp"
#endif

#include "fuzz/adapter/external_implementation.hpp"
#include "fuzz/mutants/faulty_policy.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/policy.hpp"

namespace r3 {
namespace {

using Made = Result<std::unique_ptr<Implementation>>;

// A policy model takes no options: it has no backend, and its faults are other policies.
auto policy_entry(std::unique_ptr<CapturePolicy> (*make_policy)()) {
  return [make_policy](std::string_view, const ImplementationOptions& o) -> Made {
    auto policy = make_policy();
    const std::string name(policy->name());
    if (!o.backend.empty()) return Error{"--backend: " + name + " is a policy model and has no backend"};
    if (!o.fault.empty()) return Error{"--fault: " + name + " is a policy model and takes no fault"};
    if (!o.selection.empty()) return Error{"--selection: " + name + " is a policy model and has no device selection"};
    return std::unique_ptr<Implementation>(std::make_unique<PolicyImplementation>(std::move(policy)));
  };
}

// external:COMMAND starts the adapter and exchanges the hello now: a command that cannot
// start or speaks another protocol is a usage error, not a failure of every case.
Made make_external(std::string_view command, const ImplementationOptions& o) {
  if (!o.backend.empty()) return Error{"--backend: external:" + std::string(command) + " has no backend"};
  if (!o.fault.empty()) return Error{"--fault: external:" + std::string(command) + " takes no fault"};
  if (!o.selection.empty()) return Error{"--selection: external:" + std::string(command) + " has no device selection"};
  ExternalOptions options;
  options.command = std::string(command);
  options.timeout = o.adapter_timeout;
  options.stderr_log = o.adapter_log;
  options.stop = o.stop;
  auto impl = std::make_unique<ExternalImplementation>(std::move(options));
  if (Status s = impl->connect(); !s.ok()) return Error{"--impl external:" + std::string(command) + ": " + s.error().message};
  return std::unique_ptr<Implementation>(std::move(impl));
}

#if R3FUZZ_HAVE_GPU
// The GPU pipeline (gpu/): --backend host|virtual|nccl (default host), --selection
// host-decision|device-offsets, --fault NAME; "gpu:POLICY" takes POLICY's decisions.
Made make_gpu(std::string_view policy, const ImplementationOptions& o) {
  gpu::GpuOptions options;
  if (!policy.empty()) options.policy = std::string(policy);
  if (!o.selection.empty()) {
    auto selection = gpu::parse_selection(o.selection);
    if (!selection) return Error{"--selection: " + selection.error().message};
    options.selection = *selection;
  }
  if (!o.backend.empty()) {
    auto backend = gpu::parse_backend(o.backend);
    if (!backend) return Error{"--backend: " + backend.error().message};
    options.backend = *backend;
  }
  if (!o.fault.empty()) {
    auto fault = parse_fault(o.fault);
    if (!fault) return Error{"--fault: " + fault.error().message};
    options.fault = *fault;
  }
  R3_TRY(auto impl, gpu::make_gpu_implementation(options));
  return std::unique_ptr<Implementation>(std::move(impl));
}
#endif

bool is_prefix_entry(std::string_view name) { return !name.empty() && name.back() == ':'; }

// "<impl>+<fault>" and "<impl>+fault:<fault>", the names faulted implementations report (and so
// the names findings and regression entries carry), when the suffix is a fault of design.md's table.
std::optional<std::pair<std::string_view, Fault>> split_fault(std::string_view spec) {
  const size_t plus = spec.rfind('+');
  if (plus == std::string_view::npos) return std::nullopt;
  std::string_view name = spec.substr(plus + 1);
  if (name.starts_with("fault:")) name.remove_prefix(6);
  auto fault = parse_fault(name);
  if (!fault) return std::nullopt;
  return std::pair{spec.substr(0, plus), *fault};
}

}  // namespace

const std::vector<RegisteredImplementation>& registered_implementations() {
  static const std::vector<RegisteredImplementation> entries = {
      {"vllm-50874", "vLLM's capture policy after PR #50874 (model)", policy_entry(make_vllm_50874_policy)},
      {"vllm-pre-50874", "vLLM's capture policy before PR #50874 (model)", policy_entry(make_vllm_pre_50874_policy)},
      {"r3-fixed", "the capture policy this project proposes", policy_entry(make_r3_fixed_policy)},
      {"external:", "any program speaking the adapter protocol (docs/adapter-protocol.md)", make_external},
#if R3FUZZ_HAVE_GPU
      {"gpu", "the GPU pipeline (gpu/) deciding like vllm-50874: --backend host|virtual|nccl, --selection, --fault NAME",
       make_gpu},
      {"gpu:", "the GPU pipeline taking another policy's decisions (gpu:r3-fixed, gpu:vllm-pre-50874)", make_gpu,
       "POLICY"},
#endif
  };
  return entries;
}

Result<std::unique_ptr<Implementation>> make_implementation(std::string_view spec, const ImplementationOptions& options) {
  if (auto faulted = split_fault(spec)) {
    const auto& [base, fault] = *faulted;
    if (!options.fault.empty()) {
      return Error{"--impl " + std::string(spec) + ": names a fault already, and --fault gives " + options.fault};
    }
    if (auto policy = make_policy(base)) {
      if (!options.backend.empty() || !options.selection.empty()) {
        return Error{"--impl " + std::string(spec) + ": a policy model has no backend or device selection"};
      }
      return std::unique_ptr<Implementation>(
          std::make_unique<PolicyImplementation>(make_faulty_policy(std::move(policy), fault)));
    }
    ImplementationOptions with_fault = options;
    with_fault.fault = std::string(to_string(fault));
    return make_implementation(base, with_fault);
  }
  for (const RegisteredImplementation& entry : registered_implementations()) {
    if (is_prefix_entry(entry.name)) {
      if (spec.substr(0, entry.name.size()) != entry.name) continue;
      const std::string_view argument = spec.substr(entry.name.size());
      if (argument.empty()) {
        return Error{"--impl " + std::string(spec) + ": needs an argument after '" + std::string(entry.name) + "'"};
      }
      return entry.make(argument, options);
    }
    if (spec == entry.name) return entry.make({}, options);
  }
  return Error{"--impl " + std::string(spec) + ": unknown implementation; known: " + known_implementation_names()};
}

std::vector<std::string> default_implementation_names() { return {"vllm-50874", "vllm-pre-50874"}; }

std::string known_implementation_names() {
  std::string text;
  for (const RegisteredImplementation& entry : registered_implementations()) {
    if (!text.empty()) text += ", ";
    text += entry.name;
    if (is_prefix_entry(entry.name)) text += entry.argument;
  }
  return text;
}

bool names_external_command(std::string_view spec) { return spec.find("external:") != std::string_view::npos; }

std::string external_from_file_refusal(std::string_view spec) {
  return "expect.impl \"" + std::string(spec) +
         "\" names an external command; r3fuzz runs commands only from its command line: pass --impl with that "
         "name, or --allow-external-from-files, to run it";
}

}  // namespace r3
