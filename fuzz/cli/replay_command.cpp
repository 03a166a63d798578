// r3fuzz replay: runs saved cases (regression mode) and checks each against its "expect".
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "fuzz/campaign/junit.hpp"
#include "fuzz/campaign/report.hpp"
#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/output_dir.hpp"
#include "fuzz/cli/refusal_groups.hpp"
#include "fuzz/cli/replay_trace.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "reference/profile.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "reference/engine_model.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

struct ReplayFlags {
  std::vector<std::string> paths;
  std::vector<std::string> impls;
  Mode mode = Mode::mixed;
  bool allow_external_from_files = false;
  std::string junit;  // --junit FILE ("" = none)
};

// Why a directory entry named *.json cannot be replayed ("a symbolic link loop", "a dangling
// symbolic link", "not a regular file (a FIFO)", "is a directory"), or "" for a regular file.
std::string unreplayable(const std::filesystem::directory_entry& entry) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status target = entry.status(ec);  // follows symbolic links
  if (ec) {
    if (ec == std::errc::too_many_symbolic_link_levels) return "a symbolic link loop (" + ec.message() + ")";
    if (ec == std::errc::no_such_file_or_directory) return "a dangling symbolic link";
    return "cannot be read: " + ec.message();
  }
  switch (target.type()) {
    case fs::file_type::regular: return "";
    case fs::file_type::directory: return "is a directory";
    case fs::file_type::fifo: return "not a regular file (a FIFO)";
    case fs::file_type::socket: return "not a regular file (a socket)";
    case fs::file_type::character:
    case fs::file_type::block: return "not a regular file (a device)";
    case fs::file_type::not_found: return "a dangling symbolic link";
    default: return "not a regular file";
  }
}

