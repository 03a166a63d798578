// Judging a stream of cases on several threads and merging them in case order, with no round
// and no barrier: every worker takes the next small block of cases when it finishes one (work
// stealing from a shared counter, so a worker that drew quick cases simply takes more), and a
// worker that finishes a block merges the complete blocks that come next in case order while they
// are its own; another worker's block waits for that worker's next block, or for a worker that
// has nothing else to do. Nobody waits for the slowest block of a round; a worker waits only when
// it has run a window of blocks ahead of the merge (a long shrink, or one very slow case elsewhere).
//
// Each worker judges into blocks of its own, reused once merged, so what an outcome allocates is
// allocated, reused and freed by one thread, and in the common case read by the merge on the core
// that wrote it: the workers share only the merge's own state, a few atomics and a ring of block
// pointers, touched once a block.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "fuzz/campaign/case_outcome.hpp"
#include "reference/error.hpp"

namespace r3 {

struct PipelineOptions {
  // Asked for: the calling thread is worker 0, the others are threads of their own. Fewer may
  // start: the system may refuse threads, and under a cap on address space (ulimit -v) a thread
  // starts only with room for its stack and a heap (about 200 workers in 4 GB). The started ones
  // then judge every case, with the same merged result, since it does not depend on their number.
  size_t workers = 1;
  std::optional<uint64_t> cases;        // judge cases 0 .. cases-1; nullopt: until a stop
  // Judge for this long at most, from when the workers are set up (PipelineCallbacks::start: a
  // thousand adapters may take minutes to start, and that is not the time asked for).
  std::optional<std::chrono::steady_clock::duration> time;
  const std::atomic<bool>* stop = nullptr;  // read before each case (may be null)
};

// The workers that judge: those asked for, or as many as the system started.
struct PipelineWorkers {
  size_t started = 1;                   // the calling thread included; worker numbers are 0 .. started-1
  std::optional<std::string> refused;   // why no more started: the system's words, or the cap's
  // A judgement that threw (std::bad_alloc under a memory cap, or a bug in r3fuzz): "case N: what".
  // The run stopped before case N as it stops at a signal, and the merged prefix is its report:
  // an exception must not end a worker thread, which would end the process and lose every finding.
  std::optional<std::string> judge_failure;
};

struct PipelineCallbacks {
  // Called once on the calling thread, after the threads started and before any case, with the
  // workers that will judge: what each worker needs (its implementations, an adapter process each)
  // is made here for them alone, never for a worker the system did not start. An error ends the
  // run before any case (may be empty).
  std::function<Status(const PipelineWorkers&)> start;
  // Judges case `index` on worker `worker` into `out` (its storage reused from an earlier case of
  // the same worker). Called on that worker's thread only, concurrently with the other workers.
  std::function<void(size_t worker, uint64_t index, CaseOutcome& out)> judge;
  // Merges one case, in case order, one call at a time (on whichever worker merges); false or an
  // error ends the run there: nothing after it is merged.
  std::function<Result<bool>(const CaseOutcome&)> merge;
  // After a run of merged blocks, by the same thread as merge (progress reports).
  std::function<void()> merged;
};

// Runs the stream until `cases`, the time, a stop, a judgement that throws, or a merge that ends
// it. The merged cases are always a prefix 0 .. k-1 of the stream. Returns the workers that judged, or the error of
// `start` or of a merge.
Result<PipelineWorkers> run_case_pipeline(const PipelineOptions& options, const PipelineCallbacks& callbacks);

}  // namespace r3
