#include "fuzz/cli/trace_explain.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace r3 {
namespace {

std::string req_name(int req) { return "r" + std::to_string(req); }

// Columns padded to their widest cell, two spaces apart, trailing blanks cut.
class TextTable {
 public:
  // A header starting with '>' names a right-aligned column (the '>' is not printed).
  explicit TextTable(std::vector<std::string> header) {
    for (std::string& h : header) {
      const bool right = !h.empty() && h[0] == '>';
      right_.push_back(right);
      header_.push_back(right ? h.substr(1) : std::move(h));
    }
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  std::string render(bool with_header = true) const {
    std::vector<size_t> width(header_.size(), 0);
    for (size_t i = 0; i < header_.size(); ++i) width[i] = with_header ? header_[i].size() : 0;
    for (const auto& row : rows_) {
      for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    std::string out = with_header ? line(header_, width) : "";
    for (const auto& row : rows_) out += line(row, width);
    return out;
  }

 private:
  std::string line(const std::vector<std::string>& row, const std::vector<size_t>& width) const {
    std::string s = "  ";
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      s += (i ? "  " : "") + (right_[i] ? pad + row[i] : row[i] + pad);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  }

  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

std::string int_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string tokens_text(const std::vector<int32_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

// ---- The header.

std::string config_text(const TraceConfig& c) {
  std::string s = "token_budget " + std::to_string(c.token_budget) + " chunk " + std::to_string(c.chunk) + " page " +
                  std::to_string(c.page) + " kv_slots " + std::to_string(c.kv_slots) + " prefix_cache " +
                  (c.prefix_cache ? "true" : "false") + " overlap " + (c.overlap ? "true" : "false") + " spec ";
  s += c.spec ? "width " + std::to_string(c.spec->width) + (c.spec->tree ? " tree" : " chain") : "null";
  return s + " cuda_graph " + int_list(c.cuda_graph_decode);
}

std::string header_text(const Trace& t) {
  std::string s = "trace: engine " + std::string(t.engine.name()) + ", profile " +
                  (t.profile ? std::string(t.profile->name()) : "none") + ", dp " + std::to_string(t.dp) + " tp " +
                  std::to_string(t.tp) + ", model layers " + std::to_string(t.model.layers) + " top_k " +
                  std::to_string(t.model.top_k) + " experts " + std::to_string(t.model.experts) + ", config " +
                  config_text(t.config) + ", knobs";
  if (t.knobs.empty()) s += " none";
  for (const auto& [key, value] : t.knobs) s += " " + key + "=" + value;
  s += "\n";
  if (!t.note.empty()) s += "note: " + t.note + "\n";
  if (t.expect) s += "expect: impl " + t.expect->impl + " verdict " + t.expect->verdict + "\n";
  return s;
}

// ---- The requests.

std::string request_notes(const TraceRequest& r, const RequestView& view) {
  std::vector<std::string> notes;
  if (r.max_new) notes.push_back("max_new " + std::to_string(*r.max_new));
  if (r.start_len != view.start) notes.push_back("start_len " + std::to_string(r.start_len));
  if (r.arrival) notes.push_back("arrival " + std::to_string(*r.arrival));
  if (r.resume_of) notes.push_back("resumes " + req_name(*r.resume_of));
  if (view.finish_step < 0) {
    notes.push_back("unfinished");
  } else if (!view.returns_output) {
    notes.push_back("no output");
  }
  std::string s;
  for (const std::string& n : notes) s += (s.empty() ? "" : ", ") + n;
  return s;
}

std::string requests_text(const Trace& t, const Timeline& timeline) {
  TextTable table({"id", ">dp", ">P", ">outputs", "finish", ">start", ">S", ">rows", "tokens", "notes"});
  for (size_t i = 0; i < t.requests.size() && i < timeline.requests.size(); ++i) {
    const TraceRequest& r = t.requests[i];
    const RequestView& v = timeline.requests[i];
    table.add({req_name(r.id), std::to_string(r.dp), std::to_string(v.prompt_len), std::to_string(r.outputs.size()),
               std::string(to_string(r.finish)), std::to_string(v.start), std::to_string(v.total),
               v.returns_output ? std::to_string(v.expected.size()) : "-",
               tokens_text(r.prompt) + " | " + tokens_text(r.outputs), request_notes(r, v)});
  }
  return "requests:\n" + table.render();
}

// ---- The timeline.

std::string event_text(const TraceEvent& e) {
  if (e.kind == TraceEvent::Kind::weight_update) {
    return "weight v" + std::to_string(e.version) + (e.flush ? " flush" : "");
  }
  std::string s = std::string(to_string(e.kind)) + " " + req_name(e.req);
  if (e.kind == TraceEvent::Kind::hit) s += " len " + std::to_string(e.len);
  return s;
}

// "r0:0-3 r2:0-1": runs of consecutive positions of one request, alike in kept and lagging.
std::string rows_text(const std::vector<BatchRow>& rows) {
  if (rows.empty()) return "-";
  std::string out;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i + 1;
    while (j < rows.size() && rows[j].req == rows[i].req && rows[j].kept == rows[i].kept &&
           rows[j].lagging == rows[i].lagging && rows[j].pos == rows[j - 1].pos + 1) {
      ++j;
    }
    out += (i ? " " : "") + req_name(rows[i].req) + ":" + std::to_string(rows[i].pos);
    if (j - 1 > i) out += "-" + std::to_string(rows[j - 1].pos);
    if (rows[i].lagging) {
      out += "~";
    } else if (!rows[i].kept) {
      out += "x";
    }
    i = j;
  }
  return out;
}

std::string end_text(const StepView& step) {
  std::string s;
  auto list = [&s](const char* what, const std::vector<int>& reqs) {
    if (reqs.empty()) return;
    s += std::string(s.empty() ? "" : ", ") + what;
    for (int r : reqs) s += " " + req_name(r);
  };
  list("aborted", step.aborted_before);
  list("done", step.finished);
  return s;
}

std::string steps_text(const Trace& t, const Timeline& timeline) {
  std::vector<std::string> header = {">step", ">v", "events"};
  for (int d = 0; d < t.dp; ++d) header.push_back("dp" + std::to_string(d));
  header.push_back("end");
  TextTable table(std::move(header));
  for (size_t k = 0; k < t.steps.size() && k < timeline.steps.size(); ++k) {
    const StepView& step = timeline.steps[k];
    std::string events;
    for (const TraceEvent& e : t.steps[k].events) events += (events.empty() ? "" : ", ") + event_text(e);
    std::vector<std::string> row = {std::to_string(k), std::to_string(step.version), events};
    for (int d = 0; d < t.dp; ++d) {
      row.push_back(static_cast<size_t>(d) < step.rows.size() ? rows_text(step.rows[d]) : "-");
    }
    row.push_back(end_text(step));
    table.add(std::move(row));
  }
  return "steps:\n" + table.render();
}

// ---- The routes.

bool continues(const RouteRef& prev, const RouteRef& next) {
  if (next.kind != prev.kind) return false;
  if (next.kind == RouteRef::Kind::padding || next.kind == RouteRef::Kind::never_written) return true;
  return next.req == prev.req && next.version == prev.version && next.pos == prev.pos + 1;
}

// "r0:0-3@v0 r1:4-5@v0", "draft r0:6-7", "pad*2", "zero".
std::string refs_text(std::span<const RouteRef> refs) {
  if (refs.empty()) return "(0 rows)";
  std::string out;
  for (size_t i = 0; i < refs.size();) {
    size_t j = i + 1;
    while (j < refs.size() && continues(refs[j - 1], refs[j])) ++j;
    const RouteRef& r = refs[i];
    const std::string positions =
        req_name(r.req) + ":" + std::to_string(r.pos) + (j - 1 > i ? "-" + std::to_string(refs[j - 1].pos) : "");
    const std::string count = j - i > 1 ? "*" + std::to_string(j - i) : "";
    std::string run;
    switch (r.kind) {
      case RouteRef::Kind::route: run = positions + "@v" + std::to_string(r.version); break;
      case RouteRef::Kind::draft: run = "draft " + positions; break;
      case RouteRef::Kind::padding: run = "pad" + count; break;
      case RouteRef::Kind::never_written: run = "zero" + count; break;
    }
    out += (i ? " " : "") + run;
    i = j;
  }
  return out;
}

std::string ref_text(const RouteRef& ref) { return refs_text(std::span<const RouteRef>(&ref, 1)); }

// "at position 4: returned r0:4@v0, expected r1:4@v0", or nothing when the rows agree.
std::optional<std::string> first_difference(const Timeline& timeline, int64_t start,
                                            const std::vector<RouteRef>& expected,
                                            const std::vector<RouteRef>& returned) {
  for (size_t i = 0; i < std::max(expected.size(), returned.size()); ++i) {
    const bool have = i < returned.size();
    const bool want = i < expected.size();
    if (have && want && returned[i].kind == RouteRef::Kind::route && timeline.same_route(returned[i], expected[i])) {
      continue;
    }
    return "at position " + std::to_string(start + static_cast<int64_t>(i)) + ": returned " +
           (have ? ref_text(returned[i]) : "nothing") + ", expected " + (want ? ref_text(expected[i]) : "nothing");
  }
  return std::nullopt;
}

std::string routes_text(const Trace& t, const Timeline& timeline, const TraceJudgement& judged) {
  TextTable table({"", "", ""});
  static const std::vector<RouteRef> kNone;
  for (size_t i = 0; i < t.requests.size() && i < timeline.requests.size(); ++i) {
    const RequestView& view = timeline.requests[i];
    const std::vector<RouteRef>& expected = view.returns_output ? view.expected : kNone;
    table.add({req_name(static_cast<int>(i)), "expected",
               view.returns_output ? refs_text(expected) : "nothing (returns no output)"});
    const RequestRoutes got = i < judged.returned.size() ? judged.returned[i] : RequestRoutes{};
    std::optional<std::string> differs;
    switch (got.status) {
      case RequestRoutes::Status::returned:
        table.add({"", "returned", refs_text(got.rows)});
        differs = first_difference(timeline, view.start, expected, got.rows);
        break;
      case RequestRoutes::Status::none:
        table.add({"", "returned", "none (finished without routes)"});
        if (view.returns_output) differs = "no routes came back";
        break;
      case RequestRoutes::Status::not_finished:
        table.add({"", "returned", "nothing (never finished)"});
        if (view.returns_output) differs = "the engine never finished it";
        break;
    }
    if (differs) table.add({"", "differs", *differs});
  }
  std::string verdict = "verdict: " + std::string(to_string(judged.verdict));
  if (judged.verdict != TraceVerdict::pass) verdict += " (" + std::string(to_string(severity_of(judged.verdict))) + ")";
  if (!judged.detail.empty()) verdict += ": " + judged.detail;
  return "routes:\n" + table.render(false) + verdict + "\n";
}

}  // namespace

std::string explain_trace_text(const Trace& t, const Timeline& timeline, const TraceJudgement* judged) {
  std::string out = header_text(t) + requests_text(t, timeline) + steps_text(t, timeline);
  if (judged) out += routes_text(t, timeline, *judged);
  return out;
}

}  // namespace r3