// Files named on the command line, and every *.json directly inside a named directory, sorted.
// A path or entry that cannot be read goes to `bad` (the others still run): a directory entry
// named *.json that is no regular file is reported, never skipped in silence.
std::vector<std::string> case_files(const std::vector<std::string>& paths, std::vector<std::string>& bad) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::string> inside, refused;
      for (auto it = std::filesystem::directory_iterator(path, ec); !ec && it != std::filesystem::directory_iterator();
           it.increment(ec)) {
        if (it->path().extension() != ".json") continue;
        const std::string why = unreplayable(*it);
        if (why.empty()) inside.push_back(it->path().string());
        else refused.push_back(it->path().string() + ": cannot be replayed: " + why);
      }
      if (ec) {
        bad.push_back(path + ": cannot list the directory: " + ec.message());
        continue;
      }
      std::sort(inside.begin(), inside.end());
      std::sort(refused.begin(), refused.end());
      files.insert(files.end(), inside.begin(), inside.end());
      bad.insert(bad.end(), refused.begin(), refused.end());
    } else if (std::filesystem::exists(path, ec)) {
      files.push_back(path);
    } else {
      bad.push_back(path + ": no such file or directory");
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

std::string outcome_text(Verdict verdict, Severity severity) {
  return std::string(to_string(verdict)) + (severity == Severity::none ? "" : " (" + std::string(to_string(severity)) + ")");
}

// external_from_file_refusal()'s rule (fuzz/implementations/registry.cpp), told once for every
// file it refused, each file then listed with the name it gave.
constexpr std::string_view kExternalFromFilesRule =
    "their expect.impl names an external command; r3fuzz runs commands only from its command line: pass --impl "
    "with that name, or --allow-external-from-files, to run it";

// Why implementation `name` cannot judge the case: the cause, without the file, so that one
// cause met by many files is told once (RefusalGroups).
std::string cannot_judge(const std::string& name, const Implementation& impl, const Case& c, Mode mode) {
  if (!impl.serves(c.engine)) {
    return name + " models another engine than the case's (" + std::string(to_string(c.engine)) + ")";
  }
  return name + " cannot be judged on this case in mode " + std::string(to_string(mode)) +
         " (too large to run concretely)";
}

// What a file's "expect" says about `name` (docs/SECURITY.md, 'What "expect" means under
// --impl'): the verdict it records for the implementation it names, and nothing about any
// other. An implementation the file does not name must pass: a file can record a known bug of
// its own implementation, never hide another's failure.
const Expectation* expectation_for(const Case& c, const std::string& name) {
  return c.expect && c.expect->impl == name ? &*c.expect : nullptr;
}

// 1 when a verdict differs from the "expect" of its implementation, or any other judged
// implementation fails; 2 when a file could not be replayed. A bad file is reported on stderr
// and the others still run, so one broken file in a corpus hides nothing.
int replay_command(const ReplayFlags& f, CommandOutcome& outcome) {
  auto input_error = [&](std::string message) {
    outcome.fail("replay", Error{std::move(message)});
    return 2;
  };
  // Usage errors before the first case: a report that could not be written, or an --impl
  // that is no implementation, is one error, not one per file after the campaign.
  if (!f.junit.empty()) {
    if (Status s = check_output_file("--junit", f.junit); !s.ok()) return input_error(s.error().message);
  }
  ImplementationCache cache;
  std::set<std::string> named;  // the same implementation twice would print every verdict twice: refused
  for (const std::string& name : f.impls) {
    if (!named.insert(name).second) return input_error("--impl " + name + ": given twice");
    if (const Result<const Implementation*> impl = cache.get(name); !impl.ok()) return input_error(impl.error().message);
  }
  std::vector<std::string> bad;
  const std::vector<std::string> files = case_files(f.paths, bad);
  if (files.empty() && bad.empty()) return input_error("no case files (*.json) in " + f.paths.front());
  // File names, notes, implementation names and details are data: every one printed goes
  // through terminal_safe() (docs/SECURITY.md); the JUnit report escapes them for XML.
  for (const std::string& message : bad) std::cerr << "r3fuzz replay: " << terminal_safe(message) << "\n";
  JunitSuite junit{"r3fuzz replay", {}};
  auto bad_file = [&](std::string message) {
    std::cerr << "r3fuzz replay: " << terminal_safe(message) << "\n";
    junit.cases.push_back({"r3fuzz.replay", message, std::nullopt, message, message + "\n"});
    bad.push_back(std::move(message));
  };
  // A cause shared by many files (an implementation of the other engine, an unknown
  // expect.impl) is told once after the files, with each file it refused.
  RefusalGroups cannot_run;
  auto refuse = [&](const std::string& file, const std::string& cause) {
    const std::string message = file + ": " + cause;
    junit.cases.push_back({"r3fuzz.replay", message, std::nullopt, message, message + "\n"});
    bad.push_back(message);
    cannot_run.add(terminal_safe(cause), terminal_safe(file));
  };
  int unexpected = 0, checked = 0;
  std::vector<std::string> refused;  // files whose expect.impl would start a program
  for (const std::string& file : files) {
    const std::string shown = terminal_safe(file);
    if (is_trace_file(file)) {  // a serving trace: judged whole, request by request
      TraceReplay replayed = replay_trace_file(file, f.impls, outcome.program, std::cout);
      if (!replayed.bad.empty()) {
        bad_file(replayed.bad);
        continue;
      }
      checked += replayed.checked;
      unexpected += replayed.unexpected;
      for (JunitCase& tc : replayed.cases) junit.cases.push_back(std::move(tc));
      continue;
    }
    const Result<Case> c = read_case_file(file);
    if (!c.ok()) {
      bad_file(c.error().message);
      continue;
    }
    const Result<Step> step = derive_step(*c);
    if (!step.ok()) {
      bad_file(file + ": " + step.error().message);
      continue;
    }
    // Judged all the same: a case outside the profile it names is still a valid case.
    if (const ProfileStanding standing = standing_of(*c); standing.outside) {
      std::cout << shown << ": " << terminal_safe(standing.text()) << "\n";
    }
    std::vector<std::string> names = f.impls;
    if (names.empty()) {
      if (c->expect) {
        names = {c->expect->impl};
      } else {  // the released versions of the case's engine
        for (std::string_view name : c->engine.model().released_policies()) names.emplace_back(name);
      }
    }
    // Files are data, never commands (docs/SECURITY.md): a file's expect.impl that would start a
    // program runs only when the command line says so. The file is reported; the others still run.
    if (f.impls.empty() && c->expect && names_external_command(c->expect->impl) && !f.allow_external_from_files) {
      refused.push_back(shown + ": expect.impl \"" + terminal_safe(c->expect->impl) + "\"");
      const std::string why = file + ": " + external_from_file_refusal(c->expect->impl);
      junit.cases.push_back({"r3fuzz.replay", why, std::nullopt, why, why + "\n"});
      std::cout << shown << ": not run: needs --allow-external-from-files\n";
      continue;
    }
    for (const std::string& name : names) {
      const Result<const Implementation*> impl = cache.get(name);
      if (!impl.ok()) {
        refuse(file, impl.error().message);
        continue;
      }
      const std::optional<JudgeMode> how = choose_judge_mode(f.mode, **impl, *c);
      if (!how) {
        refuse(file, cannot_judge(name, **impl, *c, f.mode));
        continue;
      }
      const Judgement j = judge_case(**impl, *c, *step, *how);
      const std::string got = outcome_text(j.verdict, j.severity);
      const Expectation* expect = expectation_for(*c, name);
      const int unexpected_before = unexpected;
      std::cout << shown << ": " << terminal_safe(name) << ": " << got;
      if (j.failed()) std::cout << " [" << terminal_safe(signature_of(j, *c).text()) << "]";
      std::cout << " (" << to_string(*how) << ")";
      if (expect) {
        ++checked;
        const std::string want = outcome_text(expect->verdict, expect->severity);
        if (want == got) {
          std::cout << ": as expected";
        } else {
          ++unexpected;
          std::cout << ": UNEXPECTED, the file expects " << want;
        }
      } else if (j.failed()) {
        ++unexpected;  // nothing says this failure is known: it is one
        if (c->expect) {
          std::cout << ": FAILS, and the file's \"expect\" is for " << terminal_safe(c->expect->impl);
        } else {
          std::cout << ": FAILS, and the file has no \"expect\"";
        }
      }
      std::cout << "\n";
      if (j.failed()) {
        std::cout << "  " << terminal_safe(j.detail) << "\n";
        std::cout << "  replay: " << terminal_safe(r3::replay_command(outcome.program, file)) << "\n"
                  << "  export: " << terminal_safe(export_command_text(outcome.program, file)) << "\n";
      }
      // One test case per file and implementation: failing when the verdict is not the expected one.
      JunitCase tc{"r3fuzz.replay." + name, file, std::nullopt, std::nullopt, ""};
      tc.text = name + ": " + got + (j.failed() ? "\n" + j.detail : "") + "\nreplay: " +
                r3::replay_command(outcome.program, file) + "\nexport: " + export_command_text(outcome.program, file) +
                "\n";
      if (unexpected > unexpected_before) {
        tc.failure = expect ? got + ", the file expects " + outcome_text(expect->verdict, expect->severity)
                            : got + ": " + j.detail;
      }
      junit.cases.push_back(std::move(tc));
    }
  }
  for (const std::string& block : cannot_run.blocks()) std::cerr << "r3fuzz replay: " << block << "\n";
  if (!f.junit.empty()) {
    if (Status s = write_flag_file("--junit", f.junit, junit_xml(junit)); !s.ok()) return input_error(s.error().message);
  }
  const int code = !bad.empty() || !refused.empty() ? 2 : unexpected ? 1 : 0;
  std::cout << "replay: " << files.size() << " case file" << (files.size() == 1 ? "" : "s") << ", " << checked
            << " expectation" << (checked == 1 ? "" : "s") << " checked, " << unexpected << " unexpected, "
            << bad.size() << " could not be replayed";
  if (!refused.empty()) std::cout << ", " << refused.size() << " not run (external command named in the file)";
  std::cout << ": exit " << code << "\n";
  // One message line, then the refused files as main()'s list (each line of it escaped there).
  std::string message;
  if (!bad.empty()) {
    message = std::to_string(bad.size()) + (bad.size() == 1 ? " file or path" : " files or paths") +
              " could not be replayed (listed above)";
  }
  if (!refused.empty()) {
    // The rule once; the files, each with the name it gave, as main()'s list (escaped there).
    message += (message.empty() ? "" : "; ") + std::to_string(refused.size()) + " case file(s) not run: " +
               std::string(kExternalFromFilesRule) + ":";
  }
  if (message.empty()) return code;
  outcome.fail("replay", Error{std::move(message)}, std::move(refused));
  return 2;
}

}  // namespace

void add_replay_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "run saved cases and print each verdict; exit 1 when one differs from the file's \"expect\"");
  cmd->add_option("paths", f->paths, "case or trace files, or directories of *.json files")->required();
  add_impl_option(*cmd, f->impls,
                  "to run, repeatable (default: the file's expect.impl, else " + default_implementations_text() + ")");
  add_mode_option(*cmd, f->mode, "default mixed");
  cmd->add_flag("--allow-external-from-files", f->allow_external_from_files,
                "run an external:COMMAND implementation named by a file's expect.impl (by default only the "
                "command line names programs to run)");
  add_junit_option(*cmd, f->junit, "one test case per file and implementation, failing when its verdict is unexpected");
  cmd->callback([f, &outcome] {
    const int code = replay_command(*f, outcome);
    if (!outcome.error) outcome.exit_code = code;
  });
}

}  // namespace r3
