#include "fuzz/campaign/case_pipeline.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace r3 {
namespace {

using namespace std::chrono_literals;

// Work that takes a case-dependent time, so blocks finish out of order.
uint64_t busy_work(uint64_t index) {
  uint64_t x = index * 0x9e3779b97f4a7c15ull + 1;
  const uint64_t rounds = 50 + (x >> 57) * 40;
  for (uint64_t i = 0; i < rounds; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

// What the pipeline called: the cases merged (in call order), each case's judging worker and
// thread, so the properties below read it after the run.
struct Recorder {
  explicit Recorder(uint64_t cases) : judged_by(cases, -1), thread_of(cases) {}
  std::vector<uint64_t> merged;
  std::vector<int> judged_by;
  std::vector<std::thread::id> thread_of;
  std::atomic<uint64_t> judgements{0};

  PipelineCallbacks callbacks(std::function<Result<bool>(const CaseOutcome&)> merge = {}) {
    PipelineCallbacks c;
    c.judge = [this](size_t worker, uint64_t index, CaseOutcome& out) {
      out.judged = true;
      out.index = index;
      out.keys.sp = busy_work(index) & 1;  // something read back by the merge
      if (index < judged_by.size()) {
        judged_by[index] = static_cast<int>(worker);
        thread_of[index] = std::this_thread::get_id();
      }
      ++judgements;
    };
    c.merge = [this, merge](const CaseOutcome& o) -> Result<bool> {
      EXPECT_EQ(o.keys.sp, static_cast<bool>(busy_work(o.index) & 1)) << "case " << o.index << " merged as another's";
      merged.push_back(o.index);
      return merge ? merge(o) : Result<bool>(true);
    };
    return c;
  }
};

void expect_prefix(const std::vector<uint64_t>& merged, uint64_t length) {
  ASSERT_EQ(merged.size(), length);
  for (uint64_t i = 0; i < length; ++i) ASSERT_EQ(merged[i], i) << "merged out of order";
}

// However many workers judge, every case is judged once and merged once, in case order, and
// each worker's cases are judged on one thread (its scratch is that thread's).
TEST(CasePipeline, EveryCaseIsMergedOnceInCaseOrder) {
  for (size_t workers : {1, 2, 3, 5}) {
    for (uint64_t cases : {0, 1, 7, 5000}) {
      Recorder r(cases);
      PipelineOptions o;
      o.workers = workers;
      o.cases = cases;
      ASSERT_TRUE(run_case_pipeline(o, r.callbacks()).ok());
      expect_prefix(r.merged, cases);
      EXPECT_EQ(r.judgements.load(), cases);
      std::vector<std::thread::id> thread_of_worker(workers);
      for (uint64_t i = 0; i < cases; ++i) {
        ASSERT_GE(r.judged_by[i], 0);
        std::thread::id& t = thread_of_worker[static_cast<size_t>(r.judged_by[i])];
        if (t == std::thread::id()) t = r.thread_of[i];
        EXPECT_EQ(r.thread_of[i], t) << "worker " << r.judged_by[i] << " judged on two threads";
      }
    }
  }
}

// A merge that ends the run (a signal cut the case short) or fails (a file could not be written)
// ends it at that case: nothing after it is merged, and the error comes back.
TEST(CasePipeline, AMergeThatEndsTheRunEndsItThere) {
  for (size_t workers : {1, 2, 4}) {
    Recorder ended(4000);
    PipelineOptions o;
    o.workers = workers;
    o.cases = 4000;
    ASSERT_TRUE(run_case_pipeline(o, ended.callbacks([](const CaseOutcome& c) { return Result<bool>(c.index != 1234); })).ok());
    expect_prefix(ended.merged, 1235);

    Recorder failed(4000);
    const Result<PipelineWorkers> s = run_case_pipeline(o, failed.callbacks([](const CaseOutcome& c) -> Result<bool> {
      if (c.index == 777) return Error{"cannot write case 777"};
      return true;
    }));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "cannot write case 777");
    expect_prefix(failed.merged, 778);
  }
}

// A stop (Ctrl-C) or the time ends an unbounded run: what was merged is a prefix of the cases.
// A judgement that throws (std::bad_alloc under a memory cap) on a worker's thread would end the
// process through std::terminate, losing every finding so far. The run stops before the earliest
// case that threw, as at a stop, merges the prefix and says which case threw and what.
TEST(CasePipeline, AJudgementThatThrowsEndsTheRunBeforeItsCase) {
  for (size_t workers : {1, 3}) {
    Recorder r(5000);
    PipelineCallbacks c = r.callbacks();
    const auto judge = c.judge;
    c.judge = [judge](size_t worker, uint64_t index, CaseOutcome& out) {
      if (index == 37 || index == 20) throw std::bad_alloc();
      judge(worker, index, out);
    };
    PipelineOptions o;
    o.workers = workers;
    o.cases = 5000;
    auto ran = run_case_pipeline(o, c);
    ASSERT_TRUE(ran.ok()) << ran.error().message;
    EXPECT_EQ(ran->judge_failure, "case 20: std::bad_alloc") << workers << " workers";
    expect_prefix(r.merged, 20);
  }
}

// The merge judges too (a shrink): a merge that throws ends the run before its case, the same way.
TEST(CasePipeline, AMergeThatThrowsEndsTheRunBeforeItsCase) {
  Recorder r(1000);
  PipelineOptions o;
  o.workers = 2;
  o.cases = 1000;
  auto ran = run_case_pipeline(o, r.callbacks([](const CaseOutcome& out) -> Result<bool> {
    if (out.index == 400) throw std::runtime_error("shrink ran out of memory");
    return true;
  }));
  ASSERT_TRUE(ran.ok()) << ran.error().message;
  EXPECT_EQ(ran->judge_failure, "case 400: shrink ran out of memory");
  ASSERT_EQ(r.merged.size(), 401u);  // the merge callback saw case 400 before it threw
  EXPECT_EQ(r.merged.back(), 400u);
}

TEST(CasePipeline, AStopOrTheDeadlineLeavesAPrefix) {
  for (size_t workers : {1, 3}) {
    std::atomic<bool> stop{false};
    Recorder stopped(0);
    PipelineOptions o;
    o.workers = workers;
    o.stop = &stop;
    ASSERT_TRUE(run_case_pipeline(o, stopped.callbacks([&](const CaseOutcome& c) {
      if (c.index == 3000) stop = true;
      return Result<bool>(true);
    })).ok());
    expect_prefix(stopped.merged, stopped.merged.size());
    EXPECT_GT(stopped.merged.size(), 3000u);

    Recorder timed(0);
    PipelineOptions t;
    t.workers = workers;
    t.time = 30ms;
    ASSERT_TRUE(run_case_pipeline(t, timed.callbacks()).ok());
    expect_prefix(timed.merged, timed.merged.size());
    EXPECT_GT(timed.merged.size(), 0u);
  }
}

// No barrier: while one worker is held up by a slow case, the others go on judging (up to the
// window of unmerged blocks, thousands of cases), and the run ends once the case is done.
TEST(CasePipeline, ASlowCaseDoesNotHoldUpTheOtherWorkers) {
  std::mutex m;
  std::condition_variable cv;
  std::atomic<uint64_t> others{0};
  bool released = false;
  PipelineOptions o;
  o.workers = 2;
  o.cases = 20000;
  std::vector<uint64_t> merged;
  PipelineCallbacks c;
  c.judge = [&](size_t, uint64_t index, CaseOutcome& out) {
    out.judged = true;
    out.index = index;
    if (index != 0) {
      if (++others == 500) {
        std::lock_guard lock(m);
        released = true;
        cv.notify_all();
      }
      return;
    }
    std::unique_lock lock(m);
    // The timeout only keeps a broken pipeline from hanging the suite; the check is below.
    cv.wait_for(lock, 20s, [&] { return released; });
  };
  c.merge = [&](const CaseOutcome& out) -> Result<bool> {
    merged.push_back(out.index);
    return true;
  };
  ASSERT_TRUE(run_case_pipeline(o, c).ok());
  EXPECT_TRUE(released) << "the other worker stopped at " << others.load() << " cases while case 0 was judged";
  expect_prefix(merged, 20000);
}

// A merge that takes long (a shrink) holds up no worker until the window is full, and a worker
// that finds the window full waits for the merge rather than spinning or overrunning it.
TEST(CasePipeline, ASlowMergeLetsTheWorkersRunAheadThenWait) {
  for (size_t workers : {1, 2, 3}) {
    Recorder r(30000);
    PipelineOptions o;
    o.workers = workers;
    o.cases = 30000;
    uint64_t judged_during_slow_merge = 0;
    ASSERT_TRUE(run_case_pipeline(o, r.callbacks([&](const CaseOutcome& c) {
      if (c.index == 10) {
        const uint64_t before = r.judgements.load();
        std::this_thread::sleep_for(100ms);
        judged_during_slow_merge = r.judgements.load() - before;
      }
      return Result<bool>(true);
    })).ok());
    expect_prefix(r.merged, 30000);
    // Braced: EXPECT_* expands to an if/else, which an unbraced if would make ambiguous (-Wdangling-else).
    if (workers > 1) {
      EXPECT_GT(judged_during_slow_merge, 0u) << workers << " workers";
    } else {
      EXPECT_EQ(judged_during_slow_merge, 0u) << "one worker merges between its own cases";
    }
  }
}

// `start` runs once on the calling thread, before any case, with every worker asked for when
// the system starts them all; an error from it ends the run before any case is judged.
TEST(CasePipeline, StartRunsOnceBeforeAnyCaseAndItsErrorEndsTheRun) {
  for (size_t workers : {1, 4}) {
    Recorder r(500);
    PipelineOptions o;
    o.workers = workers;
    o.cases = 500;
    PipelineCallbacks c = r.callbacks();
    std::vector<PipelineWorkers> calls;
    uint64_t judged_before_start = 0;
    const std::thread::id caller = std::this_thread::get_id();
    c.start = [&](const PipelineWorkers& w) {
      calls.push_back(w);
      judged_before_start = r.judgements.load();
      EXPECT_EQ(std::this_thread::get_id(), caller);
      return ok_status();
    };
    const Result<PipelineWorkers> ran = run_case_pipeline(o, c);
    ASSERT_TRUE(ran.ok());
    EXPECT_EQ(ran->started, workers);
    EXPECT_FALSE(ran->refused.has_value());
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].started, workers);
    EXPECT_EQ(judged_before_start, 0u);
    expect_prefix(r.merged, 500);

    Recorder refused(500);
    PipelineCallbacks e = refused.callbacks();
    e.start = [](const PipelineWorkers&) -> Status { return Error{"worker 2: pipe: Too many open files"}; };
    const Result<PipelineWorkers> failed = run_case_pipeline(o, e);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().message, "worker 2: pipe: Too many open files");
    EXPECT_EQ(refused.judgements.load(), 0u);
    EXPECT_TRUE(refused.merged.empty());
  }
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitizer = true;
#else
constexpr bool kSanitizer = false;
#endif
#else
constexpr bool kSanitizer = false;
#endif

