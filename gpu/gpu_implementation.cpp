#include "gpu/gpu_implementation.hpp"

#include <string>

#include "gpu/detail/plan.hpp"
#include "gpu/detail/runner.hpp"

namespace r3::gpu {
namespace {

Result<std::unique_ptr<CapturePolicy>> policy_named(std::string_view name) {
  if (auto policy = make_policy(name)) return policy;
  return Error{"unknown gpu policy '" + std::string(name) + "'; valid policies: " + policy_names()};
}

// The device buffers of one case (both arenas, guards included).
int64_t buffer_bytes(const detail::DevicePlan& plan) {
  return plan.arena32 * int64_t{sizeof(int32_t)} + plan.arena16 * int64_t{sizeof(int16_t)};
}

// The plan a batch is laid out in, kept from batch to batch for its storage (DevicePlan::clear).
// One per thread, not per implementation: callers judge one implementation from many threads
// at once (exhaust's and the campaign's workers), and run_batch is never re-entered.
detail::DevicePlan& batch_plan() {
  thread_local detail::DevicePlan plan;
  return plan;
}

Error too_large(int64_t bytes) {
  return Error{"the case's buffers take " + std::to_string(bytes) + " bytes, more than the " +
               std::to_string(kMaxCaseBufferBytes) + " bytes (256 MiB) one case may take; refused before allocating"};
}

class Gpu final : public GpuImplementation {
 public:
  Gpu(GpuOptions options, std::unique_ptr<CapturePolicy> policy, std::unique_ptr<detail::Runner> runner)
      : options_(std::move(options)), policy_(std::move(policy)), runner_(std::move(runner)) {}

  // "gpu", "gpu:r3-fixed" (another policy's decisions), "gpu+no-trim" (IMPL+FAULT, as every
  // faulted implementation): findings of different pipelines must never share a signature.
  std::string name() const override {
    std::string text = options_.policy == default_gpu_policy() ? "gpu" : "gpu:" + options_.policy;
    if (options_.fault != Fault::none) text += "+" + std::string(to_string(options_.fault));
    return text;
  }

  Allocation allocate(const Case& c) const override { return detail::gpu_allocation(c, *policy_, options_.fault); }

  // The engine of the policy it follows: plain gpu the default engine's, gpu:POLICY its policy's.
  bool serves(Engine engine) const override { return policy_->engine() == engine; }
  // Its kernels carry out the policy's decisions; a fault makes them another engine's.
  const CapturePolicy* followed_policy() const override { return options_.fault == Fault::none ? policy_.get() : nullptr; }

  Result<ConcreteOutcome> run_concrete(const Case& c, const Step& step) const override {
    const CaseAndStep one{&c, &step};
    return std::move(run_batch({&one, 1}).front());
  }

  std::vector<Result<ConcreteOutcome>> run_batch(std::span<const CaseAndStep> cases) const override {
    const detail::PlanSettings settings{policy_.get(), options_.selection, options_.fault};
    // A case whose buffers pass the bound is refused; the batch is then planned again without
    // it (rare: concrete cases are small), so the others still run.
    std::vector<bool> refused(cases.size(), false);
    detail::DevicePlan& plan = batch_plan();
    std::vector<Result<detail::PlannedCase>> planned;
    for (bool replan = true; replan;) {
      replan = false;
      plan.clear();
      planned.clear();
      planned.reserve(cases.size());
      for (size_t i = 0; i < cases.size(); ++i) {
        const CaseAndStep& item = cases[i];
        R3_CHECK(item.c != nullptr && item.step != nullptr, "run_batch items name a case and its step");
        const int64_t before = buffer_bytes(plan);
        if (refused[i]) {
          planned.push_back(too_large(before));
          continue;
        }
        planned.push_back(detail::plan_case(*item.c, *item.step, settings, plan));
        const int64_t bytes = buffer_bytes(plan) - before;
        if (planned.back() && bytes > kMaxCaseBufferBytes) {
          refused[i] = true;
          replan = true;
          planned.back() = too_large(bytes);
        }
      }
    }
    std::vector<Result<ConcreteOutcome>> out;
    out.reserve(cases.size());
    Result<detail::DeviceResult> result = runner_->execute(plan);
    for (auto& p : planned) {
      if (!p) out.push_back(p.error());
      else if (!result) out.push_back(Error{"gpu (" + std::string(to_string(options_.backend)) + "): " + result.error().message});
      else out.push_back(detail::collect_outcome(std::move(*p), *result));
    }
    if (result) runner_->recycle(std::move(*result));
    return out;
  }

 private:
  GpuOptions options_;
  std::unique_ptr<CapturePolicy> policy_;
  // The host runner may serve many threads at once (its storage is per thread); a CUDA runner
  // owns one stream: one implementation per thread.
  std::unique_ptr<detail::Runner> runner_;
};

}  // namespace

Result<std::unique_ptr<GpuImplementation>> make_gpu_implementation(const GpuOptions& options) {
  R3_TRY(auto policy, policy_named(options.policy));
  std::unique_ptr<detail::Runner> runner;
  if (options.backend == Backend::host) {
    runner = detail::make_host_runner();
  } else {
    R3_TRY(runner, detail::make_cuda_runner(options.backend));
  }
  return std::unique_ptr<GpuImplementation>(std::make_unique<Gpu>(options, std::move(policy), std::move(runner)));
}

}  // namespace r3::gpu
