// The C++ plug-in API: test your own capture implementation with r3fuzz in a few lines.
//
//   #include "fuzz/plugin/plugin.hpp"
//   class MyCapture final : public r3::CapturePolicy { ... decide(call, out) ... };
//   int main() {
//     r3::plugin::register_policy("my-capture", [] { return std::make_unique<MyCapture>(); });
//     r3::CampaignOptions options;
//     options.max_cases = 2000;
//     return r3::plugin::run_campaign_main({"my-capture", "vllm-50874"}, options);
//   }
//
// What an implementation receives and returns is r3::CapturePolicy (reference/policy.hpp:
// one rank's capture call in, copies or a rejection out; judged symbolically and concretely)
// or, for code that runs the whole step itself, r3::Implementation
// (reference/implementation.hpp: the case and step in, every buffer it wrote out). Installed
// with the r3fuzz CMake package: find_package(r3fuzz) and link r3fuzz::r3fuzz.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/implementations/registry.hpp"
#include "reference/capture.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"
#include "reference/policy.hpp"

namespace r3::plugin {

using ImplementationFactory = std::function<std::unique_ptr<Implementation>()>;
using PolicyFactory = std::function<std::unique_ptr<CapturePolicy>()>;

// Makes `name` usable wherever this API takes implementation names, beside the built-in
// ones (vllm-50874, external:COMMAND, ...). An error when the name is taken or empty.
Status register_implementation(std::string name, ImplementationFactory make);
// The same for a capture policy: judged symbolically and, through the host executor, concretely.
Status register_policy(std::string name, PolicyFactory make);

// A registered or built-in implementation by name.
Result<std::unique_ptr<Implementation>> make(std::string_view name, const ImplementationOptions& options = {});

// Runs a campaign over the named implementations. The report is the campaign's CampaignReport:
// findings with signatures, details and the case files written to options.out_dir.
Result<CampaignReport> run_campaign(const std::vector<std::string>& names, const CampaignOptions& options,
                                    const ImplementationOptions& impl_options = {});

// run_campaign, then the report as `r3fuzz run` prints it on `out`; returns the exit code
// r3fuzz would (0 clean, 1 failures, 2 an error, printed on `err`).
int run_campaign_main(const std::vector<std::string>& names, const CampaignOptions& options, std::ostream& out,
                      std::ostream& err);
int run_campaign_main(const std::vector<std::string>& names, const CampaignOptions& options);

}  // namespace r3::plugin
