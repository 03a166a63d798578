#include "fuzz/exhaust/search.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
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
  int64_t checked = 0;
  int64_t invalid = 0;
};

// Shared by the workers. Units are handed out by an atomic counter; a unit after the best
// counterexample so far is skipped, since it cannot hold a smaller one. Every unit before the
// final best is therefore checked whole, which makes the result independent of timing.
struct SearchState {
  const std::vector<CaseUnit>& units;
  const ExhaustBounds& bounds;
  const CaseCheck& check;
  std::vector<UnitTally> tally;
  std::atomic<int64_t> next_unit{0};
  std::atomic<int64_t> best_unit{kNone};
  std::atomic<int64_t> cases_done{0};
  std::atomic<int64_t> units_done{0};

  void lower_best(int64_t unit) {
    int64_t seen = best_unit.load();
    while (unit < seen && !best_unit.compare_exchange_weak(seen, unit)) {
    }
  }

  void work(Found& found) {
    for (;;) {
      const int64_t u = next_unit.fetch_add(1);
      if (u >= static_cast<int64_t>(units.size())) return;
      if (u > best_unit.load()) continue;
      UnitTally& t = tally[static_cast<size_t>(u)];
      int64_t position = 0;
      for_each_case(units[static_cast<size_t>(u)], bounds, [&](const Case& c) {
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
  const std::vector<CaseUnit> units = enumerate_units(bounds);
  SearchState state{units, bounds, check, std::vector<UnitTally>(units.size())};
  const int jobs = std::max(1, options.jobs);
  std::vector<Found> found(static_cast<size_t>(jobs));
  std::mutex mutex;
  std::condition_variable finished;
  int running = jobs;
  std::vector<std::thread> workers;
  for (int i = 0; i < jobs; ++i) {
    workers.emplace_back([&, i] {
      state.work(found[static_cast<size_t>(i)]);
      std::lock_guard lock(mutex);
      --running;
      finished.notify_one();
    });
  }
  {
    std::unique_lock lock(mutex);
    while (running > 0) {
      finished.wait_for(lock, std::chrono::milliseconds(200));
      if (options.progress && running > 0) {
        options.progress({state.cases_done.load(), state.units_done.load(), static_cast<int64_t>(units.size())});
      }
    }
  }
  for (auto& w : workers) w.join();

  ExhaustReport report;
  const Found* best = nullptr;
  for (const Found& f : found)
    if (f.unit != kNone && (!best || f.unit < best->unit)) best = &f;
  const int64_t last_unit = best ? best->unit : static_cast<int64_t>(units.size());
  for (int64_t u = 0; u < last_unit; ++u) {
    report.cases += state.tally[static_cast<size_t>(u)].checked;
    report.invalid += state.tally[static_cast<size_t>(u)].invalid;
  }
  if (best) {
    report.counterexample = Counterexample{best->c, best->detail, report.cases + best->position_in_unit};
    report.cases = report.counterexample->position + 1;
  }
  return report;
}

}  // namespace r3
