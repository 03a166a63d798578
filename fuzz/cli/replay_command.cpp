// r3fuzz replay: runs saved cases (regression mode) and checks each against its "expect".
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "fuzz/campaign/judge_case.hpp"
#include "fuzz/campaign/registry.hpp"
#include "fuzz/cli/commands.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

struct ReplayFlags {
  std::vector<std::string> paths;
  std::vector<std::string> impls;
  std::string mode = "mixed";
  bool allow_external_from_files = false;
};

// Files named on the command line, and every *.json directly inside a named directory, sorted.
Result<std::vector<std::string>> case_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::string> inside;
      for (const auto& entry : std::filesystem::directory_iterator(path, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".json") inside.push_back(entry.path().string());
      if (ec) return Error{path + ": cannot list the directory: " + ec.message()};
      std::sort(inside.begin(), inside.end());
      files.insert(files.end(), inside.begin(), inside.end());
    } else if (std::filesystem::exists(path, ec)) {
      files.push_back(path);
    } else {
      return Error{path + ": no such file or directory"};
    }
  }
  return files;
}

class ImplementationCache {
 public:
  Result<const Implementation*> get(const std::string& name) {
    auto it = made_.find(name);
    if (it == made_.end()) {
      Result<std::unique_ptr<Implementation>> impl = make_implementation(name, {});
      if (!impl.ok()) return impl.error();
      it = made_.emplace(name, std::move(impl).value()).first;
    }
    return static_cast<const Implementation*>(it->second.get());
  }

 private:
  std::map<std::string, std::unique_ptr<Implementation>> made_;
};

std::string outcome_text(std::string_view verdict, std::string_view severity) {
  return std::string(verdict) + (severity.empty() ? "" : " (" + std::string(severity) + ")");
}

// 1 when a verdict differs from its file's "expect"; input errors go to `outcome`.
int replay_command(const ReplayFlags& f, CommandOutcome& outcome) {
  auto input_error = [&](std::string message) {
    outcome.fail("replay", Error{std::move(message)});
    return 2;
  };
  const Result<Mode> mode = parse_mode(f.mode);
  if (!mode.ok()) return input_error(mode.error().message);
  const Result<std::vector<std::string>> files = case_files(f.paths);
  if (!files.ok()) return input_error(files.error().message);
  if (files->empty()) return input_error("no case files (*.json) in " + f.paths.front());
  ImplementationCache cache;
  int unexpected = 0, checked = 0;
  std::vector<std::string> refused;  // files whose expect.impl would start a program
  for (const std::string& file : *files) {
    const Result<Case> c = read_case_file(file);
    if (!c.ok()) return input_error(c.error().message);
    const Result<Step> step = derive_step(*c);
    if (!step.ok()) return input_error(file + ": " + step.error().message);
    std::vector<std::string> names = f.impls;
    if (names.empty()) names = c->expect ? std::vector<std::string>{c->expect->impl} : default_implementation_names();
    // Files are data, never commands (docs/SECURITY.md): a file's expect.impl that would start a
    // program runs only when the command line says so. The file is reported; the others still run.
    if (f.impls.empty() && c->expect && names_external_command(c->expect->impl) && !f.allow_external_from_files) {
      refused.push_back(file + ": " + terminal_safe(external_from_file_refusal(c->expect->impl)));
      std::cout << file << ": not run: needs --allow-external-from-files\n";
      continue;
    }
    for (const std::string& name : names) {
      const Result<const Implementation*> impl = cache.get(name);
      if (!impl.ok()) return input_error(file + ": " + impl.error().message);
      const std::optional<JudgeMode> how = choose_judge_mode(*mode, **impl, *c);
      if (!how) {
        return input_error(file + ": " + name + " cannot be judged on this case in mode " + f.mode +
                           " (too large to run concretely)");
      }
      const Judgement j = judge_case(**impl, *c, *step, *how);
      const std::string got = outcome_text(to_string(j.verdict), to_string(j.severity));
      std::cout << file << ": " << name << ": " << got;
      if (j.failed()) std::cout << " [" << signature_of(j, c->path).text() << "]";
      std::cout << " (" << to_string(*how) << ")";
      if (c->expect && c->expect->impl == name) {
        ++checked;
        const std::string want = outcome_text(c->expect->verdict, c->expect->severity);
        if (want == got) {
          std::cout << ": as expected";
        } else {
          ++unexpected;
          std::cout << ": UNEXPECTED, the file expects " << want;
        }
      }
      std::cout << "\n";
      if (j.failed()) std::cout << "  " << j.detail << "\n";
    }
  }
  std::cout << "replay: " << files->size() << " case file" << (files->size() == 1 ? "" : "s") << ", " << checked
            << " expectation" << (checked == 1 ? "" : "s") << " checked, " << unexpected << " unexpected";
  if (!refused.empty()) std::cout << ", " << refused.size() << " not run (external command named in the file)";
  std::cout << ": exit " << (!refused.empty() ? 2 : unexpected ? 1 : 0) << "\n";
  if (!refused.empty()) {
    std::string message = std::to_string(refused.size()) + " case file(s) not run:";
    for (const std::string& r : refused) message += "\n  " + r;
    return input_error(message);
  }
  return unexpected ? 1 : 0;
}

}  // namespace

void add_replay_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "run saved cases and print each verdict; exit 1 when one differs from the file's \"expect\"");
  cmd->add_option("paths", f->paths, "case files, or directories of *.json case files")->required();
  cmd->add_option("--impl", f->impls,
                  "implementations to run, repeatable (default: the file's expect.impl, else vllm-50874 and "
                  "vllm-pre-50874)");
  cmd->add_option("--mode", f->mode, "concrete, symbolic or mixed (default: concrete when small enough)");
  cmd->add_flag("--allow-external-from-files", f->allow_external_from_files,
                "run an external:COMMAND implementation named by a file's expect.impl (by default only the "
                "command line names programs to run)");
  cmd->callback([f, &outcome] {
    const int code = replay_command(*f, outcome);
    if (!outcome.error) outcome.exit_code = code;
  });
}

}  // namespace r3
