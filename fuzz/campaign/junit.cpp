#include "fuzz/campaign/junit.hpp"

#include <cstdio>

#include "fuzz/campaign/report.hpp"
#include "reference/case_measure.hpp"

namespace r3 {
namespace {

// Length of the well-formed UTF-8 sequence at text[i] (a non-ASCII one), or 0.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  const size_t length = lead >= 0xC2 && lead < 0xE0 ? 2 : lead >= 0xE0 && lead < 0xF0 ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  if (lead == 0xE0 && byte(i + 1) < 0xA0) return 0;   // overlong
  if (lead == 0xED && byte(i + 1) >= 0xA0) return 0;  // surrogate
  if (lead == 0xF0 && byte(i + 1) < 0x90) return 0;   // overlong
  if (lead == 0xF4 && byte(i + 1) >= 0x90) return 0;  // above U+10FFFF
  return length;
}

std::string attribute(std::string_view name, std::string_view value) {
  return " " + std::string(name) + "=\"" + xml_escape(value) + "\"";
}

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (ch >= 0x80) {
      if (const size_t n = utf8_length(text, i)) {
        out.append(text.substr(i, n));
        i += n;
        continue;
      }
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default:
        if (ch < 0x20 || ch == 0x7F || ch >= 0x80) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
    ++i;
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