// The bytes of address space this process maps now.
size_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// What a child found: its exit status says which check failed (0: none).
enum ChildCheck : int { kAllGood = 0, kRunFailed = 10, kNotAPrefix, kStartedWrong, kNoRefusal, kWorkerOutOfRange };

struct ChildRun {
  int check = -1;  // a ChildCheck, or the child's death
  size_t started = 0;
  std::string refused;
};

// 1024 workers asked for, each thread with a stack of `stack` bytes, under a cap of `room`
// bytes more than the process maps (none: no cap): the pipeline must judge every case on the
// threads it started (on the calling thread alone when it started none), and say why it started
// no more. Run in a child, since neither the cap nor the stack size can be undone.
ChildRun run_in_child(size_t stack, std::optional<size_t> room) {
  int report[2];
  if (pipe(report) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack);
    pthread_setattr_default_np(&attr);  // std::thread's stacks, whatever ulimit -s says
    const uint64_t cases = 3000;
    Recorder r(cases);
    PipelineOptions o;
    o.workers = 1024;
    o.cases = cases;
    PipelineCallbacks c = r.callbacks();
    size_t told = 0;
    c.start = [&](const PipelineWorkers& w) {
      told = w.started;
      return ok_status();
    };
    if (room) {
      const rlimit cap{mapped_bytes() + *room, RLIM_INFINITY};
      if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(126);
    }
    const Result<PipelineWorkers> ran = run_case_pipeline(o, c);
    int check = kAllGood;
    if (!ran.ok()) {
      check = kRunFailed;
    } else if (r.merged.size() != cases) {
      check = kNotAPrefix;
    } else {
      for (uint64_t i = 0; i < cases && check == kAllGood; ++i) {
        if (r.merged[i] != i) check = kNotAPrefix;
        if (r.judged_by[i] < 0 || static_cast<size_t>(r.judged_by[i]) >= ran->started) check = kWorkerOutOfRange;
      }
      if (check == kAllGood && (ran->started >= 1024 || told != ran->started)) check = kStartedWrong;
      if (check == kAllGood && !ran->refused) check = kNoRefusal;
    }
    const size_t started = ran.ok() ? ran->started : 0;
    const std::string refused = ran.ok() ? ran->refused.value_or("") : ran.error().message;
    if (write(report[1], &started, sizeof started) != sizeof started) _exit(125);
    if (write(report[1], refused.data(), refused.size()) != static_cast<ssize_t>(refused.size())) _exit(125);
    _exit(check);
  }
  close(report[1]);
  ChildRun out;
  if (read(report[0], &out.started, sizeof out.started) != sizeof out.started) out.started = 0;
  char buffer[512];
  for (ssize_t n; (n = read(report[0], buffer, sizeof buffer)) > 0;) out.refused.append(buffer, static_cast<size_t>(n));
  close(report[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  out.check = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

// --jobs 1024 under ulimit -v: a worker is started only with room for its stack and a heap (8 MiB
// each, 256 MiB for the run, 64 MiB for each malloc arena), else the last threads' stacks would
// leave the others nothing to allocate. The started ones judge every case, in case order.
TEST(CasePipeline, UnderACapWorkersStartOnlyWithRoomForTheirHeap) {
  if (kSanitizer) GTEST_SKIP() << "a sanitizer reserves terabytes of address space: no cap fits it";
  const std::string why = "the address-space limit (ulimit -v) leaves no room for another: each worker takes its 8 "
                          "MiB stack and 8 MiB of heap";
  ChildRun r = run_in_child(size_t{8} << 20, size_t{600} << 20);
  EXPECT_EQ(r.check, kAllGood) << "a ChildCheck; " << r.started << " workers started: " << r.refused;
  EXPECT_GT(r.started, 1u) << "room for some threads, not for 1023";
  EXPECT_EQ(r.refused, why);
  // Room for no thread at all: the calling thread judges alone.
  r = run_in_child(size_t{8} << 20, size_t{12} << 20);
  EXPECT_EQ(r.check, kAllGood) << "a ChildCheck; " << r.started << " workers started: " << r.refused;
  EXPECT_EQ(r.started, 1u);
  EXPECT_EQ(r.refused, why);
}

// Without a cap the system may still refuse threads (here stacks of 64 TiB: half of the 128 TiB
// a process addresses, refused outright unless memory is overcommitted, and then held once at
// most): std::thread throws, and the started ones judge every case.
TEST(CasePipeline, ThreadsTheSystemRefusesLeaveTheWorkToThoseItStarted) {
  if (kSanitizer) GTEST_SKIP() << "a sanitizer's shadow leaves no room for such a stack";
  const ChildRun r = run_in_child(size_t{64} << 40, std::nullopt);
  EXPECT_EQ(r.check, kAllGood) << "a ChildCheck; " << r.started << " workers started: " << r.refused;
  EXPECT_LE(r.started, 2u);
  EXPECT_EQ(r.refused, "Resource temporarily unavailable");
}

}  // namespace
}  // namespace r3
