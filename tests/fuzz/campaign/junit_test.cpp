// The JUnit XML of a run, checked against the structure CI dashboards read (the JUnit/Ant schema
// GitHub Actions, GitLab and Buildkite parse): testsuites > testsuite > testcase > failure | error |
// system-out, only the attributes they know, counts that add up, one failing case per finding, and
// hostile texts escaped so the document stays well-formed.
#include "fuzz/campaign/junit.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fuzz/implementations/registry.hpp"

namespace r3 {
namespace {

struct Element {
  std::string tag;
  std::map<std::string, std::string> attributes;  // unescaped
  std::string text;                               // unescaped character data
  std::vector<Element> children;
};

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const size_t end = s.find(';', i);
    const std::string entity = s.substr(i + 1, end - i - 1);
    static const std::map<std::string, char> named = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    if (entity[0] == '#') {
      out += static_cast<char>(std::stoi(entity.substr(1)));
    } else {
      EXPECT_TRUE(named.count(entity)) << entity;
      out += named.at(entity);
    }
    i = end;
  }
  return out;
}

// A strict reader for the subset junit_xml writes: a declaration, elements, attributes in double
// quotes, character data; anything else (a raw '<' or '&' in text, a stray quote) fails the test.
class Reader {
 public:
  explicit Reader(const std::string& xml) : s_(xml) {}

  Element document() {
    const std::string decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    EXPECT_EQ(s_.substr(0, decl.size()), decl);
    pos_ = decl.size();
    Element root = element();
    skip_space();
    EXPECT_EQ(pos_, s_.size()) << "text after the root element";
    return root;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n')) ++pos_;
  }

