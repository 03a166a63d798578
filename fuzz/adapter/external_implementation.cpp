#include "fuzz/adapter/external_implementation.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "fuzz/adapter/batch.hpp"
#include "fuzz/adapter/engine_adapter.hpp"
#include "fuzz/adapter/row_writes.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/strict_json.hpp"
#include "fuzz/oracle/host_executor.hpp"
#include "reference/capturer.hpp"
#include "reference/provenance.hpp"

namespace r3 {
namespace {

using nlohmann::json;

Deadline deadline_after(std::chrono::milliseconds timeout) { return std::chrono::steady_clock::now() + timeout; }

std::string seconds_text(std::chrono::milliseconds ms) {
  const int64_t n = ms.count();
  std::string text = std::to_string(n / 1000);
  if (n % 1000) {
    std::string frac = std::to_string(1000 + n % 1000).substr(1);
    while (frac.back() == '0') frac.pop_back();
    text += "." + frac;
  }
  return text + " s";
}

// The adapter's replies, replayed as a capture policy so the host executor applies them
// exactly as it applies a built-in model's decisions (guards, replay kernel and all).
class RecordedReplies final : public CapturePolicy {
 public:
  RecordedReplies(Allocation allocation, std::map<std::tuple<int, int, int>, CaptureReply> replies)
      : allocation_(allocation), replies_(std::move(replies)) {}
  std::string_view name() const override { return "external"; }
  Allocation allocate(const Case&) const override { return allocation_; }
  void decide(const CaptureCall& call, CaptureDecision& out) const override {
    const CaptureReply& reply = replies_.at({call.call_index, call.dp_rank, call.tp_rank});
    if (reply.rejected) return out.reject(reply.error);
    out.branch = adapter_branch_name(reply.branch);
    out.copies = reply.copies;
    // Rows the adapter wrote itself are placed afterwards; a zero-row copy from the TP
    // gather records that the rank issued the collective (the judge's hang check needs it).
    // A copies reply's "tp_all_gather": true counts as much as a rows reply's, even when no
    // copy reads the gathered tensor: ranks that disagree on it are a collective_mismatch.
    const bool copies_gather = std::any_of(out.copies.begin(), out.copies.end(),
                                           [](const Copy& copy) { return copy.from_tp_gather; });
    if (reply.used_tp_all_gather && !copies_gather) out.copies.push_back({0, 0, 0, true});
  }

