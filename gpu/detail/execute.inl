// Executes a DevicePlan with Thrust on an execution context `Exec`. Included by exactly one
// host source (host_runner.cpp) and one CUDA source (cuda/cuda_runner.cu), each with its Exec:
//   template <class T> using Vector = ...;          device-resident storage
//   auto policy();                                   the Thrust execution policy
//   template <class T> Vector<T> upload(const std::vector<T>&);
//   template <class T> Vector<T> zeros(int64_t n);
//   template <class T> std::vector<T> download(Vector<T>&);  (may take the storage over)
//   template <class T> static T* raw(Vector<T>&);
//   Status gather(Vector<int32_t>& arena, const std::vector<GatherOp>& ops);
//   Status finish();                                 waits and reports asynchronous errors
// and, optionally, `using walks_jobs = void;`: its elements run one after another, so
// launch_over_jobs walks each job's elements in order and hands the body its index (the same
// order a flat launch takes), rather than having every element search for its job.
#pragma once

#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "gpu/detail/device_plan.hpp"
#include "gpu/detail/kernels.hpp"
#include "reference/error.hpp"

namespace r3::gpu::detail {

template <class Job, class Elements>
std::vector<int64_t> job_ends(const std::vector<Job>& jobs, Elements elements) {
  std::vector<int64_t> ends(jobs.size());
  int64_t total = 0;
  for (size_t i = 0; i < jobs.size(); ++i) ends[i] = total += elements(jobs[i]);
  return ends;
}

template <class Exec, class = void>
struct WalksJobs : std::false_type {};
template <class Exec>
struct WalksJobs<Exec, std::void_t<typename Exec::walks_jobs>> : std::true_type {};

// A body whose elements are rows of groups of values (FillBuffers): walked in order, it is
// handed each element's (row, group, k) rather than dividing a flat index into them.
template <class Body, class = void>
struct WalksRows : std::false_type {};
template <class Body>
struct WalksRows<Body, std::void_t<typename Body::walks_rows>> : std::true_type {};

// One launch of `body` over every element of `jobs`; body's jobs/ends/count are filled here.
template <class Exec, class Job, class Body, class Elements>
void launch_over_jobs(Exec& exec, const std::vector<Job>& jobs, Elements elements, Body body) {
  if (jobs.empty()) return;
  if constexpr (WalksJobs<Exec>::value) {
    body.jobs = jobs.data();
    body.count = static_cast<int64_t>(jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
      const int64_t n = elements(jobs[j]);
      if constexpr (WalksRows<Body>::value) {
        // The same elements in the same order as the flat walk below: rows, then groups, then k.
        const Job& b = jobs[j];
        const int64_t groups = b.width / b.top_k;
        for (int64_t row = 0; row * b.width < n; ++row)
          for (int64_t group = 0; group < groups; ++group)
            for (int64_t k = 0; k < b.top_k; ++k) body.fill(b, row, group, k);
      } else {
        for (int64_t e = 0; e < n; ++e) body.run(JobIndex{static_cast<int64_t>(j), e});
      }
    }
  } else {
    const std::vector<int64_t> ends = job_ends(jobs, elements);
    if (ends.back() == 0) return;
    auto device_jobs = exec.upload(jobs);
    auto device_ends = exec.upload(ends);
    body.jobs = Exec::raw(device_jobs);
    body.ends = Exec::raw(device_ends);
    body.count = static_cast<int64_t>(jobs.size());
    thrust::for_each(exec.policy(), thrust::counting_iterator<int64_t>(0),
                     thrust::counting_iterator<int64_t>(ends.back()), body);
  }
}

template <class Exec>
Result<DeviceResult> execute_plan(Exec& exec, const DevicePlan& plan) {
  auto arena32 = exec.template zeros<int32_t>(plan.arena32);
  auto arena16 = exec.template zeros<int16_t>(plan.arena16);
  int32_t* a32 = Exec::raw(arena32);
  int16_t* a16 = Exec::raw(arena16);
  auto buffer_elements = [](const BufferJob& b) { return b.elements(); };
  launch_over_jobs(exec, plan.buffers32, buffer_elements, FillBuffers<int32_t>{nullptr, nullptr, 0, a32});
  launch_over_jobs(exec, plan.buffers16, buffer_elements, FillBuffers<int16_t>{nullptr, nullptr, 0, a16});
  launch_over_jobs(exec, plan.materialize, [](const MaterializeJob& m) { return m.rows * m.top_k; },
                   MaterializeRows{nullptr, nullptr, 0, a32});
  R3_TRY_STATUS(exec.gather(arena32, plan.gathers));

  // Device-offsets selection: shard offsets as an exclusive scan of local_sizes (or counts).
  auto keys = exec.upload(plan.scan.keys);
  auto sizes = exec.upload(plan.scan.values);
  auto offsets = exec.template zeros<int64_t>(static_cast<int64_t>(plan.scan.values.size()));
  if (!plan.scan.values.empty()) {
    const int64_t* first = Exec::raw(keys);
    thrust::exclusive_scan_by_key(exec.policy(), first, first + plan.scan.keys.size(), Exec::raw(sizes),
                                  Exec::raw(offsets));
  }
  for (const auto& wave : plan.replay_waves) {
    launch_over_jobs(exec, wave, [](const ReplayJob& r) { return r.rows * r.top_k; },
                     ReplayOutput{nullptr, nullptr, 0, a32, a32, a16});
  }
  for (const auto& wave : plan.capture_waves) {
    launch_over_jobs(exec, wave, [](const CaptureJob& c) { return c.rows * c.top_k; },
                     CaptureRows{nullptr, nullptr, 0, Exec::raw(offsets), a32});
  }
  R3_TRY_STATUS(exec.finish());
  return DeviceResult{exec.download(arena32), exec.download(arena16)};
}

}  // namespace r3::gpu::detail
