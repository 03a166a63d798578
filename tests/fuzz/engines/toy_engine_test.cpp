// The smallest engine r3fuzz can know, added through the registry alone (docs/ENGINES.md): one
// layout rule (it runs one DP rank, without EP or SP, laid out as the base case is) and one
// policy, "toy-capture", which drops a rank's last row once it holds more than three tokens, with
// its fix, "toy-fixed". A campaign under its profile finds that bug, the shrinker brings it down
// to four tokens, and explain shows its step: none of that code names the toy engine.
#include <algorithm>

#include <gtest/gtest.h>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/cli/explain.hpp"
#include "fuzz/engines/registry.hpp"
#include "fuzz/generate/engine_draw.hpp"
#include "fuzz/generate/seeded_source.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/shrink/campaign_hook.hpp"
#include "fuzz/shrink/engine_shrink.hpp"
#include "fuzz/shrink/passes.hpp"
#include "reference/case_measure.hpp"
#include "reference/engine_model.hpp"
#include "reference/fault.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

Engine toy_engine();

class ToyCapture final : public CapturePolicy {
 public:
  explicit ToyCapture(bool fixed) : fixed_(fixed) {}
  std::string_view name() const override { return fixed_ ? "toy-fixed" : "toy-capture"; }
  Allocation allocate(const Case& c) const override { return {c.max_num_tokens, std::nullopt, 16}; }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    out.branch = branch::single;
    const bool drops_last = !fixed_ && call.rows > 3;  // the bug: a long batch's last row
    out.copies = {{0, 0, drops_last ? call.rows - 1 : call.rows, false}};
  }
  bool reads_tp_rank() const override { return false; }
  Engine engine() const override { return toy_engine(); }

 private:
  bool fixed_;
};

std::unique_ptr<CapturePolicy> make_toy_capture() { return std::make_unique<ToyCapture>(false); }
std::unique_ptr<CapturePolicy> make_toy_fixed() { return std::make_unique<ToyCapture>(true); }

class ToyModel : public EngineModel {
 public:
  std::string_view name() const override { return "toy"; }
  std::span<const ProfileInfo> profiles() const override { return kProfiles; }
  Status validate(const Case& c) const override {
    if (c.topology.dp != 1 || c.topology.ep || c.topology.sp)
      return Error{"topology: the toy engine runs one DP rank, without EP or SP"};
    return validate_base(c);
  }
  Status derive_step_into(Step& s, const Case& c) const override { return derive_base_step_into(s, c); }
  Status check_profile(const Case&, Profile) const override { return ok_status(); }
  Case fit_to_profile(Case c, Profile) const override { return c; }
  std::string summarize(const Case& c) const override { return "toy " + summarize_base(c); }
  int64_t most_buffer_rows(const Case& c) const override { return c.max_num_tokens; }
  bool small_enough_to_materialise(const Case& c) const override { return c.max_num_tokens <= 64; }
  std::span<const PolicyInfo> policies() const override { return kPolicies; }
  std::vector<std::string_view> released_policies() const override { return {"toy-capture"}; }
  std::string_view fixed_policy() const override { return "toy-fixed"; }
  // Its own row of the mutant table: the capture skips a batch's first row.
  std::span<const FaultEntry> own_faults() const override { return kOwnFaults; }
  bool has_fault(Fault f) const override { return f == kSkipsFirstRow; }
  void apply_decision_fault(Fault, const CaptureCall&, CaptureDecision&) const override {}
  void decide_with_fault(const CapturePolicy& base, Fault f, const CaptureCall& call, CaptureDecision& out) const override {
    base.decide(call, out);
    if (f != kSkipsFirstRow) return;
    for (auto& copy : out.copies) {
      if (copy.rows == 0) continue;
      ++copy.src_row;
      ++copy.dst_row;
      --copy.rows;
    }
  }

  static constexpr Fault kSkipsFirstRow = own_fault("toy-skips-first-row");

