// A capture policy as an implementation under test: judged symbolically through policy(),
// concretely through the host executor (the same decisions applied to real values).
#pragma once

#include <memory>
#include <string>

#include "reference/implementation.hpp"
#include "reference/policy.hpp"

namespace r3 {

class PolicyImplementation final : public Implementation {
 public:
  explicit PolicyImplementation(std::unique_ptr<CapturePolicy> policy);
  std::string name() const override;
  Allocation allocate(const Case& c) const override;
  const CapturePolicy* policy() const override { return policy_.get(); }
  bool serves(Engine engine) const override { return policy_->engine() == engine; }
  Result<ConcreteOutcome> run_concrete(const Case& c, const Step& step) const override;

 private:
  std::unique_ptr<CapturePolicy> policy_;
};

}  // namespace r3
