// The pipeline's kernel bodies as __host__ __device__ functors: one source for nvcc and for
// the host compiler (Thrust's CPP system). Each functor runs once per element of a batch of
// jobs laid end to end; `ends` holds the running element totals, so element i belongs to the
// first job whose end exceeds i (one launch covers every case of a batch). The body proper is
// run(JobIndex): a device launch finds each element's job (operator()), the host, whose
// elements run in order anyway, walks the jobs and hands run() the index directly
// (execute.inl), sparing every element the search.
#pragma once

#include <cstdint>

#include "gpu/detail/device_plan.hpp"
#include "gpu/detail/host_device.hpp"
#include "reference/provenance.hpp"

namespace r3::gpu::detail {

struct JobIndex {
  int64_t job = 0;
  int64_t element = 0;  // element within the job
};

R3_HD inline JobIndex find_job(const int64_t* ends, int64_t jobs, int64_t i) {
  int64_t lo = 0, hi = jobs;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (ends[mid] <= i) lo = mid + 1;
    else hi = mid;
  }
  return {lo, i - (lo > 0 ? ends[lo - 1] : 0)};
}

// Guard rows get their canary; buffer rows a stale value (capture), kReplayUntouched (replay)
// or the tensor canary (tensors, overwritten by materialisation or the gather). An element is
// (row, group, k): row counted from the front guard's first, value k of group `group` of the
// row's width / top_k groups (a capture buffer's layers; one group of width elsewhere).
template <class T>
struct FillBuffers {
  const BufferJob* jobs;
  const int64_t* ends;
  int64_t count;
  T* out;
  // A host walk hands fill() each element's coordinates in order (execute.inl, walks_rows),
  // sparing it the divisions run() makes to find them from a flat index.
  using walks_rows = void;
  R3_HD void operator()(int64_t i) const { run(find_job(ends, count, i)); }
  R3_HD void run(const JobIndex& at) const {
    const BufferJob& b = jobs[at.job];
    const int64_t col = at.element % b.width;
    fill(b, at.element / b.width, col / b.top_k, col % b.top_k);
  }
  // The body proper: element (guarded_row, group, k) of buffer b.
  R3_HD void fill(const BufferJob& b, int64_t guarded_row, int64_t group, int64_t k) const {
    const int64_t row = guarded_row - b.guard;
    int32_t value = b.guard_value;
    if (row >= 0 && row < b.rows) {
      if (b.fill == Fill::tensor) value = kTensorCanary;
      else if (b.fill == Fill::untouched) value = untouched_value(row, static_cast<int>(group), static_cast<int>(k));
      else if (b.fill == Fill::replay_unwritten) value = kReplayUntouched;
    }
    out[b.offset + guarded_row * b.width + group * b.top_k + k] = static_cast<T>(value);
  }
};

// A rank's own routing rows, values naming their provenance (reference/provenance.hpp).
struct MaterializeRows {
  const MaterializeJob* jobs;
  const int64_t* ends;
  int64_t count;
  int32_t* out;
  R3_HD void operator()(int64_t i) const { run(find_job(ends, count, i)); }
  R3_HD void run(const JobIndex& at) const {
    const MaterializeJob& m = jobs[at.job];
    const int64_t row = at.element / m.top_k;
    const auto kind = static_cast<RowKind>(m.kind);
    const RowId id{kind, m.dp, kind == RowKind::placeholder ? m.first : m.first + row};
    out[m.dst + at.element] = routing_value(id, static_cast<int>(at.element % m.top_k));
  }
};

// The monolithic MoE kernel's routing output: it writes every row it processes and never
// checks the buffer's size, as the real kernel does.
struct ReplayOutput {
  const ReplayJob* jobs;
  const int64_t* ends;
  int64_t count;
  const int32_t* in;
  int32_t* out32;
  int16_t* out16;
  R3_HD void operator()(int64_t i) const { run(find_job(ends, count, i)); }
  R3_HD void run(const JobIndex& at) const {
    const ReplayJob& r = jobs[at.job];
    const int32_t id = replay_value(in[r.src + at.element], r.experts);
    if (r.wide) out32[r.dst + at.element] = id;
    else out16[r.dst + at.element] = static_cast<int16_t>(id);  // narrows as int16 storage does
  }
};

// The capture copy. Reads outside the source's guarded region yield the tensor canary and writes
// outside the buffer's guarded region are dropped: the plan sizes guards to hold every
// planned write, so the bounds only keep a wrong plan from touching other memory.
struct CaptureRows {
  const CaptureJob* jobs;
  const int64_t* ends;
  int64_t count;
  const int64_t* offsets;  // device-computed shard offsets (device-offsets selection)
  int32_t* arena;
  R3_HD void operator()(int64_t i) const { run(find_job(ends, count, i)); }
  R3_HD void run(const JobIndex& at) const {
    const CaptureJob& c = jobs[at.job];
    const int64_t row = at.element / c.top_k;
    const int64_t k = at.element % c.top_k;
    const int64_t src_row = c.src_row + (c.offset_index >= 0 ? offsets[c.offset_index] : 0) + row;
    const int64_t from = c.src + src_row * (c.src_width > 0 ? c.src_width : c.top_k) + c.src_col + k;
    const int32_t value = from >= c.src_lo && from < c.src_hi ? arena[from] : kTensorCanary;
    const int64_t to = c.dst + (c.dst_row + row) * c.row_width + int64_t{c.layer} * c.top_k + k;
    if (to >= c.dst_lo && to < c.dst_hi) arena[to] = value;
  }
};

}  // namespace r3::gpu::detail
