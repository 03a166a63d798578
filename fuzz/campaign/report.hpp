// A campaign's summary, as text for people and as one JSON document for tools. Both hold
// the same content: the findings (one per bug: severity, verdict, implementations, cases,
// reproducer), the distribution of generated cases, every unique failure signature with its
// severity, first difference and replay command, and the exit code. Timings are
// left out unless asked for, so two runs with one seed print byte-identical reports.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/campaign/campaign.hpp"

namespace r3 {

// The commands a report prints for the user to paste. `program` is the shell word that runs
// r3fuzz (CampaignOptions::program, program_word(argv[0])); the file is shell-quoted.
// "build/default/fuzz/cli/r3fuzz replay r3fuzz-out/vllm-pre-50874-capacity-gathered-naive_total.json".
std::string replay_command(const std::string& program, const std::string& file);

// Rows as a table a reader scans: each line indented by two, columns padded to the widest cell
// (the findings tables of case and trace campaigns).
std::string aligned_table(const std::vector<std::vector<std::string>>& rows);
// "PROGRAM export FILE --pytest": the same case as a pytest module for the engine's own code.
std::string export_command_text(const std::string& program, const std::string& file);

std::string report_text(const CampaignReport& report, bool with_timing);
nlohmann::json report_json(const CampaignReport& report, bool with_timing);

}  // namespace r3
