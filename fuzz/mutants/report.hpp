// The fault-kill matrix as a text table, one JSON document, or a Markdown section for
// docs/BENCHMARKS.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/mutants/kill_matrix.hpp"

namespace r3 {

struct MutantsSummary {
  int measured = 0;     // rows that are not unavailable
  int killed = 0;
  int equivalent = 0;
  int survived = 0;     // not killed, yet exhaust tells them apart: a gap in the harness
  // killed / (measured - equivalent); 1 when every non-equivalent mutant is killed.
  double kill_rate() const;
  // False when no non-equivalent mutant was measured (an unavailable carrier such as
  // gpu+no-trim): the reports then say "n/a", never a 100% kill rate from 0 mutants.
  bool has_kill_rate() const { return measured - equivalent > 0; }
};

MutantsSummary summarize(const std::vector<MutantResult>& rows);

std::string mutants_text(const std::vector<MutantResult>& rows, const MutantsOptions& options);
nlohmann::json mutants_json(const std::vector<MutantResult>& rows, const MutantsOptions& options);
std::string mutants_markdown(const std::vector<MutantResult>& rows, const MutantsOptions& options);

}  // namespace r3
