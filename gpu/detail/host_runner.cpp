// The host backend: the same kernel functors and Thrust calls as the CUDA build, run by
// Thrust's CPP system on host memory. Its all-gatherv is thrust::copy into each offset.
#include "gpu/detail/runner.hpp"
#include "reference/provenance.hpp"

// The device work runs once per element of every buffer and tensor, thousands of times per
// input: in fuzzing builds (clang) it carries no coverage instrumentation, as on the device.
// Its branches follow from the plan, whose code (plan.cpp) keeps its coverage; tracing every
// compare in the kernels cost the differential fuzz target more than the rest of the pipeline.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((no_sanitize("coverage"))), apply_to = function)
#endif
#include <thrust/copy.h>
#include <thrust/system/cpp/execution_policy.h>

#include "gpu/detail/execute.inl"
#if defined(__clang__)
#pragma clang attribute pop
#endif

namespace r3::gpu::detail {
namespace {

struct HostExec {
  template <class T>
  using Vector = std::vector<T>;

  auto policy() const { return thrust::cpp::par; }
  template <class T>
  Vector<T> upload(const std::vector<T>& v) const { return v; }
  template <class T>
  Vector<T> zeros(int64_t n) const { return Vector<T>(static_cast<size_t>(n)); }
  template <class T>
  std::vector<T> download(const Vector<T>& v) const { return v; }
  template <class T>
  static T* raw(Vector<T>& v) { return v.data(); }

  Status gather(Vector<int32_t>& arena, const std::vector<GatherOp>& ops) const {
    for (const GatherOp& op : ops) {
      for (const GatherPiece& p : op.pieces) {
        thrust::copy(policy(), arena.data() + p.src, arena.data() + p.src + p.count, arena.data() + p.dst);
      }
    }
    return ok_status();
  }
  Status finish() const { return ok_status(); }
};

class HostRunner final : public Runner {
 public:
  Result<DeviceResult> execute(const DevicePlan& plan) override {
    HostExec exec;
    return execute_plan(exec, plan);
  }
};

}  // namespace

std::unique_ptr<Runner> make_host_runner() { return std::make_unique<HostRunner>(); }

}  // namespace r3::gpu::detail
