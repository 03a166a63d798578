#include "fuzz/campaign/trace_campaign.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "fuzz/campaign/trace_report.hpp"
#include "fuzz/oracle/judge_trace.hpp"

namespace r3 {
namespace {

// A per-step policy that runs out of memory on every capture call of 6 rows (as a judgement does
// under a memory cap), and otherwise decides as the one it wraps.
class OutOfMemoryOnSixRows final : public CapturePolicy {
 public:
  explicit OutOfMemoryOnSixRows(std::shared_ptr<const CapturePolicy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  Allocation allocate(const Case& c) const override { return inner_->allocate(c); }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    if (call.rows == 6) throw std::bad_alloc();
    inner_->decide(call, out);
  }
  void decide_checked(const CaptureCall& call, CaptureDecision& out) const override {
    if (call.rows == 6) throw std::bad_alloc();
    inner_->decide_checked(call, out);
  }
  bool reads_tp_rank() const override { return inner_->reads_tp_rank(); }
  Engine engine() const override { return inner_->engine(); }

 private:
  std::shared_ptr<const CapturePolicy> inner_;
};

// A judgement that throws on a worker's thread does not end the process: the trace campaign stops
// before the earliest trace that threw, reports the traces before it (the same for every job
// count) and exits 3 naming the trace.
TEST(TraceCampaign, AJudgementThatThrowsStopsTheRunBeforeItsTrace) {
  std::string first;
  for (int jobs : {1, 2}) {
    TraceImplementation impl = make_trace_implementation("r3-fixed").value();
    impl.policy = std::make_shared<OutOfMemoryOnSixRows>(impl.policy);
    TraceCampaignOptions o;
    o.max_traces = 400;
    o.out_dir.clear();
    o.jobs = jobs;
    const TraceCampaignReport r = run_trace_campaign(o, {impl}, {}).value();
    ASSERT_TRUE(r.internal_error.has_value()) << "no trace of 400 has a capture call of 6 rows";
    EXPECT_EQ(*r.internal_error, "trace 9: std::bad_alloc");  // the first of seed 1 with such a call
    EXPECT_EQ(r.traces, 9);
    EXPECT_EQ(r.exit_code(), 3);
    const std::string text = trace_report_text(r, false);
    EXPECT_NE(text.find(" traces (stopped by an internal error), "), std::string::npos) << text;
    EXPECT_NE(text.find("\ninternal error at " + *r.internal_error +
                        " (a bug in r3fuzz, or out of memory): this report covers the traces before it\n"),
              std::string::npos)
        << text;
    if (jobs == 1) first = text;
    EXPECT_EQ(text, first) << jobs << " jobs";
  }
}

}  // namespace
}  // namespace r3
