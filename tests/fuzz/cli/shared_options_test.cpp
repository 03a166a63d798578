#include "fuzz/cli/shared_options.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fuzz/cli/commands.hpp"

namespace r3 {
namespace {

// Every command, registered as main() registers them.
struct App {
  CLI::App app{"r3fuzz"};
  CommandOutcome outcome;
  App() {
    add_explain_command(app, outcome);
    add_seed_command(app, outcome);
    add_exhaust_command(app, outcome);
    add_mutants_command(app, outcome);
    add_run_command(app, outcome);
    add_replay_command(app, outcome);
    add_shrink_command(app, outcome);
    add_export_command(app, outcome);
  }
};

// Which commands take which shared flag; each flag's help starts with its one shared text.
TEST(SharedOptions, EveryCommandTakesTheSharedFlagsWithTheirOneHelpText) {
  const std::map<std::string, std::string> shared = {
      {"--impl", std::string(kImplHelp)}, {"--fault", std::string(kFaultHelp)}, {"--mode", std::string(kModeHelp)},
      {"--seed", std::string(kSeedHelp)}, {"--out", std::string(kOutHelp)},     {"--json", std::string(kJsonHelp)},
      {"--profile", profile_help()}};
  const std::map<std::string, std::vector<std::string>> takes = {
      {"explain", {"--impl", "--json"}},
      {"seed", {"--out", "--profile"}},
      {"exhaust", {"--impl", "--fault", "--mode", "--profile"}},
      {"mutants", {"--fault", "--json", "--profile"}},
      {"run", {"--impl", "--fault", "--mode", "--seed", "--out", "--json", "--profile"}},
      {"replay", {"--impl", "--mode"}},
      {"shrink", {"--impl", "--fault", "--mode", "--out", "--profile"}},
  };
  App a;
  for (const auto& [command, flags] : takes) {
    CLI::App* cmd = a.app.get_subcommand(command);
    for (const auto& [flag, help] : shared) {
      const CLI::Option* option = cmd->get_option_no_throw(flag);
      const bool expected = std::find(flags.begin(), flags.end(), flag) != flags.end();
      ASSERT_EQ(option != nullptr, expected) << command << " " << flag;
      if (option) {
        EXPECT_EQ(option->get_description().rfind(help, 0), 0u) << command << " " << flag << ": "
                                                                << option->get_description();
      }
    }
  }
}

TEST(SharedOptions, ModeIsParsedOnceIntoTheEnum) {
  CLI::App app;
  Mode mode = Mode::symbolic;
  add_mode_option(app, mode, "");
  app.parse("--mode concrete", false);
  EXPECT_EQ(mode, Mode::concrete);
  try {
    app.parse("--mode fast", false);
    FAIL() << "--mode fast parsed";
  } catch (const CLI::ValidationError& e) {
    EXPECT_EQ(std::string(e.what()), "--mode: \"fast\" is not one of concrete, symbolic, mixed");
  }
}

TEST(SharedOptions, SeedIsCheckedAsTyped) {
  CLI::App app;
  uint64_t seed = 1;
  add_seed_option(app, seed, "default 1");
  app.parse("--seed 18446744073709551615", false);
  EXPECT_EQ(seed, 18446744073709551615u);
  EXPECT_THROW(app.parse("--seed -1", false), CLI::ValidationError);
}

TEST(SharedOptions, ExhaustConcreteIsTheSameAsModeConcrete) {
  App a;
  CLI::App* exhaust = a.app.get_subcommand("exhaust");
  EXPECT_EQ(exhaust->get_option("--concrete")->get_description(), "the same as --mode concrete");
  EXPECT_THROW(a.app.parse("exhaust --mode symbolic --concrete", false), CLI::ExcludesError);
}

// A repeatable option takes one value per use: the words after it go to the positionals.
TEST(SharedOptions, ARepeatableOptionTakesOneValuePerUse) {
  CLI::App app;
  std::vector<std::string> impls, files;
  add_impl_option(app, impls, "");
  app.add_option("files", files);
  app.parse("--impl r3-fixed a.json b.json", false);
  EXPECT_EQ(impls, std::vector<std::string>{"r3-fixed"});
  EXPECT_EQ(files, (std::vector<std::string>{"a.json", "b.json"}));
  impls.clear();
  files.clear();
  app.parse("--impl A x.json --impl B y.json", false);
  EXPECT_EQ(impls, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(files, (std::vector<std::string>{"x.json", "y.json"}));
}

// The class, not the instances: no option of any command swallows the words after it, so a
// vector option added later without add_repeatable_option() fails here.
TEST(SharedOptions, NoOptionOfAnyCommandTakesTheWordsAfterIt) {
  App a;
  int commands = 0, options = 0;
  for (const CLI::App* cmd : a.app.get_subcommands([](const CLI::App*) { return true; })) {
    ++commands;
    for (const CLI::Option* option : cmd->get_options()) {
      if (option->get_positional()) continue;
      ++options;
      EXPECT_FALSE(option->get_allow_extra_args()) << cmd->get_name() << " " << option->get_name();
      EXPECT_LE(option->get_type_size_max(), 1) << cmd->get_name() << " " << option->get_name();
    }
  }
  EXPECT_EQ(commands, 8);
  EXPECT_GT(options, 40);
}

}  // namespace
}  // namespace r3
