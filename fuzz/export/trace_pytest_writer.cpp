#include "fuzz/export/trace_pytest_writer.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "fuzz/export/engine_target.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/export/step_inputs.hpp"
#include "fuzz/export/trace_route_python.hpp"
#include "fuzz/export/trace_target.hpp"
#include "fuzz/io/source_text.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/route.hpp"

namespace r3 {
namespace {

using py::list;
using py::text;

constexpr std::string_view kLoadEngine = R"PY(

def load_engine():
    module_name, _, class_name = ENGINE.partition(":")
    try:
        module = importlib.import_module(module_name)
        return module, getattr(module, class_name)
    except (ImportError, AttributeError) as e:
        pytest.fail(f"cannot load the lifecycle class {ENGINE} ({type(e).__name__}: {e}); set R3FUZZ_ENGINE=MODULE:CLASS "
                    f"(the module on PYTHONPATH) to test another", pytrace=False)


class EngineRaised(Exception):
    """The engine's own code raised (not the harness's): the serving run stops there."""


def engine_call(name, method, *args, **kwargs):
    """Calls the engine's `method`; what it raises becomes EngineRaised, naming the call."""
    try:
        return method(*args, **kwargs)
    except Exception as e:
        raise EngineRaised(f"{name} raised {type(e).__name__}: {e}") from None
)PY";

// The judgement every engine's test shares: the harness's serve() says what each finished
// request got, as ("routes", rows [n][LAYERS][TOP_K]), ("none", None), ("raised", why) or
// ("unfinished", why); the row i it returns stands for position EXPECTED[req][i][0].
constexpr std::string_view kJudge = R"PY(

HASHES = [prefix_hashes(tokens) for tokens in TOKENS]


def route_of(req, pos, version):
    """[LAYERS][TOP_K]: the route of request req at position pos, computed at weight version."""
    return [route_experts(HASHES[req][pos], layer, version, TOP_K, EXPERTS) for layer in range(LAYERS)]


def padding_row():
    return [[PADDING_VALUE] * TOP_K for _ in range(LAYERS)]


def describe(row):
    """What a returned row holds, in the words of r3fuzz's oracle."""
    for req, pos, version in FORWARDED:
        if route_of(req, pos, version) == row:
            return f"the route of request {req} position {pos} at weight version {version}"
    if row == padding_row():
        return "a padding row"
    if all(e == DRAFT_VALUE for layer in row for e in layer):
        return "a rejected draft's row"
    if all(e == 0 for layer in row for e in layer):
        return "a row nothing wrote (zeros)"
    return f"{row} (no route the trace computed)"


def check_request(req, outcome):
    kind, value = outcome
    expected = EXPECTED[req]
    if kind == "raised":
        pytest.fail(f"request {req}: {value}; the serving run fails", pytrace=False)
    if kind == "unfinished":
        pytest.fail(f"request {req} never finished: {value}", pytrace=False)
    if kind == "none":
        pytest.fail(f"request {req} finished without routed_experts, expected {len(expected)} rows", pytrace=False)
    rows = value
    wrong = [i for i in range(min(len(rows), len(expected))) if rows[i] != route_of(req, *expected[i])]
    if wrong:
        pos, version = expected[wrong[0]]
        pytest.fail(f"request {req} position {pos} holds {describe(rows[wrong[0]])}, expected the route at weight "
                    f"version {version} ({len(wrong)} of {len(rows)} rows wrong)", pytrace=False)
    if len(rows) != len(expected):
        span = f"positions [{expected[0][0]}, {expected[-1][0] + 1})" if expected else "no positions"
        pytest.fail(f"request {req} returned {len(rows)} rows, expected {len(expected)} ({span})", pytrace=False)


@pytest.fixture(scope="module")
def served():
    return serve(*load_engine())


@pytest.mark.parametrize("req", sorted(EXPECTED), ids=lambda req: f"request{req}")
def test_request_gets_its_routes(served, req):
    check_request(req, served.get(req, ("unfinished", "the trace ended first")))
)PY";

