// r3fuzz exhaust [--max-dp 4] [--max-tp 4] [--max-tokens 9] [--max-m 9] [--impl A [--against B]]
//                [--fault NAME] [--mode symbolic|concrete|mixed] [--jobs N]
// Every case of a bounded space (fuzz/exhaust/case_space.hpp), checked in parallel: A against
// the reference, or A against B. Prints the smallest counterexample in the space's order or
// "no difference within bounds: N cases checked". Exit 0 none, 1 a difference, 2 bad input.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <thread>

#include "fuzz/cli/commands.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "fuzz/exhaust/trace_space.hpp"
#include "fuzz/io/exit_codes.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/flag_error.hpp"
#include "fuzz/cli/number_flags.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/exhaust/case_space.hpp"
#include "fuzz/exhaust/comparison.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"
#include "fuzz/exhaust/search.hpp"
#include "fuzz/implementations/registry.hpp"
#include "reference/engine_model.hpp"

namespace r3 {
namespace {

// The largest space exhaust takes. The search makes its units one at a time, keeping a 24-byte
// tally per unit checked, and checks some 10^5 to 10^6 cases a second, so this keeps memory
// under 120 MB and a run to hours. Larger bounds are refused before anything is made or listed:
// count_space() counts every engine's space without enumerating it.
inline constexpr int64_t kMaxCases = 1'000'000'000;
inline constexpr int64_t kMaxUnits = 5'000'000;

// 2197609381 as "2,197,609,381".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

Status check_space_size(const ExhaustBounds& b) {
  const SpaceSize size = count_space(b);
  if (size.cases <= kMaxCases && size.units <= kMaxUnits) return ok_status();
  return Error{"the bounds " + describe(b) + " enumerate up to " + grouped(size.cases) + " cases in " + grouped(size.units) +
               " token layouts; at most " + grouped(kMaxCases) + " cases in " + grouped(kMaxUnits) +
               " layouts: lower --max-dp, --max-tp, --max-tokens or --max-m"};
}

struct ExhaustFlags {
  ExhaustBounds bounds;
  std::string impl;  // default: the profile's engine's fixed policy (EngineModel::fixed_policy)
  std::string against;
  std::string fault;
  Mode mode = Mode::symbolic;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool traces = false;  // tiny serving traces instead of cases (fuzz/exhaust/trace_space.hpp)
  bool profile_given = false;  // --profile on the command line (else --traces takes each --impl's engine's)
  TraceSpaceBounds trace_bounds;
};

// exhaust --traces: every trace of the tiny space for the implementation (default: the profile's
// engines' fixed lifecycle models); exit 1 at the first difference, printed as a trace file.
Result<int> exhaust_traces_command(const ExhaustFlags& f) {
  std::vector<std::string> names;
  if (!f.impl.empty()) names.push_back(f.impl);
  else names = fixed_trace_implementations(f.bounds.profile);
  if (names.empty()) return Error{"--traces: no engine of profile " + std::string(to_string(f.bounds.profile)) + " has a lifecycle model"};
  int code = 0;
  for (const std::string& name : names) {
    Result<TraceImplementation> impl = make_trace_implementation(name);
    if (!impl) return Error{"--impl " + name + ": " + impl.error().message};
    // An implementation named without --profile runs under its own engine's first profile.
    const bool own_profile = f.bounds.profile.is_any() || (!f.impl.empty() && !f.profile_given);
    const Profile profile = own_profile ? Profile::of(impl->engine, 0) : f.bounds.profile;
    R3_TRY(const TraceExhaustResult r, exhaust_traces(*impl, profile, f.trace_bounds));
    std::cout << terminal_safe(name) << ": " << r.visited << " valid traces, " << r.judged << " judged";
    if (f.trace_bounds.copy_orders) std::cout << " (" << r.late_orders << " with a copy landing late)";
    std::cout << " (profile " << to_string(profile) << ", <= " << f.trace_bounds.max_requests << " requests, <= "
              << f.trace_bounds.max_steps << " steps): ";
    if (!r.counterexample) {
      std::cout << "no difference within bounds\n";
      continue;
    }
    code = 1;
    std::cout << terminal_safe(r.detail) << "\n" << terminal_safe(trace_to_json_text(*r.counterexample), true);
  }
  return code;
}

std::string progress_line(const ExhaustProgress& p, double seconds) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "\r%lld cases, %lld/%lld units, %.0f cases/s, %.1fs   ",
                static_cast<long long>(p.cases_done), static_cast<long long>(p.units_done),
                static_cast<long long>(p.units), seconds > 0 ? p.cases_done / seconds : 0.0, seconds);
  return buf;
}

