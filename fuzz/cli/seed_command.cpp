// r3fuzz seed: production seeds and corpus conversion.
//   r3fuzz seed --deployment D.json [--log STEPS.jsonl] --out DIR   deployment traffic (and log steps) -> cases
//                                                                   (any engine's; logs where it takes them)
//   r3fuzz seed --to-binary --out DIR CASE.json|DIR...              readable cases -> fuzz inputs (.bin)
//   r3fuzz seed --to-json --out DIR INPUT|DIR...                    fuzz inputs -> readable cases (.json)
// Cases are validated and deduplicated by their canonical form; a log line that disagrees
// with the deployment is reported with its line number and makes the exit code 2.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <unordered_set>

#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/number_flags.hpp"
#include "fuzz/cli/seed_serving.hpp"
#include "fuzz/cli/replay_trace.hpp"
#include "fuzz/codec/trace_binary.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/new_file.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/seed/engine_seed.hpp"
#include "fuzz/seed/seed.hpp"
#include "reference/engine.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;

struct SeedArgs {
  std::string deployment;
  std::string log;
  std::string out;
  bool to_binary = false;
  bool to_json = false;
  std::vector<std::string> inputs;
  std::optional<Profile> profile;  // absent: the deployment's engine's default
  std::string serving_trace;       // a production serving log to turn into traces (seed_serving.hpp)
  int variants = 4;
  int tokens_per_block = 1;
};

// Files named on the command line, and the files inside named directories (recursively), sorted.
Result<std::vector<fs::path>> expand(const std::vector<std::string>& inputs, bool json_only) {
  std::vector<fs::path> files;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      files.emplace_back(in);
      continue;
    }
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(in, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_regular_file(ec) && (!json_only || it->path().extension() == ".json")) found.push_back(it->path());
    }
    if (ec) return Error{in + ": cannot list the directory: " + ec.message()};
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

