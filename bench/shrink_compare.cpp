// The in-process half of bench/shrink-bench.sh: finds failures with RapidCheck's generator
// (tests/support/case_gen.hpp) at fixed seeds, then reduces each the two in-process ways
// side by side: RapidCheck's own shrinking of the generator's choices (findLocalMin over the
// Shrinkable the generator made) and r3fuzz's domain-aware shrinker (fuzz/shrink) from the
// same unshrunk case. Prints one tab-separated row per (failure, contender) and writes the
// unshrunk cases so the script can hand the same failures to libFuzzer -minimize_crash.
//
//   r3fuzz_shrink_compare find OUTDIR IMPL[+FAULT]...   rows: name contender fields bytes seconds signature summary
//   r3fuzz_shrink_compare measure CASE.json IMPL[+FAULT]  row:  fields bytes signature summary
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include <rapidcheck.h>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/implementations/registry.hpp"
#include "reference/case_measure.hpp"
#include "fuzz/shrink/implementation_judge.hpp"
#include "tests/support/case_gen.hpp"

namespace {

using namespace r3;
using Clock = std::chrono::steady_clock;

// The reader-facing size: fields that differ from the defaults, and the JSON text's bytes.
std::pair<int, size_t> measure(Case c) {
  c.note.clear();
  c.expect.reset();
  return {non_default_fields(c), case_to_json_text(c).size()};
}

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void row(const std::string& name, const char* contender, const Case& c, double seconds, const std::string& sig) {
  const auto [fields, bytes] = measure(c);
  std::printf("%s\t%s\t%d\t%zu\t%.6f\t%s\t%s\n", name.c_str(), contender, fields, bytes, seconds, sig.c_str(),
              summarize(c).c_str());
}

// "vllm-50874", "r3-fixed+tp-major-order", "gpu+skip-tp-gather".
Result<std::unique_ptr<Implementation>> subject(const std::string& spec) { return make_implementation(spec, {}); }

int measure_file(const std::string& path, const std::string& spec) {
  auto c = read_case_file(path);
  if (!c.ok()) return std::fprintf(stderr, "%s\n", c.error().message.c_str()), 2;
  auto impl = subject(spec);
  if (!impl.ok()) return std::fprintf(stderr, "%s\n", impl.error().message.c_str()), 2;
  std::string sig = "(not judged)";
  if (auto how = judge_mode_for(**impl, *c); how.ok()) {
    auto j = judge_with(**impl, *how)(*c);
    sig = !j.ok() ? j.error().message : j->failed() ? signature_of(*j, *c).text() : "pass";
  }
  const auto [fields, bytes] = measure(*c);
  std::printf("%d\t%zu\t%s\t%s\n", fields, bytes, sig.c_str(), summarize(*c).c_str());
  return 0;
}

int find(const std::string& out_dir, const std::string& spec) {
  auto impl = subject(spec);
  if (!impl.ok()) return std::fprintf(stderr, "%s\n", impl.error().message.c_str()), 2;
  test::CaseGenOptions options;  // concrete-sized, so libFuzzer's target can run the same failure
  options.max_dp = 8;
  options.max_tp = 8;
  options.max_rows = 64;
  options.microbatches = true;
  options.dp_chunk = true;
  const rc::Gen<Case> gen = test::gen_valid_case(options);
  rc::Random random(20260813);
  for (int attempt = 0; attempt < 20000; ++attempt) {
    const rc::Shrinkable<Case> found = gen(random.split(), 100);
    const Case input = found.value();
    // Failures worth shrinking: several ranks and a real scheduler limit, not already tiny.
    if (int64_t{input.topology.dp} * input.topology.tp < 8 || input.max_num_tokens < 32) continue;
    auto how = judge_mode_for(**impl, input);
    if (!how.ok()) continue;
    const CaseJudge judge = judge_with(**impl, *how);
    auto first = judge(input);
    if (!first.ok() || !first->failed()) continue;
    const Signature sig = signature_of(*first, input);
    auto same = [&](const Case& c) {
      auto j = judge(c);
      return j.ok() && j->failed() && signature_of(*j, c) == sig;
    };
    const std::string name = spec;
    row(name, "input", input, 0, sig.text());
    auto t0 = Clock::now();
    const auto [rc_min, rc_steps] = rc::shrinkable::findLocalMin(found, same);
    row(name, "rapidcheck", rc_min, since(t0), sig.text());
    t0 = Clock::now();
    auto ours = shrink_case(input, judge);
    if (!ours.ok()) return std::fprintf(stderr, "%s\n", ours.error().message.c_str()), 2;
    row(name, "r3fuzz-shrink", ours->minimal, since(t0), ours->signature.text());
    auto s = write_case_file((std::filesystem::path(out_dir) / (spec + ".json")).string(), input);
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.error().message.c_str()), 2;
    return 0;
  }
  std::fprintf(stderr, "%s: no failure in 20000 generated cases\n", spec.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "measure" && argc == 4) return measure_file(argv[2], argv[3]);
  if (mode == "find" && argc >= 4) {
    int worst = 0;
    for (int i = 3; i < argc; ++i) worst = std::max(worst, find(argv[2], argv[i]));
    return worst;
  }
  std::fprintf(stderr, "usage: r3fuzz_shrink_compare find OUTDIR IMPL[+FAULT]... | measure CASE.json IMPL[+FAULT]\n");
  return 2;
}
