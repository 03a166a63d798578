// Merging judged cases into the campaign's report in case order: the distribution, each new
// failure shrunk, written and placed in its finding. One thread at a time merges; which thread
// does is the scheduler's business (case_pipeline.hpp), and nothing here depends on it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/campaign/case_outcome.hpp"
#include "fuzz/campaign/distribution_tally.hpp"
#include "fuzz/campaign/seen_signatures.hpp"

namespace r3 {

class CampaignMerge {
 public:
  using Clock = std::chrono::steady_clock;

  // `generator` is the one the cases came from: a new failure's case is generated again from it.
  CampaignMerge(const CampaignOptions& options, const GeneratorOptions& generator,
                const std::vector<std::unique_ptr<Implementation>>& impls, const CampaignHooks& hooks,
                CampaignReport& report, Clock::time_point start);

  // False when a signal cut the case short: it and everything after it stay out of the report.
  Result<bool> merge(const CaseOutcome& o);

  size_t unique_failures() const { return seen_.size(); }
  // The signatures merged so far, for the workers (their failures then carry only a number).
  const SeenSignatures& seen() const { return published_; }

  // The distribution and findings into the report, each finding's file written again now that
  // it lists every signature it gathered.
  Status finish();

 private:
  Status record_failure(const Implementation& impl, const ImplOutcome& io, const CaseOutcome& o);

  const CampaignOptions& options_;
  const GeneratorOptions& generator_;
  const std::vector<std::unique_ptr<Implementation>>& impls_;
  const CampaignHooks& hooks_;
  CampaignReport& report_;
  Clock::time_point start_;
  DistributionTally tally_;
  FindingGrouper grouper_;
  std::map<Signature, size_t> seen_;  // signature -> index in report.failures
  SeenSignatures published_;          // the same, as the workers read it
};

}  // namespace r3
