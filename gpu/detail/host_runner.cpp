// The host backend: the same kernel functors and Thrust calls as the CUDA build, run by
// Thrust's CPP system on host memory. Its all-gatherv is thrust::copy into each offset.
#include <type_traits>

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

// Its arenas are the spare storage of the thread's previous result (handed back through
// recycle): refilled in place, they cost a case no allocation once they are large enough, and
// no fresh pages (under ASan every new buffer is fresh memory while its quarantine fills).
struct HostExec {
  template <class T>
  using Vector = std::vector<T>;
  using walks_jobs = void;  // elements run in order: launch_over_jobs hands each its job

  DeviceResult& spare;

  auto policy() const { return thrust::cpp::par; }
  template <class T>
  Vector<T> upload(const std::vector<T>& v) const { return v; }
  template <class T>
  Vector<T> zeros(int64_t n) const {
    Vector<T> v;
    if constexpr (std::is_same_v<T, int32_t>) v = std::move(spare.arena32);
    else if constexpr (std::is_same_v<T, int16_t>) v = std::move(spare.arena16);
    v.assign(static_cast<size_t>(n), T{0});
    return v;
  }
  template <class T>
  std::vector<T> download(Vector<T>& v) const { return std::move(v); }
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

// Per thread, as callers judge one implementation from many threads at once; execute and
// recycle of one batch run on its thread.
DeviceResult& spare_arenas() {
  thread_local DeviceResult spare;
  return spare;
}

// Arenas larger than this are freed rather than kept: a thread that once ran a large case
// (up to kMaxCaseBufferBytes) must not hold its memory for good. Fuzzed cases take under 2 MiB.
constexpr size_t kMaxKeptArenaBytes = size_t{8} << 20;

class HostRunner final : public Runner {
 public:
  Result<DeviceResult> execute(const DevicePlan& plan) override {
    HostExec exec{spare_arenas()};
    return execute_plan(exec, plan);
  }
  void recycle(DeviceResult&& done) override {
    const size_t bytes = done.arena32.capacity() * sizeof(int32_t) + done.arena16.capacity() * sizeof(int16_t);
    spare_arenas() = bytes <= kMaxKeptArenaBytes ? std::move(done) : DeviceResult{};
  }
};

}  // namespace

std::unique_ptr<Runner> make_host_runner() { return std::make_unique<HostRunner>(); }

}  // namespace r3::gpu::detail