std::string header(const EngineTraceTarget& target) {
  return "\"\"\"A serving trace of r3fuzz as a pytest module: every step of the trace run on an engine's own\n"
         "lifecycle classes with real torch tensors, the engine's scheduler and model replaced by the\n"
         "trace. It needs torch (and numpy, which torch installs) and pytest only:\n\n"
         "    pytest THIS_FILE\n\n"
         "TRACE_FILE, NOTE and EXPECT say which trace it is and EXPORT_COMMAND how it was written.\n\n" +
         std::string(target.tests_doc) +
         "\nWhat it asserts: each request the trace finishes returns one row per position [s, S - 1) (s its\n"
         "start, S its prompt and kept outputs), and the row of position p is the route of its tokens\n"
         "[0..p] at the weight version of the forward whose KV it uses (EXPECTED), as route_experts\n"
         "computes it (r3fuzz's docs/TRACES.md, \"The truth\"). A failure names what the row holds instead.\n\n"
         "Pointing it elsewhere:\n"
         "  R3FUZZ_ENGINE=MODULE:CLASS  the lifecycle class to drive (default: DEFAULT_ENGINE, the engine's\n"
         "                              own, " +
         std::string(target.engine_source) +
         ";\n"
         "                              the module must be importable: put its folder on PYTHONPATH)\n" +
         std::string(target.env_doc) +
         "\"\"\"\n"
         "import importlib\nimport os\n\nimport pytest\nimport torch\n\n";
}

// The expert count the module draws routes from: the trace's E when every route the trace's
// forwards compute is distinct from every other and from a row nothing wrote (zeros), so that a
// misplaced row can never pass; else the smallest power of two above E where they are (up to
// 32768: TensorRT-LLM stores ids as int16). The module's truth and forwards use the same count.
int64_t telling_experts(const Trace& t, const std::set<std::tuple<int, int64_t, int>>& forwarded) {
  std::vector<std::vector<uint64_t>> hashes;
  for (const TraceRequest& r : t.requests) {
    std::vector<int32_t> tokens = r.prompt;
    tokens.insert(tokens.end(), r.outputs.begin(), r.outputs.end());
    hashes.push_back(prefix_hashes(tokens));
  }
  // Two rows of the same prefix at the same version are the same route (a prefix hit's).
  std::set<std::pair<uint64_t, int>> routes;
  for (const auto& [req, pos, version] : forwarded)
    routes.insert({hashes[static_cast<size_t>(req)][static_cast<size_t>(pos)], version});
  auto telling = [&](int64_t experts) {
    std::set<std::vector<int32_t>> seen;
    for (const auto& [hash, version] : routes) {
      std::vector<int32_t> row;
      for (int layer = 0; layer < t.model.layers; ++layer) {
        const std::vector<int32_t> e = route_experts(hash, layer, version, t.model.top_k, static_cast<int>(experts));
        row.insert(row.end(), e.begin(), e.end());
      }
      if (std::all_of(row.begin(), row.end(), [](int32_t e) { return e == 0; }) || !seen.insert(row).second) return false;
    }
    return true;
  };
  const int64_t experts = t.model.experts;
  if (telling(experts)) return experts;
  int64_t wider = 2;
  while (wider <= experts) wider *= 2;
  for (; wider < 32768 && !telling(wider); wider *= 2) {
  }
  return std::min<int64_t>(wider, 32768);
}

std::string expect_text(const Trace& t) {
  if (!t.expect) return "None";
  return python_string_literal(t.expect->impl + ": " + t.expect->verdict);
}

}  // namespace