  Element element() {
    skip_space();
    EXPECT_EQ(s_[pos_], '<');
    ++pos_;
    Element e;
    while (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-')) e.tag += s_[pos_++];
    while (true) {
      skip_space();
      if (s_.compare(pos_, 2, "/>") == 0) {
        pos_ += 2;
        return e;
      }
      if (s_[pos_] == '>') break;
      std::string name;
      while (std::isalpha(static_cast<unsigned char>(s_[pos_]))) name += s_[pos_++];
      EXPECT_EQ(s_.substr(pos_, 2), "=\"") << "attribute " << name;
      pos_ += 2;
      const size_t end = s_.find('"', pos_);
      const std::string raw = s_.substr(pos_, end - pos_);
      EXPECT_EQ(raw.find('<'), std::string::npos) << raw;
      EXPECT_FALSE(e.attributes.count(name)) << "attribute given twice: " << name;
      e.attributes[name] = unescape(raw);
      pos_ = end + 1;
    }
    ++pos_;
    while (true) {
      const size_t lt = s_.find('<', pos_);
      const std::string raw = s_.substr(pos_, lt - pos_);
      e.text += unescape(raw);
      pos_ = lt;
      if (s_.compare(pos_, 2, "</") == 0) {
        const std::string close = "</" + e.tag + ">";
        EXPECT_EQ(s_.substr(pos_, close.size()), close);
        pos_ += close.size();
        return e;
      }
      e.children.push_back(element());
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
};

// The schema: allowed attributes per element, the ones required, the children allowed.
void check_schema(const Element& e, const std::string& parent) {
  static const std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>> attrs = {
      {"testsuites", {{"name", "tests", "failures", "errors", "time"}, {"tests", "failures", "errors"}}},
      {"testsuite", {{"name", "tests", "failures", "errors", "skipped", "time"}, {"name", "tests", "failures", "errors"}}},
      {"testcase", {{"classname", "name", "time"}, {"classname", "name"}}},
      {"failure", {{"message", "type"}, {"message"}}},
      {"error", {{"message", "type"}, {"message"}}},
      {"system-out", {{}, {}}}};
  static const std::map<std::string, std::string> parent_of = {{"testsuites", ""},         {"testsuite", "testsuites"},
                                                               {"testcase", "testsuite"},   {"failure", "testcase"},
                                                               {"error", "testcase"},       {"system-out", "testcase"}};
  ASSERT_TRUE(attrs.count(e.tag)) << "unknown element <" << e.tag << ">";
  EXPECT_EQ(parent_of.at(e.tag), parent) << "<" << e.tag << "> inside <" << parent << ">";
  for (const auto& [name, value] : e.attributes) EXPECT_TRUE(attrs.at(e.tag).first.count(name)) << e.tag << "@" << name;
  for (const std::string& name : attrs.at(e.tag).second) EXPECT_TRUE(e.attributes.count(name)) << e.tag << " lacks " << name;
  if (e.tag == "testsuites" || e.tag == "testsuite") {
    int tests = 0, failures = 0, errors = 0;
    auto count = [&](const Element& suite) {
      for (const Element& tc : suite.children) {
        ++tests;
        for (const Element& c : tc.children) {
          failures += c.tag == "failure";
          errors += c.tag == "error";
        }
      }
    };
    if (e.tag == "testsuite") count(e);
    for (const Element& child : e.children)
      if (e.tag == "testsuites") count(child);
    EXPECT_EQ(e.attributes.at("tests"), std::to_string(tests));
    EXPECT_EQ(e.attributes.at("failures"), std::to_string(failures));
    EXPECT_EQ(e.attributes.at("errors"), std::to_string(errors));
  }
  for (const Element& child : e.children) check_schema(child, e.tag);
}

TEST(Junit, ACampaignHasOneFailingCasePerFindingAndOnePassingPerCleanImplementation) {
  std::vector<std::unique_ptr<Implementation>> impls;
  for (const char* name : {"vllm-50874", "r3-fixed"}) impls.push_back(std::move(make_implementation(name, {})).value());
  CampaignOptions o;
  o.max_cases = 400;
  o.out_dir.clear();
  auto report = run_campaign(o, impls);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_GE(report->findings.size(), 1u);
  const std::string xml = junit_xml(junit_of_run(*report));
  const Element root = Reader(xml).document();
  check_schema(root, "");
  ASSERT_EQ(root.tag, "testsuites");
  ASSERT_EQ(root.children.size(), 1u);
  const Element& suite = root.children[0];
  ASSERT_EQ(suite.children.size(), report->findings.size() + 1);
  for (size_t i = 0; i < report->findings.size(); ++i) {
    const Finding& f = report->findings[i];
    const Element& tc = suite.children[i];
    EXPECT_EQ(tc.attributes.at("classname"), "r3fuzz.run.vllm");
    ASSERT_EQ(tc.children.size(), 1u);
    EXPECT_EQ(tc.children[0].tag, "failure");
    EXPECT_EQ(tc.children[0].attributes.at("message"), f.detail);
    EXPECT_NE(tc.children[0].text.find("\nreplay: (not written: --out is off)\nexport: (not written: --out is off)\n"),
              std::string::npos);
  }
  EXPECT_EQ(suite.children.back().attributes.at("name"), "r3-fixed: no finding");
  EXPECT_TRUE(suite.children.back().children.empty());
}

TEST(Junit, HostileTextsStayInsideTheirElements) {
  const std::string hostile = "a\"b'c<d>&e</failure></testcase><x>\x01\x1b[31m\xff" "caf\xc3\xa9";
  JunitSuite suite{"s<&>", {{"c", hostile, hostile, std::nullopt, hostile + "\n"}, {"c", "ok", std::nullopt, hostile, ""}}};
  const std::string xml = junit_xml(suite);
  const Element root = Reader(xml).document();
  check_schema(root, "");
  const Element& failing = root.children.at(0).children.at(0);
  const std::string visible = "a\"b'c<d>&e</failure></testcase><x>\\x01\\x1b[31m\\xffcaf\xc3\xa9";
  EXPECT_EQ(failing.attributes.at("name"), visible);
  EXPECT_EQ(failing.children.at(0).attributes.at("message"), visible);
  EXPECT_EQ(failing.children.at(0).text, visible + "\n");
  EXPECT_EQ(root.children.at(0).children.at(1).children.at(0).tag, "error");
  EXPECT_EQ(root.attributes.at("name"), "s<&>");
}

// Exactly what XML 1.0 allows comes out: ordinary UTF-8 as is, everything else as visible text.
TEST(Junit, XmlEscapeEmitsOnlyWhatXml10Allows) {
  EXPECT_EQ(xml_escape("a&<>\"'\t\n\r z"), "a&amp;&lt;&gt;&quot;&apos;&#9;&#10;&#13; z");
  EXPECT_EQ(xml_escape("x\xef\xbf\xbey\xef\xbf\xbfz"), "x\\ufffey\\uffffz");           // U+FFFE, U+FFFF
  EXPECT_EQ(xml_escape(std::string("\0\x01\x1b\x1f\x7f", 5)), "\\x00\\x01\\x1b\\x1f\\x7f");  // C0, DEL
  EXPECT_EQ(xml_escape("\xc2\x85\xc2\x9b"), "\\u0085\\u009b");                              // C1
  EXPECT_EQ(xml_escape("\xed\xa0\x80|\x9b|\xc3|\xff"), "\\xed\\xa0\\x80|\\x9b|\\xc3|\\xff");   // not UTF-8
  const std::string allowed = "caf\xc3\xa9 \xe2\x80\xa8 \xed\x9f\xbf \xee\x80\x80 \xef\xbf\xbd \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf";
  EXPECT_EQ(xml_escape(allowed), allowed);  // U+D7FF, U+E000, U+FFFD, U+10FFFF: the edges of Char
}

TEST(Junit, NoncharactersInEveryPlaceOfTheReportAreEscaped) {
  const std::string bad = "impl\xef\xbf\xbf\x01";
  JunitSuite suite{bad, {{bad, bad, bad, std::nullopt, bad}, {bad, bad, std::nullopt, bad, bad}, {bad, bad, std::nullopt, std::nullopt, bad}}};
  const std::string xml = junit_xml(suite);
  EXPECT_EQ(xml.find("\xef\xbf\xbf"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  const Element root = Reader(xml).document();
  check_schema(root, "");
  EXPECT_EQ(root.attributes.at("name"), "impl\\uffff\\x01");
  EXPECT_EQ(root.children.at(0).children.at(0).children.at(0).text, "impl\\uffff\\x01");
}

}  // namespace
}  // namespace r3
