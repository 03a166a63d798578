#include "fuzz/shrink/shrink.hpp"

#include <chrono>
#include <cstdio>
#include <unordered_set>
#include <vector>

#include "fuzz/shrink/case_key.hpp"
#include "fuzz/shrink/engine_shrink.hpp"
#include "fuzz/shrink/passes.hpp"
#include "reference/case_measure.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

class Shrinker {
 public:
  Shrinker(const CaseJudge& judge, const ShrinkOptions& options, ShrinkResult& result)
      : judge_(judge), options_(options), result_(result), start_(std::chrono::steady_clock::now()) {}

  void run() {
    // No pass changes the engine: the failing case's engine keeps its passes throughout.
    const std::vector<ShrinkPass> passes = shrink_passes(result_.minimal.engine, options_.allow_path_change);
    for (;;) {
      ++result_.stats.rounds;
      bool changed = false;
      for (const ShrinkPass& pass : passes) {
        while (reduce_once(pass)) changed = true;
        if (stopped_) return;
      }
      if (!changed) return;
    }
  }

 private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  bool out_of_budget() {
    if (options_.stop && options_.stop->load(std::memory_order_relaxed)) {
      result_.stop = ShrinkStop::interrupted;
    } else if (result_.stats.judged >= options_.max_judgements) {
      result_.stop = ShrinkStop::judgement_limit;
    } else if (elapsed() >= options_.max_seconds) {
      result_.stop = ShrinkStop::time_limit;
    } else {
      return false;
    }
    stopped_ = true;
    return true;
  }

  bool same_bug(const Judgement& j, const Case& c) const {
    if (!j.failed()) return false;
    if (options_.keep_severity && j.severity != result_.judgement.severity) return false;
    const Signature s = signature_of(j, c);
    const Signature& target = result_.signature;
    // The branch follows the path, so a path change keeps only the implementation and verdict.
    if (options_.allow_path_change) return s.impl == target.impl && s.verdict == target.verdict;
    return s == target;
  }

  // Tries the pass's candidates in order; keeps the first that fails the same way.
  bool reduce_once(const ShrinkPass& pass) {
    candidates_.clear();
    pass.propose(result_.minimal, candidates_);
    for (Case& candidate : candidates_) {
      if (out_of_budget()) return false;
      if (!validate(candidate).ok()) {
        ++result_.stats.invalid_skipped;
        continue;
      }
      // A smaller case the engine cannot run is no reproducer of a bug it can hit.
      if (!in_profile(candidate, options_.profile)) {
        ++result_.stats.outside_profile_skipped;
        continue;
      }
      std::string key = case_key(candidate);
      if (not_reproducing_.count(key)) continue;
      ++result_.stats.judged;
      Result<Judgement> j = judge_(candidate);
      if (!j.ok()) ++result_.stats.judge_errors;
      if (!j.ok() || !same_bug(*j, candidate)) {
        not_reproducing_.insert(std::move(key));
        continue;
      }
      ++result_.stats.accepted;
      if (options_.progress) {
        std::string line = "shrink: " + std::string(pass.name) + ":";
        for (const std::string& change : describe_changes(result_.minimal, candidate)) line += " " + change + ";";
        line.back() = ' ';
        options_.progress(line + "(" + std::to_string(result_.stats.judged) + " judged)");
      }
      result_.minimal = std::move(candidate);
      result_.judgement = std::move(j).value();
      return true;
    }
    return false;
  }

  const CaseJudge& judge_;
  const ShrinkOptions& options_;
  ShrinkResult& result_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Case> candidates_;
  std::unordered_set<std::string> not_reproducing_;
  bool stopped_ = false;
};

}  // namespace

std::string_view to_string(ShrinkStop stop) {
  switch (stop) {
    case ShrinkStop::fixpoint: return "fixpoint";
    case ShrinkStop::time_limit: return "time limit";
    case ShrinkStop::judgement_limit: return "judgement limit";
    case ShrinkStop::not_failing: return "not failing";
    case ShrinkStop::interrupted: return "interrupted";
  }
  return "?";
}

Result<ShrinkResult> shrink_case(const Case& failing, const CaseJudge& judge, const ShrinkOptions& options) {
  R3_TRY_STATUS(validate(failing));
  if (Status inside = check_profile(failing, options.profile); !inside.ok()) {
    return Error{"the case lies outside the profile it is shrunk under: " + inside.error().message};
  }
  if (!engine_shrink(failing.engine)) {
    return Error{"engine " + std::string(failing.engine.name()) + ": has no shrink part, so its cases cannot be shrunk"};
  }
  const auto start = std::chrono::steady_clock::now();
  ShrinkResult result;
  result.minimal = failing;
  // The note and the expectation describe the input, not the bug: they do not survive.
  result.minimal.note.clear();
  result.minimal.expect.reset();
  R3_TRY(result.judgement, judge(result.minimal));
  result.signature = signature_of(result.judgement, result.minimal);
  if (!result.judgement.failed()) {
    result.minimal = failing;
    result.stop = ShrinkStop::not_failing;
    return result;
  }
  Shrinker(judge, options, result).run();
  result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (options.progress) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f", result.stats.seconds);
    options.progress("shrink: stopped at " + std::string(to_string(result.stop)) + " after " +
                     std::to_string(result.stats.rounds) + " rounds, " + std::to_string(result.stats.judged) +
                     " judged, " + std::to_string(result.stats.accepted) + " reductions, " + seconds + " s: " +
                     summarize(result.minimal) + " (" + result.signature.text() + ")");
  }
  return result;
}

}  // namespace r3
