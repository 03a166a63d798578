#include "fuzz/implementations/registry.hpp"

#include <utility>

#if R3FUZZ_HAVE_GPU
#include "gpu/gpu_implementation.hpp"
#endif

#include "fuzz/adapter/external_implementation.hpp"
#include "fuzz/implementations/faulty_policy.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/engine_model.hpp"
#include "reference/policy.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

using Made = Result<std::unique_ptr<Implementation>>;

// A fault is a bug of one engine's capture, or of both (reference/fault.hpp): a carrier of the
// other engine would carry it as a no-op, and a mutant that cannot differ measures nothing.
Status fault_fits(Fault fault, const CapturePolicy& policy, std::string_view impl) {
  if (fault == Fault::none || fault_applies(fault, policy.engine())) return ok_status();
  return Error{"--fault: " + std::string(to_string(fault)) + " is not a fault of " +
               std::string(to_string(policy.engine())) + "'s capture, which " + std::string(impl) +
               " follows; faults that fit it: " + [&] {
                 std::string names;
                 for (Fault f : faults_for(policy.engine())) names += (names.empty() ? "" : ", ") + std::string(to_string(f));
                 return names;
               }()};
}

// A policy model has no backend and no device selection; a fault makes it "<name>+<fault>".
auto policy_entry(std::unique_ptr<CapturePolicy> (*make_policy)()) {
  return [make_policy](std::string_view, Fault fault, const ImplementationOptions& o) -> Made {
    auto policy = make_policy();
    const std::string name(policy->name());
    if (!o.backend.empty()) return Error{"--backend: " + name + " is a policy model and has no backend"};
    if (!o.selection.empty()) return Error{"--selection: " + name + " is a policy model and has no device selection"};
    R3_TRY_STATUS(fault_fits(fault, *policy, name));
    if (fault != Fault::none) policy = make_faulty_policy(std::move(policy), fault);
    return std::unique_ptr<Implementation>(std::make_unique<PolicyImplementation>(std::move(policy)));
  };
}

// external:COMMAND starts the adapter and exchanges the hello now: a command that cannot
// start or speaks another protocol is a usage error, not a failure of every case.
Made make_external(std::string_view command, Fault fault, const ImplementationOptions& o) {
  if (!o.backend.empty()) return Error{"--backend: external:" + std::string(command) + " has no backend"};
  if (fault != Fault::none) return Error{"--fault: external:" + std::string(command) + " takes no fault"};
  if (!o.selection.empty()) return Error{"--selection: external:" + std::string(command) + " has no device selection"};
  ExternalOptions options;
  options.command = std::string(command);
  options.timeout = o.adapter_timeout;
  options.startup_timeout = o.adapter_startup_timeout;
  options.stderr_log = o.adapter_log;
  options.stop = o.stop;
  auto impl = std::make_unique<ExternalImplementation>(std::move(options));
  if (Status s = impl->connect(); !s.ok()) return Error{"--impl external:" + std::string(command) + ": " + s.error().message};
  return std::unique_ptr<Implementation>(std::move(impl));
}

#if R3FUZZ_HAVE_GPU
// The GPU pipeline (gpu/): --backend host|virtual|nccl (default host), --selection
// host-decision|device-offsets, a fault (gpu+FAULT); "gpu:POLICY" takes POLICY's decisions.
Made make_gpu(std::string_view policy, Fault fault, const ImplementationOptions& o) {
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
  options.fault = fault;
  if (auto followed = make_policy(options.policy)) R3_TRY_STATUS(fault_fits(fault, *followed, "gpu:" + options.policy));
  R3_TRY(auto impl, gpu::make_gpu_implementation(options));
  return std::unique_ptr<Implementation>(std::move(impl));
}
#endif

bool is_prefix_entry(std::string_view name) { return !name.empty() && name.back() == ':'; }

// Every engine's policy models (EngineModel::policies(), registry order), then the adapter and
// the GPU pipeline. Read once: engines added later (add_engine) bring no rows.
std::vector<RegisteredImplementation> builtin_entries() {
  std::vector<RegisteredImplementation> entries;
  for (const EngineModel* model : engine_models())
    for (const PolicyInfo& p : model->policies()) entries.push_back({p.name, p.description, policy_entry(p.make)});
  entries.push_back({"external:", "any program speaking the adapter protocol (docs/adapter-protocol.md)", make_external});
#if R3FUZZ_HAVE_GPU
  entries.push_back(
      {"gpu", "the GPU pipeline (gpu/) deciding like vllm-50874: --backend host|virtual|nccl, --selection", make_gpu});
  entries.push_back({"gpu:", "the GPU pipeline taking another policy's decisions (gpu:r3-fixed, gpu:vllm-pre-50874)",
                     make_gpu, "POLICY"});
#endif
  return entries;
}

}  // namespace

const std::vector<RegisteredImplementation>& registered_implementations() {
  static const std::vector<RegisteredImplementation> entries = builtin_entries();
  return entries;
}

Result<std::unique_ptr<Implementation>> make_implementation(std::string_view spec, const ImplementationOptions& options) {
  R3_TRY(ImplementationName name, parse_implementation_name(spec));
  return make_implementation(name, options);
}

Result<std::unique_ptr<Implementation>> make_implementation(const ImplementationName& name,
                                                            const ImplementationOptions& options) {
  R3_TRY(const ImplementationName faulted, with_fault_flag(name, options.fault));
  const Fault fault = faulted.fault;
  const std::string_view base = name.base;
  for (const RegisteredImplementation& entry : registered_implementations()) {
    if (is_prefix_entry(entry.name)) {
      if (!base.starts_with(entry.name)) continue;
      const std::string_view argument = base.substr(entry.name.size());
      if (argument.empty()) {
        return Error{"--impl " + name.text() + ": needs an argument after '" + std::string(entry.name) + "'"};
      }
      return entry.make(argument, fault, options);
    }
    if (base == entry.name) return entry.make({}, fault, options);
  }
  return Error{"--impl " + name.text() + ": unknown implementation; known: " + known_implementation_names()};
}

std::vector<std::string> default_implementation_names(Profile profile) {
  std::vector<std::string> names;
  for (Engine e : all_engines())
    if (covers(profile, e))
      for (std::string_view name : e.model().released_policies()) names.emplace_back(name);
  return names;
}

std::string known_implementation_names() {
  std::string text;
  for (const RegisteredImplementation& entry : registered_implementations()) {
    if (!text.empty()) text += ", ";
    text += entry.name;
    if (is_prefix_entry(entry.name)) text += entry.argument;
  }
  return text + " (each but external: also as IMPL+FAULT)";
}

bool names_external_command(std::string_view spec) { return spec.find("external:") != std::string_view::npos; }

std::string external_from_file_refusal(std::string_view spec) {
  return "expect.impl \"" + std::string(spec) +
         "\" names an external command; r3fuzz runs commands only from its command line: pass --impl with that "
         "name, or --allow-external-from-files, to run it";
}

}  // namespace r3