 private:
  Allocation allocation_;
  std::map<std::tuple<int, int, int>, CaptureReply> replies_;
};

// Copies turned into the rows they write (rows past the source's end are not written, as
// the host executor does), for a rank whose other calls wrote rows: order must hold.
std::vector<RowWrite> rows_of_copies(const Call& call, const RankView& view, int tp, const std::vector<Copy>& copies,
                                     int top_k) {
  std::vector<RowWrite> writes;
  RowTensor scratch;
  for (const Copy& copy : copies) {
    const RowTensor& source = copy_source(call, view, copy.from_tp_gather, tp, scratch);
    const int64_t end = std::min(source.rows(), copy.src_row + copy.rows);
    for (int64_t row = copy.src_row; row < end; ++row) {
      RowWrite& w = writes.emplace_back();
      w.dst_row = copy.dst_row + (row - copy.src_row);
      for (int k = 0; k < top_k; ++k) w.values.push_back(routing_value(source.at(row), k));
    }
  }
  return writes;
}

// The rows a reply's copies read, each clamped to its source as the host executor reads it,
// refused past the rows the call hands the rank (topk_ids, and tp_all_gather when T > 1): a
// capture copies each of them at most once a call, and a short reply naming a copy many times
// over would otherwise cost as many row writes as it names (docs/SECURITY.md).
Status check_copies_read(const CaptureReply& reply, const Call& call, const RankView& view, int tp) {
  RowTensor scratch;
  const int64_t handed = copy_source(call, view, false, tp, scratch).rows() +
                         (tp > 1 ? copy_source(call, view, true, tp, scratch).rows() : 0);
  int64_t read = 0;
  for (const Copy& copy : reply.copies) {
    const int64_t source_rows = copy_source(call, view, copy.from_tp_gather, tp, scratch).rows();
    read += std::clamp<int64_t>(source_rows - copy.src_row, 0, copy.rows);
    if (read > handed)
      return Error{"the reply to request " + std::to_string(reply.id) + ": copies read more than the " +
                   std::to_string(handed) + " rows the call hands the rank (topk_ids" +
                   (tp > 1 ? std::string(" and tp_all_gather") : std::string()) +
                   "; a capture copies each at most once)"};
  }
  return ok_status();
}

}  // namespace

std::string quote_line(const std::string& text, size_t limit) {
  const bool cut = text.size() > limit;
  const std::string shown = json(cut ? text.substr(0, limit) : text).dump(-1, ' ', false, json::error_handler_t::replace);
  if (!cut) return shown;
  return shown.substr(0, shown.size() - 1) + "...\" (" + std::to_string(text.size()) + " bytes)";
}

ExternalImplementation::ExternalImplementation(ExternalOptions options) : options_(std::move(options)) {}

ExternalImplementation::~ExternalImplementation() = default;

std::string ExternalImplementation::name() const { return "external:" + options_.command; }

std::optional<AdapterHello> ExternalImplementation::hello() const {
  std::lock_guard lock(mutex_);
  return hello_;
}

int ExternalImplementation::starts() const {
  std::lock_guard lock(mutex_);
  return starts_;
}

Status ExternalImplementation::connect() {
  std::lock_guard lock(mutex_);
  return ensure_running();
}

namespace {

JsonBudget reply_budget(const ExternalOptions& o) { return {kMaxJsonDepth, o.max_parsed_bytes}; }

// "<what> is not JSON: " for a syntax error (docs/adapter-protocol.md's wording), else
// "<what>: duplicate key \"id\" at line 1, column 20: " (one strict parser for every file and reply;
// the message cut as any reply text, since it may quote a key of the reply).
std::string reply_problem(const std::string& what, const Error& e) {
  if (e.message.starts_with(kInvalidJson)) return what + " is not JSON: ";
  return what + ": " + stored_reply_text(e.message) + ": ";
}

}  // namespace

Allocation ExternalImplementation::allocate(const Case& c) const {
  std::lock_guard lock(mutex_);
  Allocation a;
  a.capture_rows = c.max_num_tokens;  // the capture buffer is [M, L, K] in every engine
  if (c.monolithic) a.replay_rows = replay_rows_for(hello_ ? hello_->replay_rows : ReplaySizing::dispatch_group, c);
  return a;
}

Error ExternalImplementation::fail(std::string message) const {
  child_.kill_and_reap();
  return Error{std::move(message)};
}

Status ExternalImplementation::ensure_running() const {
  if (child_.running()) return ok_status();
  if (options_.stop && options_.stop->load()) return Error{"interrupted before the adapter started"};
  R3_TRY(child_, ChildProcess::start(options_.command, options_.stderr_log, options_.stop));
  ++starts_;
  R3_TRY(std::string line, exchange(hello_request().dump(), "the hello", options_.startup_timeout));
  const Result<json> parsed = parse_json_strictly(line, reply_budget(options_));
  if (!parsed) return fail(reply_problem("the adapter's hello", parsed.error()) + quote_line(line));
  auto hello = read_hello(*parsed);
  if (!hello) return fail(hello.error().message + ": " + quote_line(line));
  hello_ = std::move(*hello);
  return ok_status();
}

// The adapter stopped talking (EOF on its stdout, or its stdin closed): say how it ended.
Error ExternalImplementation::ended(const std::string& what, const std::string& unfinished) const {
  const std::optional<std::string> how = child_.wait_for_exit(std::chrono::milliseconds(500));
  return fail((how ? "the adapter " + *how : std::string("the adapter closed its pipes but kept running (killed)")) +
              " before replying to " + what +
              (unfinished.empty() ? std::string() : "; its unfinished line: " + quote_line(unfinished)));
}

Result<std::string> ExternalImplementation::exchange(const std::string& request, const std::string& what,
                                                     std::chrono::milliseconds timeout) const {
  const auto sent = child_.write_all(request + "\n", deadline_after(timeout));
  if (!sent) {
    if (sent.error().message == "the adapter closed its stdin") return ended(what, "");
    return fail("cannot send " + what + ": " + sent.error().message);
  }
  ChildProcess::Line line = child_.read_line(deadline_after(timeout), options_.max_line_bytes);
  switch (line.kind) {
    case ChildProcess::Line::Kind::line:
      return std::move(line.text);
    case ChildProcess::Line::Kind::timeout:
      return fail("no reply to " + what + " within " + seconds_text(timeout) +
                  (line.text.empty() ? std::string() : "; partial line: " + quote_line(line.text)));
    case ChildProcess::Line::Kind::too_long:
      return fail("the reply to " + what + " is longer than " + std::to_string(options_.max_line_bytes) +
                  " bytes: " + quote_line(line.text));
    case ChildProcess::Line::Kind::eof:
      return ended(what, line.text);
    case ChildProcess::Line::Kind::interrupted:
      return fail("interrupted while waiting for the reply to " + what);
  }
  return fail("unreachable");
}

Result<json> ExternalImplementation::parse_reply(const std::string& line, const std::string& what) const {
  Result<json> parsed = parse_json_strictly(line, reply_budget(options_));
  if (!parsed) return fail(reply_problem("the reply to " + what, parsed.error()) + quote_line(line));
  return parsed;
}

// Call by call, rank by rank: the order an engine's ranks reach capture() in one step. Each
// request is built just before it is sent, so a failure consumes the ids sent so far only.
Result<std::vector<CaptureReply>> ExternalImplementation::exchange_each(const json& case_json, const Step& step,
                                                                        const BufferShape& buffer,
                                                                        const RequestContext* context) const {
  std::vector<CaptureReply> out;
  for (const Call& call : step.calls) {
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView view = call.view(r);
      const int64_t id = next_id_++;
      const std::string what = "request " + std::to_string(id);
      R3_TRY(std::string line, exchange(capture_request(id, case_json, step, call, view, buffer, context).dump(), what, options_.timeout));
      R3_TRY(const json reply, parse_reply(line, what));
      auto got_id = reply_id(reply);
      if (!got_id) return fail("the reply to " + what + ": " + got_id.error().message + ": " + quote_line(line));
      if (*got_id != id)
        return fail("the reply to " + what + " carries id " + std::to_string(*got_id) + ": " + quote_line(line));
      auto parsed = read_capture_reply(reply, buffer);
      if (!parsed) return fail("the reply to " + what + ": " + parsed.error().message + ": " + quote_line(line));
      out.push_back(std::move(*parsed));
    }
  }
  return out;
}

