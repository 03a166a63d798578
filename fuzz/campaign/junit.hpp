// JUnit XML, the test report GitHub Actions, GitLab and Buildkite show natively: one <testcase> per
// finding of a run (or per judged file of a replay), failing with its detail and the commands that
// replay and export it. Only the subset those tools read: testsuites > testsuite > testcase >
// failure | error, with the attributes they count (tests, failures, errors, skipped, time).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/campaign/campaign.hpp"

namespace r3 {

struct JunitCase {
  std::string classname;
  std::string name;
  std::optional<std::string> failure;  // the message of a failing case (its one-line detail)
  std::optional<std::string> error;    // the message of a case that could not run
  std::string text;                    // the body of the failure or error: details, commands
};

struct JunitSuite {
  std::string name;
  std::vector<JunitCase> cases;
};

// `text` as XML character data or attribute value, the one XML character filter of the report:
// & < > " ' escaped, and what XML 1.0 cannot carry even escaped (C0 controls but tab, newline and
// return; U+FFFE and U+FFFF; bytes that are not UTF-8, lone surrogates included) written as
// visible text (\x01, \ufffe, \xff), as are DEL and the C1 controls (\x7f, \u009b), so a hostile
// note, file name or adapter text never breaks the document and CI never drops the report.
std::string xml_escape(std::string_view text);

std::string junit_xml(const JunitSuite& suite);

// A campaign as JUnit: a failing test case per finding, and a passing one per implementation
// that has none.
JunitSuite junit_of_run(const CampaignReport& report);

}  // namespace r3
