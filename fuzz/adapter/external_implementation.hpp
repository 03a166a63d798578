// `external:COMMAND`: an implementation under test that lives in another process and speaks
// the adapter protocol (docs/adapter-protocol.md). The command starts once; every capture
// call of every rank becomes one request line and one reply line, or, when the adapter's
// hello says "batch": true, every case becomes one request line and one reply line. What the replies ask for
// is applied to guarded buffers by the host executor (copies) or written as given (rows),
// and the result is judged like any other concrete implementation. That is the base protocol; a
// case's engine may send its steps as its own requests instead (fuzz/adapter/engine_adapter.hpp).
//
// An adapter that times out, answers something that is not a valid reply, answers another
// request (or, batched, the wrong number of replies or replies out of order), or dies makes run_concrete() return an Error quoting what it sent; the child is
// killed and reaped, and the next case starts a fresh one.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/adapter/child_process.hpp"
#include "fuzz/adapter/protocol.hpp"
#include "reference/implementation.hpp"

namespace r3 {

struct ExternalOptions {
  std::string command;                           // run with /bin/sh -c
  std::chrono::milliseconds timeout{5000};       // per reply (and per request written)
  std::chrono::milliseconds startup_timeout{30000};  // for the hello: an engine may import for a while
  std::string stderr_log;                        // the adapter's stderr: appended here; "" = r3fuzz's stderr
  size_t max_line_bytes = size_t{64} << 20;      // a longer reply is an error
  // A reply's parsed form (fuzz/io/strict_json.hpp's JsonBudget) may take at most this much:
  // tiny values cost about ten times their text, so a 64 MiB line could take 700 MB, and each
  // --jobs worker parses its own. The largest concrete case's batch reply parses to ~25 MB.
  size_t max_parsed_bytes = size_t{256} << 20;
  // Set (by SIGINT, SIGTERM or SIGHUP): waits end at once with an "interrupted" error and no
  // adapter is started; the caller, which set it, drops that result rather than report it.
  const std::atomic<bool>* stop = nullptr;
};

class ExternalImplementation final : public Implementation {
 public:
  explicit ExternalImplementation(ExternalOptions options);
  ~ExternalImplementation() override;

  // Starts the adapter and exchanges the hello now, so a command that cannot start or
  // speaks another protocol is reported before any case runs.
  Status connect();

  std::string name() const override;  // "external:COMMAND"
  Allocation allocate(const Case& c) const override;
  Result<ConcreteOutcome> run_concrete(const Case& c, const Step& step) const override;
  // The engines the adapter's hello declares ("engines"); every engine before the first hello.
  bool serves(Engine engine) const override;

  // The hello of the adapter now running (or last run); nullopt before the first one.
  std::optional<AdapterHello> hello() const;
  int starts() const;  // how many times the command was started (1 + restarts)

 private:
  Status ensure_running() const;
  Error fail(std::string message) const;  // kills the adapter, returns the message
  // Sends one request line and returns the reply line; `what` names the request in errors.
  Result<std::string> exchange(const std::string& request, const std::string& what,
                               std::chrono::milliseconds timeout) const;
  // The replies to every capture request of a step, call by call, rank by rank: one round
  // trip per request, or one per case when the adapter's hello asked for batches.
  Result<std::vector<CaptureReply>> exchange_each(const nlohmann::json& case_json, const Step& step,
                                                  const BufferShape& buffer, const RequestContext* context) const;
  Result<std::vector<CaptureReply>> exchange_batch(const nlohmann::json& case_json, const Step& step,
                                                   const BufferShape& buffer, const RequestContext* context) const;
  Error ended(const std::string& what, const std::string& unfinished) const;
  // The reply line to `what` parsed strictly, within the reply budget (max_parsed_bytes, depth
  // 64); an error (which kills the adapter) names what is wrong and quotes the line.
  Result<nlohmann::json> parse_reply(const std::string& line, const std::string& what) const;
  // The base protocol's exchange of a step (capture requests, fuzz/adapter/protocol.hpp): what
  // an engine's part (fuzz/adapter/engine_adapter.hpp) asks for when its steps travel that way.
  Result<ConcreteOutcome> run_capture_requests(const Case& c, const Step& step, const RequestContext* context) const;
  // The running adapter as an engine's part sees it; defined in the .cpp.
  class Channel;

  ExternalOptions options_;
  mutable std::mutex mutex_;
  mutable ChildProcess child_;
  mutable std::optional<AdapterHello> hello_;
  mutable int64_t next_id_ = 1;
  mutable int starts_ = 0;
};

// `text` quoted as a JSON string, cut to `limit` bytes with the full length noted.
std::string quote_line(const std::string& text, size_t limit = 200);

}  // namespace r3
