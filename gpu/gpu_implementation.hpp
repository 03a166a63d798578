// The GPU pipeline as an implementation under test (concrete only): per case, every rank's
// routing rows are materialised, all-gathered in EP/DP rank order, run through the
// monolithic replay-output kernel (monolithic cases) and the capture kernel, in guarded
// buffers. Host types only; the CUDA build sits behind gpu/detail/runner.hpp.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu/gpu_options.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"
#include "reference/layout.hpp"

namespace r3::gpu {

// The most device memory one case's buffers may take (both arenas, guards included): 256 MiB.
// Concrete cases are small (M <= 64 rows), but a cudagraph size can pad the gathered tensors far
// beyond M; such a case is refused with this bound in the message, as exhaust refuses
// spaces, rather than allocated until the process dies (docs/SECURITY.md, memory budgets).
inline constexpr int64_t kMaxCaseBufferBytes = int64_t{256} << 20;

struct CaseAndStep {
  const Case* c = nullptr;
  const Step* step = nullptr;
};

class GpuImplementation : public Implementation {
 public:
  ~GpuImplementation() override = default;
  // Runs many cases with one launch of each kernel over all their buffers laid end to end
  // (throughput on a GPU). Results equal per-case run_concrete(); one Result per case.
  virtual std::vector<Result<ConcreteOutcome>> run_batch(std::span<const CaseAndStep> cases) const = 0;
};

// "gpu", "gpu:POLICY", each optionally "+FAULT". Errors: an unknown policy, or a backend this build or machine
// lacks ("backend virtual needs the CUDA build ...", "skipped: nccl needs 2 GPUs, found 1").
Result<std::unique_ptr<GpuImplementation>> make_gpu_implementation(const GpuOptions& options);

}  // namespace r3::gpu