// The same requests in one line, and their replies in one line. --adapter-timeout bounds that
// one reply: a batch is one exchange, and a hung adapter is found as fast as unbatched.
Result<std::vector<CaptureReply>> ExternalImplementation::exchange_batch(const json& case_json, const Step& step,
                                                                         const BufferShape& buffer,
                                                                         const RequestContext* context) const {
  const int64_t first = next_id_;
  size_t count = 0;
  for (const Call& call : step.calls) count += call.rank_count();
  next_id_ += static_cast<int64_t>(count);
  const std::string what = batch_name(first, count);
  R3_TRY(std::string line, exchange(batch_request(first, case_json, step, buffer, context), what, options_.timeout));
  R3_TRY(const json reply, parse_reply(line, what));
  auto replies = read_batch_reply(reply, first, count, buffer);
  if (!replies) return fail("the reply to " + what + ": " + replies.error().message + ": " + quote_line(line));
  return std::move(*replies);
}

bool ExternalImplementation::serves(Engine engine) const {
  std::lock_guard lock(mutex_);
  if (!hello_) return true;
  return hello_->serves(engine);
}

// What an engine's exchange may do with the adapter, under run_concrete()'s lock.
class ExternalImplementation::Channel final : public AdapterChannel {
 public:
  explicit Channel(const ExternalImplementation& impl) : impl_(impl) {}
  const AdapterHello& hello() const override { return *impl_.hello_; }
  int64_t take_ids(size_t count) override {
    const int64_t first = impl_.next_id_;
    impl_.next_id_ += static_cast<int64_t>(count);
    return first;
  }
  Result<AdapterReply> round_trip(const std::string& request, const std::string& what) override {
    R3_TRY(std::string line, impl_.exchange(request, what, impl_.options_.timeout));
    R3_TRY(json reply, impl_.parse_reply(line, what));
    return AdapterReply{std::move(line), std::move(reply)};
  }
  Error fail(std::string message) override { return impl_.fail(std::move(message)); }
  Result<ConcreteOutcome> exchange_capture_requests(const Case& c, const Step& step,
                                                    const RequestContext* context) override {
    return impl_.run_capture_requests(c, step, context);
  }

