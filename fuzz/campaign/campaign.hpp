// A differential campaign: generated cases, every selected implementation judged on each,
// failures deduplicated by signature, grouped into findings (one per root cause) and written
// to disk as they are found.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/campaign/grouping.hpp"
#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/generate/generator.hpp"
#include "fuzz/io/exit_codes.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/implementation.hpp"

namespace r3 {

struct CampaignOptions {
  uint64_t seed = 1;
  std::optional<int64_t> max_cases;   // stop after this many cases
  std::optional<double> max_seconds;  // or after this long (whichever comes first)
  Mode mode = Mode::mixed;
  GeneratorOptions generator;
  std::string out_dir = "r3fuzz-out";  // where failing cases go; empty: nowhere
  bool strict = false;                 // latent findings fail the campaign too
  // Worker threads judging cases (the calling thread is one). Results are merged in case order,
  // so --cases K gives the same report, findings and files for every count; with max_seconds
  // each worker judges its share of the time.
  int jobs = 1;
  // How the report's replay and export commands name r3fuzz: a shell word, program_word(argv[0])
  // (fuzz/campaign/shell_quote.hpp). Printed only, never judged: every --jobs count prints the same.
  std::string program = "r3fuzz";
};

// One signature's failure: the first case that showed it (shrunk), and how often it recurred.
struct Failure {
  Signature signature;
  Severity severity = Severity::failure;
  std::string detail;
  Case c;                   // as written: shrunk when a shrinker ran, with "expect" and "note" set
  uint64_t case_index = 0;  // the generated case that first showed it
  JudgeMode judged_as = JudgeMode::symbolic;
  int64_t occurrences = 1;  // cases with this signature
  std::string file;         // "" when nothing was written
  size_t finding = 0;       // index of the finding (root cause) it belongs to
};

// The shrinker plugs in here: given a failing case, return a smaller case with the same
// signature for the same implementation (or the case unchanged). Called once per unique
// failure, before the case is written.
using ShrinkHook = CanonicalHook;

struct CampaignProgress {
  int64_t cases = 0;
  size_t unique_failures = 0;
  double elapsed_seconds = 0;
};

// The hooks are called one at a time, by whichever worker thread merges at that moment (the
// calling thread's only when jobs is 1).
struct CampaignHooks {
  ShrinkHook shrink;                                         // empty: report cases as found
  CanonicalHook canonical;                                   // groups failures into findings (grouping.hpp)
  std::function<void(const CampaignProgress&)> on_progress;  // a few times a second
  // Set (by SIGINT, SIGTERM, SIGHUP): stop after the current case; a judgement the signal cut
  // short (an external adapter's wait ends at once) is dropped, not reported.
  const std::atomic<bool>* stop = nullptr;
  // Implementations for one worker (jobs > 1): each worker judges with its own, so an external
  // adapter runs one process per worker, and the ones run_campaign is given shrink (the merge's).
  // With one worker, that worker judges and shrinks with those, in turn.
  std::function<Result<std::vector<std::unique_ptr<Implementation>>>()> make_impls;
};

// Counts of generated cases and judgements. Keys are stable words, so the report is deterministic.
struct Distribution {
  std::map<std::string, int64_t> path, padding, sp, size, calls;
  std::map<std::string, std::map<std::string, int64_t>> branch;   // per implementation
  std::map<std::string, std::map<std::string, int64_t>> verdict;  // per implementation: "pass", "capacity (failure)"
  std::map<std::string, int64_t> judged;                          // "concrete", "symbolic", "skipped"
};

// Wall-clock figures: not reproducible, so reports leave them out unless asked.
struct CampaignTiming {
  double elapsed_seconds = 0;
  std::map<std::string, double> first_failure_seconds;    // per implementation
  std::map<std::string, int64_t> first_failure_cases;     // cases run until then, per implementation
};

struct CampaignReport {
  CampaignOptions options;
  std::vector<std::string> implementations;
  int64_t cases = 0;
  bool interrupted = false;
  Distribution distribution;
  std::vector<Failure> failures;  // one per signature, in order of discovery
  std::vector<Finding> findings;  // one per root cause, in order of discovery
  CampaignTiming timing;
  // The workers that judged: options.jobs, or as many as the system started threads for, and
  // then its words for the first it refused. In no report, which is the same for every count.
  size_t workers = 1;
  std::optional<std::string> threads_refused;
  // A judgement that threw ("case N: what", case_pipeline.hpp): the report covers the cases
  // before it, and the run exits kInternalErrorExit.
  std::optional<std::string> internal_error;
  bool failed() const;            // any failure, or any latent finding under --strict
  int64_t occurrences(const Finding& f) const;  // cases over all its failures
  int exit_code() const { return internal_error ? kInternalErrorExit : failed() ? kExitFinding : 0; }
};

// File name of a failure: its signature with '/' turned into '-'.
std::string finding_file_name(const Signature& signature);

// File name of finding number `number` (1-based): "finding-1-wrong_rows.json".
std::string finding_file_name(size_t number, const Finding& f);

// Runs the campaign. Errors: a failing case could not be written, or (a bug in r3fuzz) the
// generator produced an invalid case.
Result<CampaignReport> run_campaign(const CampaignOptions& options,
                                    const std::vector<std::unique_ptr<Implementation>>& impls,
                                    const CampaignHooks& hooks = {});

}  // namespace r3