Result<int> exhaust_command(ExhaustFlags f) {
  if (f.jobs < 1 || f.jobs > 1024) return Error{"--jobs: " + std::to_string(f.jobs) + " is out of range [1, 1024]"};
  if (f.impl.empty()) f.impl = std::string(engine_of(f.bounds.profile).model().fixed_policy());
  ImplementationOptions with_fault;
  with_fault.fault = f.fault;
  R3_TRY(std::unique_ptr<Implementation> a, make_implementation(f.impl, with_fault));
  std::unique_ptr<Implementation> b;
  if (!f.against.empty()) {
    auto against = make_implementation(f.against, {});
    if (!against.ok()) return as_flag_error(against.error(), "--against");
    b = std::move(against).value();
  }
  // An engine named by the profile must have a space to enumerate; under profile any, an engine
  // without one is left out.
  if (!f.bounds.profile.is_any() && !engine_exhaust(engine_of(f.bounds.profile))) {
    return Error{"--profile " + std::string(to_string(f.bounds.profile)) + ": engine " +
                 std::string(engine_of(f.bounds.profile).name()) + " has no exhaustive space"};
  }
  // Only the engines every implementation checked serves are enumerated (profile any covers all).
  std::vector<Engine> engines;
  for (Engine e : all_engines())
    if (covers(f.bounds.profile, e) && engine_exhaust(e) && a->serves(e) && (!b || b->serves(e))) engines.push_back(e);
  if (engines.empty()) {
    return Error{"--impl " + a->name() + (b ? " and --against " + b->name() : "") + ": no engine of profile " +
                 std::string(to_string(f.bounds.profile)) + " is served by " + (b ? "both" : "it")};
  }
  if (engines.size() == 1) f.bounds.engine = engines.front();
  R3_TRY_STATUS(validate(f.bounds));
  R3_TRY_STATUS(check_space_size(f.bounds));
  const CaseCheck check = b ? differs_between(judge_implementation(*a, f.mode), judge_implementation(*b, f.mode))
                            : differs_from_reference(judge_implementation(*a, f.mode));

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  ExhaustOptions options{f.jobs, {}};
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (tty) options.progress = [&](const ExhaustProgress& p) { std::cerr << progress_line(p, elapsed()) << std::flush; };
  const ExhaustReport r = exhaust_search(f.bounds, check, options);
  const double seconds = elapsed();
  if (tty) std::cerr << "\r" << std::string(72, ' ') << "\r";

  if (r.internal_error) {
    std::cerr << "r3fuzz exhaust: internal error (a bug in r3fuzz, or out of memory): " << terminal_safe(*r.internal_error)
              << "; the search stopped, so it proves nothing\n";
    return kInternalErrorExit;
  }
  if (r.threads_refused) {
    std::cerr << "r3fuzz exhaust: --jobs " << f.jobs << ": the system started only " << r.jobs
              << " worker thread(s) (" << terminal_safe(*r.threads_refused)
              << "); they checked the whole space, with the same result\n";
  }
  const std::string subject = a->name() + (b ? " against " + b->name() : " against the reference");
  std::cout << "exhaust: " << terminal_safe(subject) << ", " << describe(f.bounds) << ", " << r.jobs << " jobs\n";
  char rate[96];
  std::snprintf(rate, sizeof rate, "%.2fs, %.0f cases/s", seconds, seconds > 0 ? r.cases / seconds : 0.0);
  if (!r.counterexample) {
    std::cout << "no difference within bounds: " << r.cases << " cases checked (" << rate << ")\n";
    return 0;
  }
  std::cout << "smallest counterexample: case " << r.counterexample->position << " of the enumeration order ("
            << r.cases << " cases checked, " << rate << ")\n"
            << terminal_safe(case_to_json_text(r.counterexample->c), true) << terminal_safe(r.counterexample->detail)
            << "\n";
  return 1;
}

}  // namespace