Status write_bytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  return write_new_file(path.string(), {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
}

// Output names come from input file names r3fuzz did not choose: kept inside --out, made to fit.
Result<fs::path> converted_path(const SeedArgs& a, const fs::path& input, std::string_view extension) {
  return output_path_inside(a.out, file_name_from_text(input.stem().string(), extension));
}

// Two inputs with one output name (dir/a/x.json and dir/b/x.json both make x.bin) are an error
// before anything is written: one would silently replace the other.
Status check_distinct_outputs(const std::vector<fs::path>& files, std::string_view extension) {
  std::map<std::string, fs::path> first;
  for (const fs::path& file : files) {
    const std::string name = file_name_from_text(file.stem().string(), extension);
    const auto [it, fresh] = first.emplace(name, file);
    if (!fresh) {
      return Error{file.string() + " and " + it->second.string() + " would both be written as " + name +
                   " (nothing was converted: rename one, or convert them into different --out folders)"};
    }
  }
  return ok_status();
}

Result<int> convert(const SeedArgs& a) {
  int written = 0;
  R3_TRY(std::vector<fs::path> files, expand(a.inputs, a.to_binary));
  R3_TRY_STATUS(check_distinct_outputs(files, a.to_binary ? ".bin" : ".json"));
  for (const fs::path& file : files) {
    if (a.to_binary && is_trace_file(file.string())) {  // a serving trace: its own binary form
      R3_TRY(Trace t, read_trace_file(file.string()));
      R3_TRY(fs::path out, converted_path(a, file, ".bin"));
      R3_TRY_STATUS(write_bytes(out, encode_trace(t)));
    } else if (a.to_binary) {
      R3_TRY(Case c, read_case_file(file.string()));
      R3_TRY(fs::path out, converted_path(a, file, ".bin"));
      R3_TRY_STATUS(write_bytes(out, case_to_binary(c)));
    } else {
      R3_TRY(std::string bytes, read_input_file(file.string()));
      const std::span<const uint8_t> input{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
      if (!input.empty() && input.front() == kTraceBinaryVersion) {
        Result<Trace> t = decode_trace(input);
        if (!t) return Error{file.string() + ": " + t.error().message};
        R3_TRY(fs::path out, converted_path(a, file, ".json"));
        R3_TRY_STATUS(write_trace_file(out.string(), *t));
        ++written;
        continue;
      }
      auto c = case_from_fuzz_input(input);
      if (!c) return Error{file.string() + ": " + c.error().message};
      R3_TRY(fs::path out, converted_path(a, file, ".json"));
      R3_TRY_STATUS(write_case_file(out.string(), *c));
    }
    ++written;
  }
  return written;
}

// An engine's name after "a" or "an", read as its letters are spoken ("a vllm", "an sglang": a
// name starting with a letter whose name starts with a vowel sound takes "an").
std::string with_article(std::string_view name) {
  const bool vowel_sound = !name.empty() && std::string_view("aefhilmnorsx").find(name.front()) != std::string_view::npos;
  return (vowel_sound ? "an " : "a ") + std::string(name);
}

Result<int> seed(const SeedArgs& a, std::vector<std::string>& errors, int& duplicates) {
  Result<Deployment> read = read_deployment_file(a.deployment);
  if (!read) return Error{"--deployment " + read.error().message};
  Deployment& d = *read;
  // The note is attached to each case as it is written, not copied into every case before
  // duplicates go: memory stays one case's worth of note whatever the traffic and log hold.
  const std::string note = std::move(d.note);
  d.note.clear();  // every case the engine makes carries d.note (fuzz/seed/engine_seed.hpp): none now
  // An engine whose deployments take no metadata log (it keeps no per-step record of the DP
  // metadata to replay) seeds from the traffic only, and says why.
  if (const EngineSeed* part = engine_seed(d.engine); !a.log.empty() && part && !part->log_refusal().empty())
    return Error{"--log: " + std::string(part->log_refusal())};
  // Every case of a deployment is its engine's: a profile of another engine is one cause, told
  // once before any case is made (it was one identical line per case, 52 for the example).
  if (a.profile && !covers(*a.profile, d.engine)) {
    const std::string named = std::string(to_string(*a.profile));
    return Error{"--profile " + named + ": every case of " + a.deployment + " is " + with_article(d.engine.name()) +
                 " step, and profile " + named + " is " + std::string(to_string(engine_of(*a.profile))) +
                 "'s (use a profile of the deployment's engine, or any)"};
  }
  const Profile profile = a.profile.value_or(default_profile_of(d));
  std::string log;  // read before anything is written: a bad --log writes nothing
  if (!a.log.empty()) {
    Result<std::string> text = read_input_file(a.log);
    if (!text) return Error{"--log " + text.error().message};
    log = std::move(*text);
  }
  // Cases are deduplicated as they are made, by the hash their file is named after, and only
  // new ones are written: memory holds one case and 8 bytes per case written, never the cases.
  std::unordered_set<uint64_t> seen;
  std::vector<std::string> fit_errors;
  int written = 0;
  auto offer = [&](Case found) -> Status {
    Result<Case> fitted = seed_in_profile(std::move(found), profile);
    if (!fitted.ok()) {
      fit_errors.push_back(a.deployment + ": a case " + fitted.error().message);
      return ok_status();
    }
    Case& c = *fitted;
    R3_TRY(const fs::path file, output_path_inside(a.out, seed_file_name(d.name, c)));
    if (!seen.insert(canonical_hash(c)).second || fs::exists(file)) {
      ++duplicates;
      return ok_status();
    }
    c.note += note;  // "" or "metadata log line N; ", then the deployment's note
    R3_TRY_STATUS(write_case_file(file.string(), c));
    ++written;
    return ok_status();
  };
  R3_TRY_STATUS(for_each_traffic_case(d, offer));
  std::vector<std::string> line_errors;
  R3_TRY_STATUS(for_each_log_case(d, log, line_errors, offer));
  // As before cases were made one at a time: the log's lines first, then the cases refused.
  for (const std::string& e : line_errors) errors.push_back(a.log + ": " + e);
  for (std::string& e : fit_errors) errors.push_back(std::move(e));
  return written;
}

void run(const SeedArgs& a, CommandOutcome& outcome) {
  auto fail = [&](std::string message) { outcome.fail("seed", Error{std::move(message)}); };
  const int modes = (a.to_binary ? 1 : 0) + (a.to_json ? 1 : 0) + (a.deployment.empty() ? 0 : 1) +
                    (a.serving_trace.empty() ? 0 : 1);
  if (modes != 1) return fail("give exactly one of --deployment, --to-binary, --to-json, --serving-trace");
  if (!a.serving_trace.empty()) {
    if (!a.inputs.empty() || !a.log.empty()) return fail("--serving-trace takes no positional inputs and no --log");
    std::error_code made;
    fs::create_directories(a.out, made);
    if (made) return fail(a.out + ": cannot create: " + made.message());
    auto n = seed_serving_traces({a.serving_trace, a.out, a.profile.value_or(kDefaultProfile), a.variants, a.tokens_per_block});
    if (!n) return fail(n.error().message);
    std::cout << "r3fuzz seed: wrote " << *n << " trace(s) into " << terminal_safe(a.out) << "\n";
    return;
  }
  if (!a.log.empty() && a.deployment.empty()) return fail("--log needs --deployment (the log's topology and M)");
  if (!a.deployment.empty() && !a.inputs.empty()) return fail("--deployment takes no positional inputs");
  if (a.deployment.empty() && a.inputs.empty()) return fail("--to-binary/--to-json need input files or directories");
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) return fail(a.out + ": cannot create: " + ec.message());
  if (a.deployment.empty()) {
    auto n = convert(a);
    if (!n) return fail(n.error().message);
    std::cout << "r3fuzz seed: converted " << *n << " file(s) into " << terminal_safe(a.out) << "\n";
    return;
  }
  std::vector<std::string> errors;
  int duplicates = 0;
  auto n = seed(a, errors, duplicates);
  if (!n) return fail(n.error().message);
  std::cout << "r3fuzz seed: wrote " << *n << " case(s) into " << terminal_safe(a.out) << " (" << duplicates << " duplicate(s) skipped)\n";
  if (!errors.empty()) outcome.fail("seed", Error{std::to_string(errors.size()) + " step(s) not seeded:"}, errors);
}

}  // namespace

