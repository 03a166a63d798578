#include "fuzz/shrink/regression_artifacts.hpp"

#include <cctype>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/source_text.hpp"

namespace r3 {
namespace {

// "vllm-pre-50874" -> "VllmPre50874", "sp_shard" -> "SpShard".
std::string camel(std::string_view text) {
  std::string out;
  bool upper = true;
  for (char ch : text) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return out;
}

// A raw-string delimiter the JSON text cannot end early (JSON text has no raw line ends or
// control bytes, so the delimiter is the one way out of the literal).
std::string raw_delimiter(const std::string& text) {
  std::string delimiter = "r3case";
  for (int i = 0; text.find(")" + delimiter + "\"") != std::string::npos; ++i) delimiter = "r3case" + std::to_string(i);
  return delimiter;
}

// IMPL+FAULT (fuzz/implementations/implementation_name.hpp).
std::string full_name(const ImplementationSpec& spec) { return spec.fault.empty() ? spec.name : spec.name + "+" + spec.fault; }

}  // namespace

Case regression_entry(const Case& minimal, const Judgement& judgement, const ImplementationSpec& spec,
                      std::string_view note) {
  Case entry = minimal;
  entry.note = std::string(note);
  entry.expect = Expectation{full_name(spec),
                             judgement.verdict, judgement.severity};
  return entry;
}

std::string regression_test_name(const Signature& signature, std::string_view fault) {
  std::string name = camel(signature.impl);
  if (!fault.empty()) name += "_" + camel(fault);
  return name + "_" + camel(to_string(signature.verdict)) + "_" + camel(signature.path_text()) + "_" +
         camel(signature.branch);
}

std::string regression_test_text(const Case& entry, const Judgement& judgement, const ImplementationSpec& spec,
                                 JudgeMode how) {
  const Signature signature = signature_of(judgement, entry);
  const std::string json = case_to_json_text(entry);
  const std::string delimiter = raw_delimiter(json);
  std::string t;
  // The signature holds the adapter's branch: data, kept inside the comment (fuzz/io/source_text.hpp).
  t += cpp_line_comment("Regression: " + signature.text() + (spec.fault.empty() ? "" : " with fault " + spec.fault) +
                        ", minimized by r3fuzz shrink.") +
       "\n";
  t += "// Needs #include \"fuzz/codec/case_json.hpp\", \"fuzz/shrink/implementation_judge.hpp\" and\n";
  t += "// \"fuzz/implementations/registry.hpp\"; links r3fuzz_shrink and r3fuzz_implementations.\n";
  t += "TEST(Regression, " + regression_test_name(signature, spec.fault) + ") {\n";
  t += "  constexpr std::string_view kCase = R\"" + delimiter + "(" + json + ")" + delimiter + "\";\n";
  t += "  const r3::Result<r3::Case> c = r3::case_from_json_text(kCase);\n";
  t += "  ASSERT_TRUE(c.ok()) << c.error().message;\n";
  t += "  r3::ImplementationOptions options;\n";
  if (!spec.backend.empty()) t += "  options.backend = " + cpp_string_literal(spec.backend) + ";\n";
  t += "  auto impl = r3::make_implementation(" + cpp_string_literal(full_name(spec)) + ", options);\n";
  t += "  ASSERT_TRUE(impl.ok()) << impl.error().message;\n";
  t += "  const r3::Result<r3::Judgement> j = r3::judge_with(**impl, r3::JudgeMode::" + std::string(to_string(how)) +
       ")(*c);\n";
  t += "  ASSERT_TRUE(j.ok()) << j.error().message;\n";
  t += "  EXPECT_EQ(r3::to_string(j->verdict), " + cpp_string_literal(to_string(judgement.verdict)) + ") << j->detail;\n";
  t += "  EXPECT_EQ(r3::to_string(j->severity), " + cpp_string_literal(to_string(judgement.severity)) + ");\n";
  t += "  EXPECT_EQ(j->branch, " + cpp_string_literal(judgement.branch) + ");\n";
  t += "}\n";
  return t;
}

}  // namespace r3
