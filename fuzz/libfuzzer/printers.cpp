#include "fuzz/libfuzzer/printers.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "fuzz/adapter/protocol.hpp"
#include "fuzz/campaign/junit.hpp"
#include "fuzz/campaign/report.hpp"
#include "fuzz/cli/explain.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/io/source_text.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/io/utf8.hpp"
#include "fuzz/libfuzzer/source_lexer.hpp"
#include "fuzz/shrink/regression_artifacts.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

struct Texts {
  std::string note, branch, error, impl;
};

// What the same printer gets from a harmless file: the same shape, no special bytes.
Texts harmless(const Texts& t) {
  auto x = [](const std::string& s) { return s.empty() ? std::string() : std::string("x"); };
  return {x(t.note), t.branch.empty() ? "b" : "x", x(t.error), x(t.impl)};
}

Case small_case() {
  Case c;
  c.topology = {1, 1, false, false};
  c.model = {2, 1, 8};
  c.max_num_tokens = 4;
  c.tokens = {1};
  return c;
}

// What terminal_safe and terminal_json promise: well-formed UTF-8 holding no control character
// but '\n' (C0, DEL, C1 such as U+009B and U+0085) and no Unicode line end (U+2028, U+2029).
void check_terminal(std::string_view text, const char* what) {
  for (size_t i = 0; i < text.size();) {
    const int32_t cp = next_code_point(text, i);
    R3_CHECK(cp >= 0, what);  // a stray byte, 0x9b (the 8-bit CSI) among them
    R3_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7f), what);
    R3_CHECK(cp < 0x80 || cp > 0x9f, what);
    R3_CHECK(cp != 0x2028 && cp != 0x2029, what);
  }
}

// What the JUnit XML filter promises: only characters XML 1.0 allows, '<' and '&' only as the
// start of the markup it writes, and DEL and C1 escaped like the terminal escape does.
void check_xml_text(std::string_view text, const char* what) {
  for (size_t i = 0; i < text.size();) {
    const int32_t cp = next_code_point(text, i);
    R3_CHECK(cp == '\t' || cp == '\n' || cp == '\r' || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
                 (cp >= 0x10000 && cp <= 0x10ffff),
             what);
    R3_CHECK(cp != 0x7f && (cp < 0x80 || cp > 0x9f), what);
  }
}

size_t lines(std::string_view text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

Judgement judgement_of(const Texts& t) {
  Judgement j;
  j.impl = "external:" + t.impl;
  j.verdict = Verdict::spurious_reject;
  j.severity = Severity::failure;
  j.branch = t.branch;  // as read_capture_reply keeps it (1 to 64 bytes)
  j.detail = "dp 0 tp 0 raised on a valid case: " + stored_reply_text(t.error);
  return j;
}

CampaignReport report_of(const Case& c, const Judgement& j) {
  CampaignReport r;
  r.implementations = {j.impl};
  r.cases = 1;
  Failure f;
  f.signature = signature_of(j, c);
  f.detail = j.detail;
  f.c = c;
  f.file = "r3fuzz-out/" + file_name_from_text(f.signature.text(), ".json");
  r.failures.push_back(f);
  Finding finding;
  finding.verdict = j.verdict;
  finding.implementations = {j.impl};
  finding.failures = {0};
  finding.reproducer = c;
  finding.detail = j.detail;
  finding.file = f.file;
  r.findings.push_back(finding);
  r.distribution.branch[j.impl][j.branch] = 1;
  r.distribution.verdict[j.impl]["spurious_reject (failure)"] = 1;
  return r;
}

struct Rendered {
  std::string explain_text, explain_json, report_text, report_json, junit, test;
};

Rendered render(Case c, const Texts& t) {
  Rendered out;
  c.note = t.note;
  if (auto e = explain_case(c); e.ok()) {
    out.explain_text = explanation_text(*e);
    if (check_json_size(e->step).ok()) out.explain_json = terminal_json(explanation_json(*e));
  }
  const Judgement j = judgement_of(t);
  const CampaignReport report = report_of(c, j);
  out.report_text = report_text(report, false);
  out.report_json = terminal_json(report_json(report, false));
  out.junit = junit_xml(junit_of_run(report));
  const ImplementationSpec spec{j.impl, "", ""};
  out.test = regression_test_text(regression_entry(c, j, spec, "minimized from " + t.note), j, spec,
                                  JudgeMode::concrete);
  // The TEST's name is the one piece of code made from data: letters, digits and '_' only. It is
  // checked as such and then set aside, so the skeletons compare everything else.
  const std::string name = regression_test_name(signature_of(j, c), "");
  R3_CHECK(std::all_of(name.begin(), name.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }),
           "the TEST name is an identifier");
  const std::string declared = "TEST(Regression, " + name + ")";
  const size_t at = out.test.find(declared);
  R3_CHECK(at != std::string::npos, "the TEST declares its name");
  out.test.replace(at, declared.size(), "TEST(Regression, NAME)");
  return out;
}

