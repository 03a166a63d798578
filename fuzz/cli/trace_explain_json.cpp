#include "fuzz/cli/trace_explain_json.hpp"

#include "reference/engine.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;

json route_json(const RouteRef& r) {
  switch (r.kind) {
    case RouteRef::Kind::route: return {{"kind", "route"}, {"req", r.req}, {"pos", r.pos}, {"version", r.version}};
    case RouteRef::Kind::draft: return {{"kind", "draft"}, {"req", r.req}, {"pos", r.pos}, {"version", r.version}};
    case RouteRef::Kind::padding: return {{"kind", "padding"}};
    case RouteRef::Kind::never_written: break;
  }
  return {{"kind", "never_written"}};
}

json routes_json(const std::vector<RouteRef>& rows) {
  json out = json::array();
  for (const RouteRef& r : rows) out.push_back(route_json(r));
  return out;
}

std::string status_text(RequestRoutes::Status s) {
  switch (s) {
    case RequestRoutes::Status::returned: return "returned";
    case RequestRoutes::Status::none: return "none";
    case RequestRoutes::Status::not_finished: break;
  }
  return "not_finished";
}

json requests_json(const Trace& t, const Timeline& timeline) {
  json out = json::array();
  for (size_t r = 0; r < timeline.requests.size() && r < t.requests.size(); ++r) {
    const RequestView& v = timeline.requests[r];
    out.push_back({{"id", r},
                   {"dp", t.requests[r].dp},
                   {"prompt_len", v.prompt_len},
                   {"kept_outputs", v.kept_outputs},
                   {"total", v.total},
                   {"start", v.start},
                   {"finish_step", v.finish_step < 0 ? json(nullptr) : json(v.finish_step)},
                   {"returns_output", v.returns_output},
                   {"expected", routes_json(v.expected)}});
  }
  return out;
}

json steps_json(const Timeline& timeline) {
  json out = json::array();
  for (size_t s = 0; s < timeline.steps.size(); ++s) {
    const StepView& step = timeline.steps[s];
    json ranks = json::array();
    for (const auto& rows : step.rows) {
      json rank = json::array();
      for (const BatchRow& row : rows)
        rank.push_back({{"req", row.req}, {"pos", row.pos}, {"kept", row.kept}, {"lagging", row.lagging}});
      ranks.push_back(std::move(rank));
    }
    out.push_back({{"step", s},
                   {"version", step.version},
                   {"rows", std::move(ranks)},
                   {"finished", step.finished},
                   {"aborted_before", step.aborted_before}});
  }
  return out;
}

json judgement_json(const NamedTraceJudgement& n) {
  const TraceJudgement& j = n.judgement;
  json returned = json::array();
  for (const RequestRoutes& r : j.returned) returned.push_back({{"status", status_text(r.status)}, {"rows", routes_json(r.rows)}});
  return {{"impl", n.impl},
          {"verdict", std::string(to_string(j.verdict))},
          {"request", j.request < 0 ? json(nullptr) : json(j.request)},
          {"position", j.position < 0 ? json(nullptr) : json(j.position)},
          {"detail", j.detail},
          {"root_cause", n.root_cause.empty() ? json(nullptr) : json(n.root_cause)},
          {"returned", std::move(returned)}};
}

}  // namespace

json explain_trace_json(const std::string& file, const Trace& t, const Timeline& timeline,
                        const std::vector<NamedTraceJudgement>& judged) {
  json judgements = json::array();
  for (const NamedTraceJudgement& n : judged) judgements.push_back(judgement_json(n));
  return {{"format", "r3fuzz-explain-trace/1"},
          {"trace", file},
          {"engine", std::string(t.engine.name())},
          {"dp", t.dp},
          {"tp", t.tp},
          {"requests", requests_json(t, timeline)},
          {"steps", steps_json(timeline)},
          {"judgements", std::move(judgements)}};
}

}  // namespace r3
