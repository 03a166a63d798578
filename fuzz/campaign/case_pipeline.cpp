#include "fuzz/campaign/case_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

namespace r3 {
namespace {

using Clock = std::chrono::steady_clock;

// Cases in a block: from 1, doubled while blocks take under kQuickBlock, up to kMaxBlock. A slow
// implementation (an external adapter, milliseconds a case) keeps blocks of a case or two, so every
// worker gets cases and each is merged (and reported) soon; a fast one pays a block's bookkeeping
// (a lock, a few atomics, a merge pass) once per kMaxBlock cases, and the blocks stay well under a
// millisecond, so the last block of a run or a slow case costs the others nothing.
constexpr size_t kMaxBlock = 64;
constexpr auto kQuickBlock = std::chrono::microseconds(500);
// Blocks a worker may have judged that are not merged yet: how far it runs ahead of a merge that
// is busy (shrinking a new failure, writing it) or waiting for a slow case of another worker.
constexpr size_t kBlocksAhead = 128;
// And all workers together: a window of blocks sized by --jobs alone would let 1024 workers hold
// 131,072 blocks (2 GB of outcomes) behind one long shrink. 8192 blocks are 8 per worker at 1024
// workers, and leave every count up to 64 its full window.
constexpr size_t kMaxBlocksInFlight = 8192;
// Under a cap on address space (ulimit -v), what a worker is started only with room for: its
// stack, and this much for its heap (a case's buffers, its judgements, its blocks: about 2 MiB
// measured, and glibc's per-thread arenas round it up), with kRunHeap more for the merge and the
// shrinks. A cap that refuses a thread is otherwise all but spent on stacks, and the workers
// that did start fail to allocate (std::bad_alloc). Without a cap nothing is reserved.
constexpr size_t kWorkerHeap = size_t{8} << 20;
constexpr size_t kRunHeap = size_t{256} << 20;
// glibc gives each new thread a malloc arena of its own, up to 8 per core, each reserving
// kArenaBytes of address space: under a cap they take what room is left in such slices, and the
// main arena can no longer grow (std::bad_alloc with 128 arenas, a 16-core machine's count).
// Under a cap the threads share at most kArenasUnderCap (the main one and 7 more), and the
// room a worker is started with counts the arenas the workers may reserve.
constexpr int kArenasUnderCap = 8;
constexpr size_t kArenaBytes = size_t{64} << 20;  // glibc's HEAP_MAX_SIZE on 64-bit
// The clock is read at a block's first case and every 16th: cheap at 500k cases/s, fine-grained
// enough for --time.
constexpr size_t kClockEvery = 16;
constexpr uint64_t kNoEnd = std::numeric_limits<uint64_t>::max();

struct Block {
  explicit Block(size_t owner) : owner(owner) {}
  const size_t owner;              // the worker that judges into it
  uint64_t number = 0;
  size_t count = 0;                // cases[0 .. count-1] are this block's, from its first case on
  std::vector<CaseOutcome> cases;  // written by its owner only, read by the merge once published
  std::atomic<bool> merged{true};  // false from publication until the merge is done with it
};

// One worker's blocks. Only that worker touches the lists; the merge only sets `merged`.
struct WorkerBlocks {
  std::vector<std::unique_ptr<Block>> all;
  std::deque<Block*> in_flight;  // published, in block order (the order they are merged in)
  // Merged, the last merged on top: the one whose outcomes are likeliest still in this core's cache.
  std::vector<Block*> free;
};

// The room ulimit -v leaves for worker threads: read once, checked before each thread starts.
class AddressSpaceBudget {
 public:
  AddressSpaceBudget() {
    rlimit cap{};
    if (getrlimit(RLIMIT_AS, &cap) == 0 && cap.rlim_cur != RLIM_INFINITY) limit_ = cap.rlim_cur;
    pthread_attr_t attr;
    if (pthread_getattr_default_np(&attr) == 0) {  // the stack std::thread gets (ulimit -s)
      size_t guard = 0;
      pthread_attr_getstacksize(&attr, &stack_);
      pthread_attr_getguardsize(&attr, &guard);
      stack_ += guard;
      pthread_attr_destroy(&attr);
    }
  }

  // Under a cap, before any thread starts (glibc fixes the count at the first arena past 8).
  void share_arenas() const {
#ifdef M_ARENA_MAX
    if (limit_) mallopt(M_ARENA_MAX, kArenasUnderCap);
#endif
  }