// Each escape alone, in a line of its language: the skeleton never changes.
void check_escapes(const std::string& text) {
  const std::string safe = terminal_safe(text);
  check_terminal(safe, "terminal_safe leaves no control character, stray byte or line end");
  R3_CHECK(safe.find('\n') == std::string::npos, "terminal_safe leaves no line end");  // main()'s error line
  R3_CHECK(terminal_safe(safe) == safe, "terminal_safe of its own output changes nothing");
  const std::string json = terminal_json(nlohmann::json{{text, text}}, -1);
  check_terminal(json, "terminal_json leaves no control character, stray byte or line end");
  R3_CHECK(json.find('\n') == std::string::npos, "terminal_json on one line leaves no line end");
  const std::string xml = xml_escape(text);
  check_xml_text(xml, "the XML filter leaves only what XML 1.0 allows");
  R3_CHECK(xml.find_first_of("<>\"'") == std::string::npos, "the XML filter escapes markup");
  check_xml_text(junit_xml({text, {{text, text, text, std::nullopt, text}, {text, text, std::nullopt, text, text}}}),
                 "the JUnit report holds only what XML 1.0 allows");
  const std::string cpp = "auto x = " + cpp_string_literal(text) + "; " + cpp_line_comment(text) + "\nint y;\n";
  R3_CHECK(cpp_skeleton(cpp) == std::optional<std::string>("auto x = S; C\nint y;\n"), "C++ escapes stay inside");
  const std::string py = "x = " + python_string_literal(text) + "  " + python_comment(text) + "\ny = 1\n";
  R3_CHECK(python_skeleton(py) == std::optional<std::string>("x = S  C\ny = 1\n"), "Python escapes stay inside");
}

}  // namespace

void exercise_printers(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) return;
  std::array<std::string*, 4> fields{};
  Texts t;
  fields = {&t.note, &t.branch, &t.error, &t.impl};
  size_t at = 4;
  for (size_t k = 0; k < 4; ++k) {
    const size_t n = std::min<size_t>(bytes[k], bytes.size() - at);
    fields[k]->assign(reinterpret_cast<const char*>(bytes.data() + at), n);
    at += n;
  }
  if (t.branch.size() > 64) t.branch.resize(64);
  if (t.branch.empty()) t.branch = "b";  // a reply's branch has 1 to 64 characters
  for (const std::string* s : fields) check_escapes(*s);

  Result<Case> decoded = case_from_binary(bytes.subspan(at), concrete_binary_limits());
  Case c = decoded.ok() ? *decoded : small_case();
  if (!derive_step(c).ok()) c = small_case();
  c.expect.reset();

  const Rendered got = render(c, t);
  const Rendered plain = render(c, harmless(t));
  check_terminal(got.explain_text, "explain's text holds no control byte");
  check_terminal(got.explain_json, "explain's JSON holds no control byte");
  check_terminal(got.report_text, "the report holds no control byte");
  check_terminal(got.report_json, "the JSON report holds no control byte");
  check_xml_text(got.junit, "the run's JUnit report holds only what XML 1.0 allows");
  R3_CHECK(lines(got.explain_text) == lines(plain.explain_text), "data adds no line to explain");
  R3_CHECK(lines(got.report_text) == lines(plain.report_text), "data adds no line to the report");
  const std::optional<std::string> skeleton = cpp_skeleton(got.test);
  R3_CHECK(skeleton.has_value(), "the generated TEST lexes");
  if (skeleton != cpp_skeleton(plain.test)) {  // the two files, for whoever reads the crash
    std::fprintf(stderr, "generated TEST:\n%s\nwith harmless texts:\n%s\n", got.test.c_str(), plain.test.c_str());
  }
  R3_CHECK(skeleton == cpp_skeleton(plain.test), "every data text stays inside its comment or literal");
}

}  // namespace r3
