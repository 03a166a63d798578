#include "fuzz/campaign/case_pipeline.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
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
    const Status s = run_case_pipeline(o, failed.callbacks([](const CaseOutcome& c) -> Result<bool> {
      if (c.index == 777) return Error{"cannot write case 777"};
      return true;
    }));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "cannot write case 777");
    expect_prefix(failed.merged, 778);
  }
}

// A stop (Ctrl-C) or the deadline ends an unbounded run: what was merged is a prefix of the cases.
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
    t.deadline = std::chrono::steady_clock::now() + 30ms;
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
    if (workers > 1) EXPECT_GT(judged_during_slow_merge, 0u) << workers << " workers";
    if (workers == 1) EXPECT_EQ(judged_during_slow_merge, 0u) << "one worker merges between its own cases";
  }
}

}  // namespace
}  // namespace r3
