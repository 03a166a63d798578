#include "fuzz/plugin/plugin.hpp"

#include <iostream>
#include <map>
#include <mutex>

#include "fuzz/campaign/report.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/oracle/policy_implementation.hpp"

namespace r3::plugin {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, ImplementationFactory, std::less<>> factories;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

Status register_implementation(std::string name, ImplementationFactory make) {
  if (name.empty()) return Error{"register_implementation: the name is empty"};
  if (!make) return Error{"register_implementation: " + name + ": no factory given"};
  if (make_implementation(name, {}).ok())
    return Error{"register_implementation: " + name + " is a built-in implementation"};
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (!r.factories.emplace(name, std::move(make)).second)
    return Error{"register_implementation: " + name + " is registered already"};
  return ok_status();
}

Status register_policy(std::string name, PolicyFactory make) {
  if (!make) return Error{"register_policy: " + name + ": no factory given"};
  return register_implementation(name, [make = std::move(make)]() -> std::unique_ptr<Implementation> {
    return std::make_unique<PolicyImplementation>(make());
  });
}

Result<std::unique_ptr<Implementation>> make(std::string_view name, const ImplementationOptions& options) {
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (auto it = r.factories.find(name); it != r.factories.end()) return it->second();
  }
  return make_implementation(name, options);
}

Result<CampaignReport> run_campaign(const std::vector<std::string>& names, const CampaignOptions& options,
                                    const ImplementationOptions& impl_options) {
  if (names.empty()) return Error{"run_campaign: no implementation named"};
  std::vector<std::unique_ptr<Implementation>> impls;
  for (const std::string& name : names) {
    R3_TRY(std::unique_ptr<Implementation> impl, make(name, impl_options));
    impls.push_back(std::move(impl));
  }
  return r3::run_campaign(options, impls);
}

int run_campaign_main(const std::vector<std::string>& names, const CampaignOptions& options, std::ostream& out,
                      std::ostream& err) {
  auto report = run_campaign(names, options);
  if (!report) {
    err << "r3fuzz: " << terminal_safe(report.error().message) << "\n";  // one line, as main() prints it
    return 2;
  }
  out << report_text(*report, false);
  return report->exit_code();
}

int run_campaign_main(const std::vector<std::string>& names, const CampaignOptions& options) {
  return run_campaign_main(names, options, std::cout, std::cerr);
}

}  // namespace r3::plugin
