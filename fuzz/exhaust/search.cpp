#include "fuzz/exhaust/search.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fuzz/exhaust/case_space.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

struct Found {
  int64_t unit = kNone;
  int64_t position_in_unit = 0;
  Case c;
  std::string detail;
};

struct UnitTally {
  int64_t unit = 0;  // its index in the space's order
  int64_t checked = 0;
  int64_t invalid = 0;
};

// Shared by the workers. Units are made one at a time by the stream, each with its index in the
// space's order; once a counterexample is found, a worker that draws a later unit stops, since
// neither it nor any unit after it can hold a smaller one. Every unit before the final best is
// therefore checked whole, which makes the result independent of timing. Nothing but the
// per-unit tallies (24 bytes a unit, each worker its own) grows with the space.
struct SearchState {
  const ExhaustBounds& bounds;
  const CaseCheck& check;
  std::mutex stream_mutex;  // guards stream and units_drawn
  UnitStream stream;
  int64_t units_drawn = 0;
  std::atomic<int64_t> best_unit{kNone};
  std::atomic<int64_t> cases_done{0};
  std::atomic<int64_t> units_done{0};

  SearchState(const ExhaustBounds& b, const CaseCheck& c) : bounds(b), check(c), stream(b) {}

  void lower_best(int64_t unit) {
    int64_t seen = best_unit.load();
    while (unit < seen && !best_unit.compare_exchange_weak(seen, unit)) {
    }
  }

  // The next unit and its index; false when none is left.
  bool draw(CaseUnit& unit, int64_t& u) {
    std::lock_guard lock(stream_mutex);
    if (!stream.next(unit)) return false;
    u = units_drawn++;
    return true;
  }

  // A check that throws (out of memory under a cap, or a bug) must not leave a worker's thread:
  // std::terminate would end the process. It stops every worker, and the report says so rather
  // than "no difference".
  std::mutex failure_mutex;
  std::optional<std::string> failure;  // under failure_mutex
  std::atomic<bool> failed{false};

  void work(Found& found, std::vector<UnitTally>& tally) {
    std::optional<std::string> thrown = exception_of([&] { search(found, tally); });
    if (!thrown) return;
    std::lock_guard lock(failure_mutex);
    if (!failure) failure = std::move(thrown);
    failed.store(true);
  }

  // `tally` gets one entry per unit checked, in increasing unit order.
  void search(Found& found, std::vector<UnitTally>& tally) {
    CaseUnit unit;
    int64_t u = 0;
    while (!failed.load() && draw(unit, u)) {
      if (u > best_unit.load()) return;
      UnitTally& t = tally.emplace_back(UnitTally{u, 0, 0});
      int64_t position = 0;
      for_each_case(unit, bounds, [&](const Case& c) {
        if (!validate(c).ok()) return ++t.invalid, true;
        auto step = derive_step(c);
        if (!step.ok()) return ++t.invalid, true;
        ++t.checked;
        cases_done.fetch_add(1, std::memory_order_relaxed);
        if (auto difference = check(c, *step)) {
          if (u < found.unit) found = {u, position, c, std::move(*difference)};
          lower_best(u);
          return false;
        }
        ++position;
        return true;
      });
      units_done.fetch_add(1, std::memory_order_relaxed);
    }
  }
};

}  // namespace

ExhaustReport exhaust_search(const ExhaustBounds& bounds, const CaseCheck& check, const ExhaustOptions& options) {
  const int64_t units = count_space(bounds).units;  // for the progress line
  SearchState state(bounds, check);
  const int jobs = std::max(1, options.jobs);
  std::vector<Found> found(static_cast<size_t>(jobs));
  std::vector<std::vector<UnitTally>> tallies(static_cast<size_t>(jobs));
  std::mutex mutex;
  std::condition_variable finished;
  int running = jobs;
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(jobs));
  std::optional<std::string> refused;
  for (int i = 0; i < jobs && !refused; ++i) {
    try {
      workers.emplace_back([&, i] {
        state.work(found[static_cast<size_t>(i)], tallies[static_cast<size_t>(i)]);
        std::lock_guard lock(mutex);
        --running;
        finished.notify_one();
      });
    } catch (const std::system_error& e) {
      // The system gives no more threads (a cap on address space holds ~500 stacks in 4 GB): the
      // started ones do the work, with the same result, since it does not depend on their number.
      refused = e.what();
      std::lock_guard lock(mutex);
      running -= jobs - i;
    }
  }
  if (workers.empty()) {
    state.work(found[0], tallies[0]);  // not even one: the calling thread searches
    running = 0;
  }
  {
    std::unique_lock lock(mutex);
    while (running > 0) {
      finished.wait_for(lock, std::chrono::milliseconds(200));
      if (options.progress && running > 0) {
        options.progress({state.cases_done.load(), state.units_done.load(), units});
      }
    }
  }
  for (auto& w : workers) w.join();

  ExhaustReport report;
  report.jobs = std::max<int>(1, static_cast<int>(workers.size()));
  report.threads_refused = refused;
  report.internal_error = state.failure;
  const Found* best = nullptr;
  for (const Found& f : found)
    if (f.unit != kNone && (!best || f.unit < best->unit)) best = &f;
  const int64_t last_unit = best ? best->unit : kNone;
  for (const std::vector<UnitTally>& tally : tallies) {
    for (const UnitTally& t : tally) {
      if (t.unit >= last_unit) break;  // each worker's units come in increasing order
      report.cases += t.checked;
      report.invalid += t.invalid;
    }
  }
  if (best) {
    report.counterexample = Counterexample{best->c, best->detail, report.cases + best->position_in_unit};
    report.cases = report.counterexample->position + 1;
  }
  return report;
}

}  // namespace r3