 private:
  static constexpr FaultEntry kOwnFaults[] = {
      {kSkipsFirstRow, "toy-skips-first-row", "row loss", FaultLayer::decision, "a batch's first row is never copied"}};
  static constexpr ProfileInfo kProfiles[] = {{"toy", "the toy engine"}};
  static constexpr PolicyInfo kPolicies[] = {{"toy-capture", "the toy engine's capture (model)", make_toy_capture},
                                             {"toy-fixed", "its fix", make_toy_fixed}};
};

// Its cases: TP 1 or 2, 1 to 8 tokens on its one rank, M from the tokens to 16.
class ToyDraw final : public EngineDraw {
 public:
  Case draw(Source& source, const CaseDomain&) const override { return draw_from(source); }
  Case draw(SeededSource& source, const CaseDomain&) const override { return draw_from(source); }

 private:
  static Case draw_from(Source& source) {
    Case c;
    c.engine = toy_engine();
    c.topology.tp = static_cast<int>(source.choose({Field::tp, 0, 1, 2}));
    c.tokens = {source.choose({Field::tokens, 0, 1, 8})};
    c.max_num_tokens = source.choose({Field::max_num_tokens, 0, c.tokens[0], 16});
    return c;
  }
};

// Its passes: the base case's (TP, tokens, M, ...).
class ToyShrink final : public EngineShrink {
 public:
  void append_passes(std::vector<ShrinkPass>& passes, bool allow_path_change) const override {
    append_base_passes(passes, allow_path_change);
  }
};

const ToyModel kToyModel;
const ToyDraw kToyDraw;
const ToyShrink kToyShrink;

Engine toy_engine() { return Engine::of(kToyModel); }

// Registers the toy once for the whole suite: the registry only grows.
const Engine& registered_toy() {
  static const Engine engine = [] {
    EXPECT_TRUE(add_engine(kToyModel).ok());
    FuzzEngineParts parts;
    parts.draw = &kToyDraw;
    parts.shrink = &kToyShrink;
    EXPECT_TRUE(add_engine_parts(toy_engine(), parts).ok());
    return toy_engine();
  }();
  return engine;
}

Profile toy_profile() { return Profile::of(registered_toy(), 0); }

// Declared first, so the mutant table is built before the toy registers: an engine a plug-in
// adds later still gets its own faults listed, named and applied.
TEST(ToyEngine, ItsOwnFaultJoinsTheMutantTableAfterFaultsWereNamed) {
  const std::span<const Fault> before = all_faults();
  EXPECT_EQ(std::find(before.begin(), before.end(), ToyModel::kSkipsFirstRow), before.end());
  const Engine toy = registered_toy();
  const std::span<const Fault> after = all_faults();
  EXPECT_EQ(after.size(), before.size() + 1);
  EXPECT_EQ(after.back(), ToyModel::kSkipsFirstRow);
  EXPECT_EQ(faults_for(toy), (std::vector<Fault>{ToyModel::kSkipsFirstRow}));
  EXPECT_EQ(to_string(ToyModel::kSkipsFirstRow), "toy-skips-first-row");
  EXPECT_EQ(fault_class(ToyModel::kSkipsFirstRow), "row loss");
}

TEST(ToyEngine, RegistersItsNameProfileAndPolicy) {
  const Engine toy = registered_toy();
  EXPECT_EQ(toy.name(), "toy");
  EXPECT_EQ(*parse_engine("toy"), toy);
  EXPECT_EQ(toy_profile().name(), "toy");
  EXPECT_EQ(*parse_profile("toy"), toy_profile());
  EXPECT_NE(make_policy("toy-capture"), nullptr);
  EXPECT_NE(make_policy("toy-fixed"), nullptr);
  EXPECT_EQ(add_engine(kToyModel).error().message, "engine toy: the name is taken");
}

