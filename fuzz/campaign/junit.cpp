#include "fuzz/campaign/junit.hpp"

#include <cstdint>
#include <cstdio>

#include "fuzz/campaign/report.hpp"
#include "fuzz/io/utf8.hpp"
#include "reference/case_measure.hpp"

namespace r3 {
namespace {

std::string attribute(std::string_view name, std::string_view value) {
  return " " + std::string(name) + "=\"" + xml_escape(value) + "\"";
}

}  // namespace

// The one XML character filter (docs/SECURITY.md, "One XML character filter"): every text of the
// report, attribute or character data, goes through it, and it emits only what XML 1.0 allows
// (Char: tab, LF, CR, U+0020..U+D7FF, U+E000..U+FFFD, U+10000..U+10FFFF, as well-formed
// UTF-8). What it cannot carry even escaped is written as visible text instead of dropped, so a
// reader of the report still sees that something was there: a byte that is not UTF-8 (a lone
// surrogate included) or a C0 control as \xNN, U+FFFE and U+FFFF as \ufffe and \uffff. DEL and
// the C1 controls, which XML 1.0 allows but discourages, are escaped the same way (\x7f, \u009b),
// as the terminal escape does, since CI logs print these texts too.
std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const int32_t cp = next_code_point(text, i);
    char buf[8];
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default:
        if (cp < 0x20 || cp == 0x7f) {  // -1: a byte that is not UTF-8
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[at]));
          out += buf;
        } else if ((cp >= 0x80 && cp <= 0x9f) || cp == 0xfffe || cp == 0xffff) {
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
          out += buf;
        } else {
          out.append(text.substr(at, i - at));
        }
    }
  }
  return out;
}

std::string junit_xml(const JunitSuite& suite) {
  size_t failures = 0, errors = 0;
  for (const JunitCase& c : suite.cases) {
    failures += c.failure ? 1 : 0;
    errors += c.error ? 1 : 0;
  }
  const std::string counts = attribute("tests", std::to_string(suite.cases.size())) +
                             attribute("failures", std::to_string(failures)) +
                             attribute("errors", std::to_string(errors));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + attribute("name", suite.name) + counts +
                    ">\n  <testsuite" + attribute("name", suite.name) + counts + attribute("skipped", "0") +
                    attribute("time", "0") + ">\n";
  for (const JunitCase& c : suite.cases) {
    out += "    <testcase" + attribute("classname", c.classname) + attribute("name", c.name) + attribute("time", "0");
    if (!c.failure && !c.error) {
      out += c.text.empty() ? "/>\n" : ">\n      <system-out>" + xml_escape(c.text) + "</system-out>\n    </testcase>\n";
      continue;
    }
    const bool failed = c.failure.has_value();
    const std::string tag = failed ? "failure" : "error";
    out += ">\n      <" + tag + attribute("message", failed ? *c.failure : *c.error) +
           attribute("type", failed ? "r3fuzz.finding" : "r3fuzz.error") + ">" + xml_escape(c.text) + "</" + tag +
           ">\n    </testcase>\n";
  }
  return out + "  </testsuite>\n</testsuites>\n";
}

JunitSuite junit_of_run(const CampaignReport& r) {
  JunitSuite suite;
  suite.name = "r3fuzz run (seed " + std::to_string(r.options.seed) + ", profile " +
               std::string(to_string(r.options.generator.profile)) + ", " + std::to_string(r.cases) + " cases)";
  const std::string classname = "r3fuzz.run." + std::string(to_string(r.options.generator.profile));
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    std::string impls, signatures;
    for (const std::string& name : f.implementations) impls += (impls.empty() ? "" : ", ") + name;
    for (size_t k : f.failures) signatures += (signatures.empty() ? "" : ", ") + r.failures[k].signature.text();
    JunitCase c;
    c.classname = classname;
    c.name = "finding " + std::to_string(i + 1) + ": " + std::string(to_string(f.verdict)) + " (" +
             std::string(to_string(f.severity)) + ") in " + impls;
    c.failure = f.detail;
    c.text = f.detail + "\nsignatures: " + signatures + "\ncases: " + std::to_string(r.occurrences(f)) +
             "\nreproducer: " + summarize(f.reproducer) + "\nreplay: " + replay_command(r.options.program, f.file) +
             "\nexport: " + export_command_text(r.options.program, f.file) + "\n";
    suite.cases.push_back(std::move(c));
  }
  for (const std::string& impl : r.implementations) {
    bool found = false;
    for (const Finding& f : r.findings)
      for (const std::string& name : f.implementations) found = found || name == impl;
    if (!found) suite.cases.push_back({classname, impl + ": no finding", std::nullopt, std::nullopt, ""});
  }
  return suite;
}

}  // namespace r3
