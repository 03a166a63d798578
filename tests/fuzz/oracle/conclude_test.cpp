#include <gtest/gtest.h>

#include "fuzz/oracle/judge.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3 {
namespace {

// A judgement of a DP2/TP2 step with every rank passing; tests then break what they need.
struct Fixture {
  Case c = test::make_case(test::kDp2Tp2EpSp, 8, {3, 2}, Path::sp_shard);
  Step step = std::move(derive_step(c)).value();
  Judgement j = make();

  Judgement make() {
    Judgement out;
    out.impl = "x";
    out.allocation.capture_rows = 8;
    for (int d = 0; d < 2; ++d)
      for (int t = 0; t < 2; ++t) {
        RankJudgement r;
        r.dp = d;
        r.tp = t;
        r.branches = {branch::sp_allgather};
        r.tp_gathers = {1};
        out.classes.push_back(r);
      }
    return out;
  }
};

TEST(Conclude, AllPassingIsPassWithNoSeverity) {
  Fixture f;
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::pass);
  EXPECT_EQ(f.j.severity, Severity::none);
  EXPECT_EQ(f.j.detail, "");
}

TEST(Conclude, CapacityComesFirst) {
  Fixture f;
  f.j.allocation.capture_rows = 2;
  f.j.classes[1].verdict = Verdict::wrong_rows;
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::capacity);
  EXPECT_EQ(f.j.severity, Severity::failure);
  EXPECT_EQ(f.j.detail, "capture buffer has 2 rows, a rank runs 3 tokens");
}

TEST(Conclude, ReplayCapacity) {
  Fixture f;
  f.c.path = Path::gathered;
  f.c.monolithic = true;
  f.step = std::move(derive_step(f.c)).value();
  f.j.allocation.replay_rows = 5;
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::capacity);
  EXPECT_EQ(f.j.detail, "replay buffer has 5 rows, the gathered batch the monolithic kernel processes has 6");
}

TEST(Conclude, TpRankZeroFailureBeatsAnEarlierLatentOne) {
  Fixture f;
  f.j.classes[1].verdict = Verdict::wrong_rows;
  f.j.classes[1].detail = "tp 1 detail";
  f.j.classes[2].verdict = Verdict::wrong_rows;
  f.j.classes[2].detail = "tp 0 detail";
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(f.j.severity, Severity::failure);
  EXPECT_EQ(f.j.detail, "tp 0 detail");
  EXPECT_EQ(f.j.branch, "sp_allgather");
}

TEST(Conclude, OnlyTpRanksAboveZeroWrongIsLatent) {
  Fixture f;
  f.j.classes[3].verdict = Verdict::wrong_rows;
  f.j.classes[3].detail = "tp 1 detail";
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::wrong_rows);
  EXPECT_EQ(f.j.severity, Severity::latent);
  EXPECT_EQ(f.j.detail, "tp 1 detail");
}

TEST(Conclude, ARaiseOnAnyTpRankIsAFailure) {
  Fixture f;
  f.j.classes[3].verdict = Verdict::spurious_reject;
  f.j.classes[3].branches = {branch::error};
  f.j.classes[3].tp_gathers = {0};
  f.j.classes[2].tp_gathers = {0};
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::spurious_reject);
  EXPECT_EQ(f.j.severity, Severity::failure);
  EXPECT_EQ(f.j.branch, "error");
}

TEST(Conclude, TpRanksDisagreeingOnTheGatherIsACollectiveMismatch) {
  Fixture f;
  f.j.classes[1].tp_gathers = {0};
  f.j.classes[1].branches = {branch::local};
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::collective_mismatch);
  EXPECT_EQ(f.j.severity, Severity::failure);
  EXPECT_EQ(f.j.detail, "dp 0: tp 0 and tp 1 disagree on issuing the TP all-gather (a hang in production)");
  EXPECT_EQ(f.j.branch, "local");
}

TEST(Conclude, MissedAndHonouredRejections) {
  Fixture f;
  f.c.metadata = MetadataOverride{{}, true, std::nullopt};
  f.step = std::move(derive_step(f.c)).value();
  Judgement accepted = f.j;
  conclude(accepted, f.c, f.step);
  EXPECT_EQ(accepted.verdict, Verdict::missed_reject);
  EXPECT_EQ(accepted.severity, Severity::failure);
  EXPECT_EQ(accepted.detail,
            "accepted metadata the reference rejects: metadata.local_sizes: unset on a step with DP metadata (the "
            "layout gives [2, 2, 1, 1])");
  f.j.classes[0].rejected = true;
  conclude(f.j, f.c, f.step);
  EXPECT_EQ(f.j.verdict, Verdict::pass);
}

}  // namespace
}  // namespace r3
