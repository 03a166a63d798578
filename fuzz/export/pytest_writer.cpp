#include "fuzz/export/pytest_writer.hpp"

#include <algorithm>
#include <cstdint>

#include "fuzz/export/engine_target.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/io/source_text.hpp"
#include "fuzz/export/step_inputs.hpp"
#include "fuzz/export/value_encoding.hpp"
#include "reference/case_measure.hpp"
#include "reference/policy.hpp"

namespace r3 {
namespace {

constexpr std::string_view kLoadEngine = R"PY(

def load_engine():
    module_name, _, class_name = ENGINE.partition(":")
    try:
        module = importlib.import_module(module_name)
        return module, getattr(module, class_name)
    except (ImportError, AttributeError) as e:
        pytest.fail(f"cannot load the capturer {ENGINE} ({type(e).__name__}: {e}); set R3FUZZ_ENGINE=MODULE:CLASS "
                    f"(the module on PYTHONPATH) to test another", pytrace=False)
)PY";

using py::list;
using py::run_tuple;
using py::text;

std::string header(const EngineTarget& target) {
  return "\"\"\"A finding of r3fuzz as a pytest module: one scheduler step, every capture call of it, run on an\n"
         "engine's own capturer with real torch tensors. It needs torch and pytest only:\n\n"
         "    pytest THIS_FILE\n\n"
         "CASE_FILE, SUMMARY and NOTE say which case it is and EXPORT_COMMAND how it was written.\n\n"
         + std::string(target.tests_doc) + "\n"
         "Pointing it elsewhere:\n"
         "  R3FUZZ_ENGINE=MODULE:CLASS  the capturer to test (default: DEFAULT_ENGINE, the engine's own,\n"
         "                              " + std::string(target.capturer_source) + ";\n"
         "                              the module must be importable: put its folder on PYTHONPATH)\n"
         "  R3FUZZ_SIZING=NAME          the buffer allocation the engine makes (SIZINGS: " + std::string(target.sizing_doc) +
         "                              default: the first, the engine's current one)\n" + std::string(target.env_doc) +
         "\"\"\"\n"
         "import importlib\nimport os\n\nimport pytest\nimport torch\n\n";
}

}  // namespace

Result<std::string> pytest_module(const Case& c, const PytestExport& how) {
  R3_TRY(const EngineTarget* const found, engine_target(c));
  const EngineTarget& target = *found;
  const std::string capturer = how.capturer.empty() ? std::string(target.default_capturer) : how.capturer;
  if (Status s = check_capturer_spec(capturer); !s.ok()) return Error{"--engine " + capturer + ": " + s.error().message};
  R3_TRY(const StepInputs in, step_inputs(c));

  std::string sizings = "{";
  int64_t most_rows = 0;
  for (std::string_view name : target.sizings) {
    const Allocation a = make_policy(name)->allocate(c);
    most_rows = std::max(most_rows, a.capture_rows);
    const std::optional<int64_t> second = target.second_rows(c, a, name);
    sizings += (sizings.size() > 1 ? ", " : "") + python_string_literal(name) + ": (" + text(a.capture_rows) + ", " +
               (second ? text(*second) : "None") + ")";
  }
  sizings += "}";

  // Every (kind, rank or layer, row) gets its own int32 value, above every id a capturer can hold
  // of its own accord (value_encoding.hpp).
  int64_t most_tokens = 0;
  for (int64_t n : in.num_tokens) most_tokens = std::max(most_tokens, n);
  R3_TRY(const ValueEncoding encoding,
         value_encoding({c.model.experts, c.topology.dp, c.model.layers, c.model.top_k,
                         std::max({in.row_span, most_rows, most_tokens}), in.host_slots}));

  std::string out = header(target);
  out += "CASE_FILE = " + python_string_literal(how.case_file) + "\n";
  out += "SUMMARY = " + python_string_literal(summarize(c)) + "\n";
  out += "NOTE = " + python_string_literal(c.note) + "\n";
  out += "EXPECT = " +
         (c.expect ? python_string_literal(c.expect->impl + ": " + std::string(to_string(c.expect->verdict)) +
                                           (c.expect->severity == Severity::none
                                                ? ""
                                                : " (" + std::string(to_string(c.expect->severity)) + ")"))
                   : std::string("None")) +
         "\n";
  out += "EXPORT_COMMAND = " + python_string_literal(how.export_command) + "\n";
  out += "DEFAULT_ENGINE = " + python_string_literal(capturer) + "\n";
  out += "ENGINE = os.environ.get(\"R3FUZZ_ENGINE\") or DEFAULT_ENGINE\n";
  out += "SIZINGS = " + sizings + "\n";
  out += "SIZING = os.environ.get(\"R3FUZZ_SIZING\") or " + python_string_literal(target.sizings.front()) + "\n\n";
  out += "DP, TP, LAYERS, TOP_K, LAYER = " + text(c.topology.dp) + ", " + text(c.topology.tp) + ", " +
         text(c.model.layers) + ", " + text(c.model.top_k) + ", " + text(c.layer) + "\n";
  out += "NUM_TOKENS = " + list(in.num_tokens) + "  # n_d: the rows each DP rank runs with\n";
  out += "SPAN_R = " + text(encoding.span_r) + "  # more than any row index below\n";
  out += "EXPERTS, SHARED_EXPERTS = " + text(c.model.experts) + ", " + text(kFusedSharedExperts) +
         "  # expert ids: routed 0 .. EXPERTS - 1, then the fused shared experts'\n";
  out += "BASE = " + text(encoding.base) +
         "  # every routing value below is at least BASE: no expert id, no fill value (-1, 0) is one\n";
  out += "REJECTION = " + (in.rejection ? python_string_literal(*in.rejection) : std::string("None")) + "\n\n";
  out += "# Every distinct routing tensor of the step, as runs (kind, dp, first row index, rows).\nTENSORS = [\n";
  for (const auto& tensor : in.tensors) {
    out += "    [";
    for (size_t i = 0; i < tensor.size(); ++i) out += std::string(i ? ", " : "") + "(" + run_tuple(tensor[i]) + ")";
    out += "],\n";
  }
  out += "]\n\n";
  out += target.engine_data(c, in);
  out += "# The reference's rows after the step, per (dp, tp): (buffer row, kind, dp, first index, rows) at LAYER;\n"
         "# every other row keeps its value from before the step.\nEXPECTED = {\n";
  for (size_t r = 0; r < in.expected.size(); ++r) {
    out += "    (" + text(static_cast<int64_t>(r) / c.topology.tp) + ", " + text(static_cast<int64_t>(r) % c.topology.tp) +
           "): [";
    for (size_t i = 0; i < in.expected[r].size(); ++i)
      out += std::string(i ? ", " : "") + "(" + text(in.expected[r][i].dst_row) + ", " + run_tuple(in.expected[r][i].run) + ")";
    out += "],\n";
  }
  out += "}\n";
  // Both engines' harnesses load the capturer the same way (ENGINE, or R3FUZZ_ENGINE when set).
  out += kLoadEngine;
  out += target.harness;
  return out;
}

}  // namespace r3