  // Whether the cap leaves room for one more thread's stack, and heap for `workers` + 1 workers
  // and the run; why not when it does not. Always room without a cap, or without /proc.
  std::optional<std::string> refusal(size_t workers) const {
    if (!limit_) return std::nullopt;
    const std::optional<uint64_t> used = mapped_bytes();
    const uint64_t arenas = std::min<uint64_t>(workers, kArenasUnderCap - 1);
    const uint64_t need = stack_ + kRunHeap + (workers + 1) * kWorkerHeap + arenas * kArenaBytes;
    if (!used || (*used < *limit_ && *limit_ - *used >= need)) return std::nullopt;
    return "the address-space limit (ulimit -v) leaves no room for another: each worker takes its " +
           std::to_string(stack_ >> 20) + " MiB stack and " + std::to_string(kWorkerHeap >> 20) + " MiB of heap";
  }

 private:
  // What the process maps now (VmSize, which the cap bounds); nullopt without /proc.
  static std::optional<uint64_t> mapped_bytes() {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return std::nullopt;
    unsigned long long pages = 0;
    const bool read = std::fscanf(f, "%llu", &pages) == 1;
    std::fclose(f);
    if (!read) return std::nullopt;
    return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  }

  std::optional<uint64_t> limit_;
  size_t stack_ = size_t{8} << 20;
};

class Pipeline {
 public:
  Pipeline(const PipelineOptions& options, const PipelineCallbacks& callbacks)
      : options_(options), callbacks_(callbacks), asked_(std::max<size_t>(1, options.workers)),
        end_(options.cases.value_or(kNoEnd)) {}

  Result<PipelineWorkers> run();

 private:
  struct Claim {
    uint64_t block = 0, first = 0;
    size_t count = 0;
  };
  // The threads wait at the gate until the run is set up for the workers that started.
  enum Gate : int { kClosed, kOpen, kCancelled };
  class GateGuard;
  PipelineWorkers start_threads(std::vector<std::jthread>& threads);
  Status set_up(const PipelineWorkers& started);
  void open_gate(Gate to);
  void work(size_t worker);
  Block* free_block(size_t worker);
  std::optional<Claim> claim();
  void judge(Block& block, const Claim& c);
  bool judge_one(Block& block, uint64_t index, size_t in_block);
  Result<bool> merge_one(const CaseOutcome& o);
  bool reached(uint64_t index, size_t in_block) const;
  void publish(Block& block);
  void try_merge(size_t worker, bool any_owner);
  void merge_ready(size_t worker, bool any_owner);
  void cut(uint64_t at);
  void wait_for_merge(size_t worker, uint32_t seen);
  void wake();
  bool over() const { return closed_.load() || claims_over_.load(); }

  const PipelineOptions& options_;
  const PipelineCallbacks& callbacks_;
  const size_t asked_;  // workers asked for; workers_ has those that started
  std::atomic<int> gate_{kClosed};
  std::optional<Clock::time_point> deadline_;  // set before the gate opens
  // Sized by set_up() for the workers that started, before the gate opens. They outlive the
  // workers: a worker that ends may leave published blocks to another's merge.
  std::vector<WorkerBlocks> workers_;
  std::vector<std::atomic<Block*>> ring_;  // block b at ring_[b % size] from publication until merged
  // Read by every worker for every case, written rarely: a cache line of their own, apart from
  // what changes with every block.
  alignas(64) std::atomic<uint64_t> end_;     // no case at or past it is judged (a cut lowers it)
  std::atomic<size_t> block_size_{1};
  std::atomic<bool> claims_over_{false};      // every case before end_ is claimed, or a cut came
  std::atomic<bool> closed_{false};           // the merge ended: nothing more is merged
  // Written once a block.
  alignas(64) std::mutex claim_mutex_;
  uint64_t next_block_ = 0, next_case_ = 0;  // under claim_mutex_
  alignas(64) std::atomic<bool> merging_{false};  // taken by the one thread merging
  std::atomic<uint64_t> merged_blocks_{0};        // advanced under merging_
  std::atomic<uint32_t> epoch_{0};                // moves when a block is merged or the run ends: wakes waiters
  std::optional<Error> error_;                    // under merging_
  // The earliest case whose judgement threw, and what it threw (judge_failure).
  std::mutex failure_mutex_;
  std::optional<std::pair<uint64_t, std::string>> failure_;  // under failure_mutex_
  void record_failure(uint64_t index, std::string what);
};

// Cancels the gate unless it was opened, so no path out of run() (an error, an exception) leaves
// a thread waiting at it to be joined for ever.
class Pipeline::GateGuard {
 public:
  explicit GateGuard(Pipeline& p) : p_(p) {}
  ~GateGuard() {
    if (p_.gate_.load() == kClosed) p_.open_gate(kCancelled);
  }
  GateGuard(const GateGuard&) = delete;
  GateGuard& operator=(const GateGuard&) = delete;

