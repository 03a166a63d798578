#include "fuzz/implementations/faulty_policy.hpp"

#include <string>

#include "reference/engine_model.hpp"

namespace r3 {
namespace {

class FaultyPolicy final : public CapturePolicy {
 public:
  FaultyPolicy(std::unique_ptr<CapturePolicy> base, Fault fault)
      : base_(std::move(base)), fault_(fault), name_(std::string(base_->name()) + "+" + std::string(to_string(fault))) {}

  std::string_view name() const override { return name_; }

  Allocation allocate(const Case& c) const override {
    Allocation a = base_->allocate(c);
    apply_allocation_fault(fault_, c, a);
    return a;
  }

  Engine engine() const override { return base_->engine(); }

  // The policy has no all-gather: its engine emulates the gather faults in the decision.
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    call.engine.model().decide_with_fault(*base_, fault_, call, out);
  }

 private:
  std::unique_ptr<CapturePolicy> base_;
  Fault fault_;
  std::string name_;
};

}  // namespace

std::unique_ptr<CapturePolicy> make_faulty_policy(std::unique_ptr<CapturePolicy> base, Fault fault) {
  return std::make_unique<FaultyPolicy>(std::move(base), fault);
}

}  // namespace r3