void add_seed_command(CLI::App& app, CommandOutcome& outcome) {
  auto args = std::make_shared<SeedArgs>();
  CLI::App* cmd = app.add_subcommand("seed", "Seed a corpus from deployments and metadata logs, or convert cases "
                                             "between readable JSON and fuzz inputs");
  cmd->add_option("--deployment", args->deployment, "A deployment description (docs/FUZZING.md, section 'Seeding from production')");
  cmd->add_option("--log", args->log, "A metadata log: one JSON line per step (needs --deployment)");
  add_out_option(*cmd, args->out, "the cases or converted files (required)")->required();
  cmd->add_flag("--to-binary", args->to_binary, "Convert readable cases and traces (.json) into fuzz inputs (.bin)");
  cmd->add_flag("--to-json", args->to_json, "Convert fuzz inputs (any file) into readable cases and traces (.json)");
  cmd->add_option("inputs", args->inputs, "Files or directories to convert");
  cmd->add_option("--serving-trace", args->serving_trace,
                  "A production serving log in Mooncake's JSONL format: write traces of the profile's engine serving "
                  "its requests (corpus/serving-logs/README.md)");
  cmd->add_option("--variants", args->variants, "--serving-trace: traces to write, each on a shape drawn from seed 1, 2, ... (default 4)")
      ->transform(signed_in(1, 64));
  cmd->add_option("--tokens-per-block", args->tokens_per_block,
                  "--serving-trace: tokens a 512-token block of the log becomes (default 1)")
      ->transform(signed_in(1, 8));
  add_profile_option(*cmd, args->profile, "default: the deployment's engine's, " + engine_names(" or "));
  cmd->callback([args, &outcome] { run(*args, outcome); });
}

}  // namespace r3