TEST(ToyEngine, ACampaignUnderItsProfileFindsAndShrinksItsBug) {
  CampaignOptions options;
  options.max_cases = 300;
  options.out_dir = "";
  options.generator.profile = toy_profile();
  std::vector<std::unique_ptr<Implementation>> impls;
  for (const char* name : {"toy-capture", "toy-fixed"}) {
    auto impl = make_implementation(name, {});
    ASSERT_TRUE(impl) << impl.error().message;
    impls.push_back(std::move(*impl));
  }
  ShrinkOptions shrink;
  shrink.profile = toy_profile();
  CampaignHooks hooks;
  hooks.shrink = campaign_shrink_hook(options.mode, shrink);
  auto report = run_campaign(options, impls, hooks);
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_EQ(report->cases, 300);
  ASSERT_EQ(report->failures.size(), 1u);
  const Failure& f = report->failures.front();
  EXPECT_EQ(f.signature.text(), "toy-capture/wrong_rows/single/single");
  // Shrunk to the fewest tokens that show it (four), on the smallest TP and M.
  EXPECT_EQ(summarize(f.c), "toy dp 1 tp 1, M 4, tokens [4], L 1 K 1 E 1, padding none, path single, layer 0");
}

// An engine registered without a draw part: its layout and policies are the toy's, its name and
// profile its own.
class DrawlessModel final : public ToyModel {
 public:
  std::string_view name() const override { return "drawless"; }
  std::span<const ProfileInfo> profiles() const override { return kDrawlessProfiles; }
  std::span<const PolicyInfo> policies() const override { return {}; }

 private:
  static constexpr ProfileInfo kDrawlessProfiles[] = {{"drawless", "an engine without a draw part"}};
};

TEST(ToyEngine, ACaseCampaignUnderAnEngineWithoutADrawPartIsRefusedByName) {
  static const DrawlessModel drawless;
  registered_toy();  // its policy judges, were a case drawn
  ASSERT_TRUE(add_engine(drawless).ok());
  CampaignOptions options;
  options.max_cases = 10;
  options.out_dir = "";
  options.generator.profile = Profile::of(Engine::of(drawless), 0);
  std::vector<std::unique_ptr<Implementation>> impls;
  auto impl = make_implementation("toy-fixed", {});
  ASSERT_TRUE(impl) << impl.error().message;
  impls.push_back(std::move(*impl));
  const auto report = run_campaign(options, impls, {});
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().message, "engine drawless: has no draw part, so no case of it can be drawn");
}

TEST(ToyEngine, ExplainShowsItsStepAndPolicy) {
  Case c;
  c.engine = registered_toy();
  c.tokens = {4};
  c.max_num_tokens = 4;
  ASSERT_TRUE(validate(c).ok());
  auto e = explain_case(c);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(explained_policy_names(c.engine), (std::vector<std::string_view>{"toy-capture", "toy-fixed"}));
  // The toy engine has no explain part: the base layout report, with its two policies.
  EXPECT_EQ(explanation_text(*e), R"(topology: dp 1, tp 1, ep off, sp off; path single, router capture
model: layer 0 of 1, top_k 1, experts 1; max_num_tokens M = 4; padding none
step: 1 capture call per layer

DP ranks (n_d: the rows each rank runs with, padding included)
  dp  real  n_d  dummy rows
   0     4    4           0

capture() on each rank (expected: the rows holding the rank's tokens, in what it copies from)
  dp  tp  receives   n  expected  toy-capture  toy-fixed
   0   0  its batch  4  [0, 4)    single       single

buffers: capture rows needed 4 (max n_d) of M = 4

policies
  toy-capture: wrong_rows (failure): buffer row 3 of dp 0 tp 0 holds an untouched row, expected token (0, 3)
    capture buffer 4 rows
    dp  tp  branch  rows    verdict
     0   0  single  [0, 3)  wrong_rows
  toy-fixed: pass
    capture buffer 4 rows
    dp  tp  branch  rows    verdict
     0   0  single  [0, 4)  pass
)");
}

TEST(ToyEngine, ItsLayoutRuleRefusesASecondDpRank) {
  Case c;
  c.engine = registered_toy();
  c.topology.dp = 2;
  c.tokens = {1, 1};
  c.idle_dummy = true;
  EXPECT_EQ(validate(c).error().message, "topology: the toy engine runs one DP rank, without EP or SP");
}

}  // namespace
}  // namespace r3