Result<std::string> trace_pytest_module(const Trace& t, const PytestExport& how) {
  R3_TRY(const EngineTraceTarget* const found, trace_target(t));
  const EngineTraceTarget& target = *found;
  const std::string engine = how.capturer.empty() ? std::string(target.default_engine) : how.capturer;
  if (Status s = check_capturer_spec(engine); !s.ok()) return Error{"--engine " + engine + ": " + s.error().message};
  R3_TRY(const Timeline timeline, validate_trace(t));
  // Every forwarded row is listed (FORWARDED, and each engine's steps): a trace of a few extends
  // can forward millions, so the module is bounded as a case's is (docs/SECURITY.md).
  int64_t rows = 0;
  for (const StepView& step : timeline.steps)
    for (const auto& rank : step.rows) rows += static_cast<int64_t>(rank.size());
  if (rows > kMaxExportEntries)
    return Error{"the trace forwards " + std::to_string(rows) + " rows; an exported test lists at most " +
                 std::to_string(kMaxExportEntries) + " (kMaxExportEntries)"};
  R3_TRY(const std::string engine_data, target.engine_data(t, timeline));

  // Rows whose position lies past the request's known tokens (a rejected draft's) cannot be named.
  std::set<std::tuple<int, int64_t, int>> forwarded;
  for (const StepView& step : timeline.steps)
    for (const auto& rank : step.rows)
      for (const BatchRow& row : rank)
        if (row.pos < static_cast<int64_t>(t.requests[static_cast<size_t>(row.req)].prompt.size() +
                                           t.requests[static_cast<size_t>(row.req)].outputs.size()))
          forwarded.insert({row.req, row.pos, step.version});
  std::string out = header(target);
  out += "TRACE_FILE = " + python_string_literal(how.case_file) + "\n";
  out += "NOTE = " + python_string_literal(t.note) + "\n";
  out += "EXPECT = " + expect_text(t) + "\n";
  out += "EXPORT_COMMAND = " + python_string_literal(how.export_command) + "\n";
  out += "DEFAULT_ENGINE = " + python_string_literal(engine) + "\n";
  out += "ENGINE = os.environ.get(\"R3FUZZ_ENGINE\") or DEFAULT_ENGINE\n\n";
  const int64_t experts = telling_experts(t, forwarded);
  out += "LAYERS, TOP_K, EXPERTS = " + text(t.model.layers) + ", " + text(t.model.top_k) + ", " + text(experts) + "\n";
  if (experts != t.model.experts)
    out += "# The trace's model has E = " + text(t.model.experts) +
           ", too few to tell every route its forwards compute apart (a misplaced row\n"
           "# could pass): the test draws expert ids from " + text(experts) + ", the fewest that tell them all apart.\n";
  out += "PADDING_VALUE = -2  # every expert id of a padding or dummy row the fake forward computes\n";
  out += "DRAFT_VALUE = -3  # every expert id of a rejected draft's row (its token is not the one sampled)\n";
  out += "# Every request's tokens (its prompt, then the outputs the sampler returned) and prompt length.\nTOKENS = [\n";
  for (const TraceRequest& r : t.requests) {
    std::vector<int32_t> tokens = r.prompt;
    tokens.insert(tokens.end(), r.outputs.begin(), r.outputs.end());
    out += "    " + list(tokens) + ",\n";
  }
  out += "]\nPROMPT_LEN = [";
  for (size_t i = 0; i < t.requests.size(); ++i) out += (i ? ", " : "") + text(static_cast<int64_t>(t.requests[i].prompt.size()));
  out += "]\n";
  out += "# Every row the trace's forwards compute: (request, position, weight version).\nFORWARDED = [";
  size_t n = 0;
  for (const auto& [req, pos, version] : forwarded)
    out += std::string(n++ ? ", " : "") + "(" + text(req) + ", " + text(pos) + ", " + text(version) + ")";
  out += "]\n";
  out += "# What each finished request must return: per position [s, S - 1), (position, the weight version of\n"
         "# the forward whose KV it uses there).\nEXPECTED = {\n";
  for (size_t r = 0; r < timeline.requests.size(); ++r) {
    const RequestView& v = timeline.requests[r];
    if (!v.returns_output) continue;
    out += "    " + text(static_cast<int64_t>(r)) + ": [";
    for (size_t i = 0; i < v.expected.size(); ++i)
      out += std::string(i ? ", " : "") + "(" + text(v.start + static_cast<int64_t>(i)) + ", " +
             text(v.expected[i].version) + ")";
    out += "],\n";
  }
  out += "}\n";
  out += kRoutePython;
  out += "\n\n" + engine_data;
  out += kLoadEngine;
  out += target.harness;
  out += kJudge;
  return out;
}

}  // namespace r3