void add_exhaust_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<ExhaustFlags>();
  // Whole numbers without wrapping; validate() then says each flag's own range.
  const CLI::Validator whole_number =
      signed_in(std::numeric_limits<int>::min(), std::numeric_limits<int>::max()).description("");
  CLI::App* cmd = app.add_subcommand(
      "exhaust", "Check every case within small bounds: an implementation against the reference, or two against "
                 "each other; print the smallest counterexample");
  cmd->add_option("--max-dp", f->bounds.max_dp, "largest DP size D enumerated (SGLang profiles: 3)")->capture_default_str()
      ->transform(whole_number);
  cmd->add_option("--max-tp", f->bounds.max_tp, "largest TP size T enumerated (SGLang profiles: 2)")->capture_default_str()
      ->transform(whole_number);
  cmd->add_option("--max-tokens", f->bounds.max_tokens, "largest sum of real tokens (SGLang: tokens or requests) over the DP ranks (SGLang profiles: 4)")
      ->capture_default_str()
      ->transform(whole_number);
  cmd->add_option("--max-m", f->bounds.max_m, "largest max_num_tokens M enumerated (SGLang: chunked_prefill_size and max_running_requests; 4)")->capture_default_str()
      ->transform(whole_number);
  cmd->add_option("--layers", f->bounds.layers, "MoE layers L (layers 0 and L-1 are enumerated)")
      ->capture_default_str()
      ->transform(whole_number);
  cmd->add_option("--top-k", f->bounds.top_k, "experts per token K")->capture_default_str()
      ->transform(whole_number);
  cmd->add_option("--experts", f->bounds.experts, "experts E (above 32767 to reach narrow-int16)")
      ->capture_default_str()
      ->transform(whole_number);
  add_impl_option(*cmd, f->impl, "the one checked (default r3-fixed; sglang-fixed under an SGLang profile)");
  cmd->add_option("--against", f->against, "compare with this implementation instead of the reference");
  add_fault_option(*cmd, f->fault, "injected into --impl when it names none (as IMPL+FAULT would)");
  CLI::Option* mode = add_mode_option(
      *cmd, f->mode, "default symbolic; concrete judges policy models on real values too, where value faults show");
  cmd->add_flag_callback("--concrete", [f] { f->mode = Mode::concrete; }, "the same as --mode concrete")
      ->excludes(mode);
  add_profile_option(*cmd, f->bounds.profile, "default vllm");
  cmd->add_option("--jobs", f->jobs, "worker threads (default: every core)")->capture_default_str()
      ->transform(whole_number);
  cmd->add_flag("--traces", f->traces,
                "every tiny serving trace instead (fuzz/exhaust/trace_space.hpp says which), judged with --impl "
                "(default: each fixed lifecycle model of the profile)");
  cmd->add_option("--max-requests", f->trace_bounds.max_requests, "--traces: requests at most (default 2, at most 3)");
  cmd->add_option("--max-steps", f->trace_bounds.max_steps, "--traces: steps at most (default 4, at most 5)");
  cmd->add_flag("--copies", f->trace_bounds.copy_orders,
                "--traces: run each trace under overlap scheduling and judge it once per completion order of its copies "
                "to host that the engine's window allows (docs/TRACES.md, \"Copies\")");
  cmd->callback([f, cmd, &outcome] {
    // The profile's engine's own defaults for the bounds the command line left unset (under
    // profile any, the default engine's: the flags' defaults).
    if (const EngineExhaust* space = engine_exhaust(engine_of(f->bounds.profile))) {
      const ExhaustBounds defaults = space->default_bounds();
      if (cmd->count("--max-dp") == 0) f->bounds.max_dp = defaults.max_dp;
      if (cmd->count("--max-tp") == 0) f->bounds.max_tp = defaults.max_tp;
      if (cmd->count("--max-tokens") == 0) f->bounds.max_tokens = defaults.max_tokens;
      if (cmd->count("--max-m") == 0) f->bounds.max_m = defaults.max_m;
    }
    f->profile_given = cmd->count("--profile") > 0;
    if (!f->traces) {
      for (const char* flag : {"--copies", "--max-requests", "--max-steps"})
        if (cmd->count(flag) > 0) return outcome.fail("exhaust", Error{std::string(flag) + ": needs --traces"});
    }
    auto code = f->traces ? exhaust_traces_command(*f) : exhaust_command(*f);
    if (!code) return outcome.fail("exhaust", code.error());
    outcome.exit_code = *code;
  });
}

}  // namespace r3
