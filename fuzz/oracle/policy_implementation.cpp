#include "fuzz/oracle/policy_implementation.hpp"

#include "fuzz/oracle/host_executor.hpp"

namespace r3 {

PolicyImplementation::PolicyImplementation(std::unique_ptr<CapturePolicy> policy) : policy_(std::move(policy)) {
  R3_CHECK(policy_ != nullptr, "a policy implementation needs a policy");
}

std::string PolicyImplementation::name() const { return std::string(policy_->name()); }

Allocation PolicyImplementation::allocate(const Case& c) const { return policy_->allocate(c); }

Result<ConcreteOutcome> PolicyImplementation::run_concrete(const Case& c, const Step& step) const {
  return execute_on_host(c, step, *policy_);
}

}  // namespace r3