 private:
  const ExternalImplementation& impl_;
};

// The case's engine says how its steps travel (fuzz/adapter/engine_adapter.hpp).
Result<ConcreteOutcome> ExternalImplementation::run_concrete(const Case& c, const Step& step) const {
  const EngineAdapter* part = engine_adapter(c.engine);
  if (!part) {
    return Error{"the engine " + std::string(c.engine.name()) +
                 " has no adapter exchange: an external adapter cannot run its steps"};
  }
  std::lock_guard lock(mutex_);
  R3_TRY_STATUS(ensure_running());
  Channel channel(*this);
  return part->exchange_step(channel, c, step);
}

Result<ConcreteOutcome> ExternalImplementation::run_capture_requests(const Case& c, const Step& step,
                                                                     const RequestContext* context) const {
  Allocation allocation;
  allocation.capture_rows = c.max_num_tokens;
  if (c.monolithic) allocation.replay_rows = replay_rows_for(hello_->replay_rows, c);
  const BufferShape buffer{allocation.capture_rows, c.model.layers, c.model.top_k};
  const json case_json = case_to_json(c);

  R3_TRY(std::vector<CaptureReply> ordered,
         hello_->batch ? exchange_batch(case_json, step, buffer, context) : exchange_each(case_json, step, buffer, context));
  std::map<std::tuple<int, int, int>, CaptureReply> replies;
  size_t next = 0;
  for (const Call& call : step.calls)
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView view = call.view(r);
      CaptureReply& reply = ordered[next++];
      if (reply.has_copies)
        if (Status read = check_copies_read(reply, call, view, step.tp); !read.ok()) return fail(read.error().message);
      replies.emplace(std::make_tuple(call.index, view.dp, view.tp), std::move(reply));
    }

  // A rank that wrote rows in some call has all its calls applied as rows, in call order.
  for (int r = 0; r < step.dp * step.tp; ++r) {
    const int dp = r / step.tp, tp = r % step.tp;
    bool wrote_rows = false;
    for (const Call& call : step.calls) {
      const CaptureReply& reply = replies.at({call.index, dp, tp});
      wrote_rows = wrote_rows || (!reply.rejected && !reply.has_copies);
    }
    if (!wrote_rows) continue;
    for (const Call& call : step.calls) {
      CaptureReply& reply = replies.at({call.index, dp, tp});
      if (reply.rejected || !reply.has_copies) continue;
      reply.writes = rows_of_copies(call, call.view(static_cast<size_t>(r)), step.tp, reply.copies, c.model.top_k);
      reply.has_copies = false;
    }
  }

  // A reply's dst_row is data: the guard regions it can grow hold at most as many rows as the
  // buffer itself, so no reply sizes more than three times the buffer the case needs. A write
  // further out lands on the outermost guard row: still an overflow, its extent read as the
  // guard's (docs/SECURITY.md).
  const int64_t guard_rows = std::max(kMinGuardRows, allocation.capture_rows);
  const RecordedReplies recorded(allocation, replies);
  ConcreteOutcome outcome = execute_on_host(c, step, recorded, nullptr, guard_rows);
  for (ConcreteRank& rank : outcome.ranks) {
    for (const Call& call : step.calls) {
      const CaptureReply& reply = replies.at({call.index, rank.dp, rank.tp});
      if (!reply.rejected && !reply.has_copies)
        apply_row_writes(rank.capture, step.layer, c.model.top_k, reply.writes, guard_rows);
    }
  }
  return outcome;
}

}  // namespace r3