 private:
  Pipeline& p_;
};

Result<PipelineWorkers> Pipeline::run() {
  PipelineWorkers started;
  {
    std::vector<std::jthread> others;  // joined on leaving the scope, after the guard let them go
    const GateGuard guard(*this);
    started = start_threads(others);
    if (Status s = set_up(started); !s.ok()) return s.error();
    if (options_.time) deadline_ = Clock::now() + *options_.time;
    open_gate(kOpen);
    work(0);
  }
  try_merge(0, true);  // one thread left: whatever was published last is merged now
  if (error_) return *error_;
  if (failure_) started.judge_failure = "case " + std::to_string(failure_->first) + ": " + failure_->second;
  return started;
}

void Pipeline::record_failure(uint64_t index, std::string what) {
  std::lock_guard lock(failure_mutex_);
  if (!failure_ || index < failure_->first) failure_.emplace(index, std::move(what));
}

// Worker 0 is the calling thread; the others' threads start here and wait at the gate. The
// system may refuse some, and under a cap one starts only with room for its heap too (a 4 GB cap
// held some 500 stacks, and then nothing else): the started ones judge every case, and the report
// is the same, as it is for any number of workers. A refused thread is the last tried, and with
// none started the calling thread judges alone.
PipelineWorkers Pipeline::start_threads(std::vector<std::jthread>& threads) {
  PipelineWorkers started;
  threads.reserve(asked_ - 1);
  const AddressSpaceBudget budget;
  budget.share_arenas();
  for (size_t w = 1; w < asked_; ++w) {
    if ((started.refused = budget.refusal(w))) break;
    try {
      threads.emplace_back([this, w] {
        gate_.wait(kClosed);
        if (gate_.load() == kOpen) work(w);
      });
    } catch (const std::system_error& e) {
      started.refused = e.what();
      break;
    }
  }
  started.started = threads.size() + 1;
  return started;
}

// What the workers share, sized by the ones that started, and what each needs (callbacks_.start).
Status Pipeline::set_up(const PipelineWorkers& started) {
  workers_ = std::vector<WorkerBlocks>(started.started);
  ring_ = std::vector<std::atomic<Block*>>(std::min(started.started * kBlocksAhead, kMaxBlocksInFlight));
  if (callbacks_.start) return callbacks_.start(started);
  return ok_status();
}

void Pipeline::open_gate(Gate to) {
  gate_.store(to);
  gate_.notify_all();
}

void Pipeline::work(size_t worker) {
  for (;;) {
    Block* block = free_block(worker);
    std::optional<Claim> c;
    while (block && !c) {
      const uint32_t seen = epoch_.load();
      if (over()) break;
      c = claim();
      if (!c) wait_for_merge(worker, seen);  // the window of unmerged blocks is full
    }
    if (!c) break;
    judge(*block, *c);
    publish(*block);
    try_merge(worker, false);
  }
  try_merge(worker, true);  // leaves nothing of its own unmerged that another worker waits for
}

// The block merged last, else a new one while the worker has fewer than kBlocksAhead, else it
// waits for the merge. Null once the run is over.
Block* Pipeline::free_block(size_t worker) {
  WorkerBlocks& mine = workers_[worker];
  for (;;) {
    const uint32_t seen = epoch_.load();
    while (!mine.in_flight.empty() && mine.in_flight.front()->merged.load()) {
      mine.free.push_back(mine.in_flight.front());
      mine.in_flight.pop_front();
    }
    if (!mine.free.empty()) {
      Block* block = mine.free.back();
      mine.free.pop_back();
      return block;
    }
    if (mine.all.size() < kBlocksAhead) return mine.all.emplace_back(std::make_unique<Block>(worker)).get();
    if (over()) return nullptr;
    wait_for_merge(worker, seen);
  }
}

// The next block of cases, nullopt when the window of unmerged blocks is full or no case is left
// (claims_over_ then tells).
std::optional<Pipeline::Claim> Pipeline::claim() {
  bool none_left = false;
  std::optional<Claim> c;
  {
    std::lock_guard lock(claim_mutex_);
    const uint64_t end = end_.load();
    if (next_case_ >= end) {
      none_left = true;
    } else if (next_block_ < merged_blocks_.load() + ring_.size()) {
      c = Claim{next_block_++, next_case_, static_cast<size_t>(std::min<uint64_t>(block_size_.load(), end - next_case_))};
      next_case_ += c->count;
    }
  }
  if (none_left && !claims_over_.exchange(true)) wake();
  return c;
}

void Pipeline::judge(Block& block, const Claim& c) {
  if (block.cases.size() < c.count) block.cases.resize(c.count);
  block.number = c.block;
  block.count = c.count;
  const Clock::time_point started = Clock::now();
  for (size_t i = 0; i < c.count; ++i) {
    // Past the end, or a judgement that threw: the merged prefix ends before this case.
    if (!reached(c.first + i, i) || !judge_one(block, c.first + i, i)) {
      for (size_t rest = i; rest < c.count; ++rest) block.cases[rest].judged = false;
      cut(c.first + i);
      return;
    }
  }
  const size_t size = block_size_.load(std::memory_order_relaxed);
  if (size < kMaxBlock && Clock::now() - started < kQuickBlock) {
    block_size_.store(std::min(kMaxBlock, size * 2), std::memory_order_relaxed);
  }
}

// False when the judgement threw: an exception must not leave a worker's thread (std::terminate
// would end the process with every finding so far unwritten), so it is kept for the report.
bool Pipeline::judge_one(Block& block, uint64_t index, size_t in_block) {
  const std::optional<std::string> thrown =
      exception_of([&] { callbacks_.judge(block.owner, index, block.cases[in_block]); });
  if (thrown) record_failure(index, *thrown);
  return !thrown;
}

// The merge of one case; false, with the failure kept, when it threw (a shrink judges cases too):
// the run ends before that case, its earlier findings merged and written.
Result<bool> Pipeline::merge_one(const CaseOutcome& o) {
  Result<bool> merged = false;
  if (const std::optional<std::string> thrown = exception_of([&] { merged = callbacks_.merge(o); })) {
    record_failure(o.index, *thrown);
    return false;
  }
  return merged;
}

// False once the run is over at case `index`: a stop, the deadline, or a cut before it.
bool Pipeline::reached(uint64_t index, size_t in_block) const {
  if (index >= end_.load(std::memory_order_relaxed)) return false;
  if (options_.stop && options_.stop->load(std::memory_order_relaxed)) return false;
  return !(deadline_ && in_block % kClockEvery == 0 && Clock::now() >= *deadline_);
}

void Pipeline::publish(Block& block) {
  block.merged.store(false);
  workers_[block.owner].in_flight.push_back(&block);
  std::atomic<Block*>& slot = ring_[block.number % ring_.size()];
  R3_CHECK(slot.load() == nullptr, "a block is published only once the block a window before it is merged");
  slot.store(&block);
}

// Merges the ready blocks in order unless another thread is merging; that thread looks again after
// letting go, so a block published meanwhile is never left behind. A worker that has just
// published merges only its own blocks (`any_owner` false): the outcomes are read on the core that
// wrote them, and only the merge's own state moves between cores, once a block. The block of
// another worker is left to it (it merges at its next publication), or to a worker that waits.
void Pipeline::try_merge(size_t worker, bool any_owner) {
  while (!closed_.load() && !merging_.exchange(true)) {
    merge_ready(worker, any_owner);
    merging_.store(false);
    const Block* next = ring_[merged_blocks_.load() % ring_.size()].load();
    if (closed_.load() || next == nullptr) return;
    if (!any_owner && next->owner != worker) {
      wake();  // a worker waiting for the merge takes it from here
      return;
    }
  }
}

// Under merging_: the published blocks from the next unmerged one on, in block order.
void Pipeline::merge_ready(size_t worker, bool any_owner) {
  bool any = false;
  for (;;) {
    const uint64_t number = merged_blocks_.load();
    std::atomic<Block*>& slot = ring_[number % ring_.size()];
    Block* block = slot.load();
    if (block == nullptr || closed_.load() || (!any_owner && block->owner != worker)) break;
    for (size_t i = 0; i < block->count && !closed_.load(); ++i) {
      const CaseOutcome& o = block->cases[i];
      if (!o.judged) {
        closed_.store(true);  // time ran out or a signal came: the merged prefix is the run
        break;
      }
      Result<bool> merged = merge_one(o);
      if (!merged.ok()) error_ = merged.error();
      if (!merged.ok() || !*merged) closed_.store(true);
    }
    slot.store(nullptr);
    merged_blocks_.store(number + 1);
    block->merged.store(true);
    any = true;
    wake();
  }
  if (closed_.load()) cut(0);  // the workers stop claiming and judging
  if (any && callbacks_.merged) callbacks_.merged();
}

// No case at or past `at` is judged any more.
void Pipeline::cut(uint64_t at) {
  uint64_t end = end_.load();
  while (at < end && !end_.compare_exchange_weak(end, at)) {
  }
  claims_over_.store(true);
  wake();
}

void Pipeline::wait_for_merge(size_t worker, uint32_t seen) {
  try_merge(worker, true);  // the merge may be waiting for nobody but this thread
  epoch_.wait(seen);
}

void Pipeline::wake() {
  epoch_.fetch_add(1);
  epoch_.notify_all();
}

}  // namespace

Result<PipelineWorkers> run_case_pipeline(const PipelineOptions& options, const PipelineCallbacks& callbacks) {
  Pipeline pipeline(options, callbacks);
  return pipeline.run();
}

}  // namespace r3
