// How an engine's steps travel to an external adapter (docs/adapter-protocol.md). The base
// protocol asks the adapter, per capture call and rank, what its capture() wrote (protocol.hpp,
// batch.hpp); an engine whose capturer works otherwise sends its own requests and reads its own
// replies over the channel ExternalImplementation opens, and turns them into the concrete
// outcome the judge reads. Each engine's part lives in fuzz/engines/NAME/adapter.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "fuzz/adapter/protocol.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"
#include "reference/layout.hpp"

namespace r3 {

// One reply line and its parsed form; errors about the reply quote the line (quote_line()).
struct AdapterReply {
  std::string line;
  nlohmann::json reply;
};

// The texts a reply keeps: what the robustness target checks is stored cut.
struct AdapterReplyTexts {
  std::string branch;
  std::string error;
};

// The running adapter as an engine's exchange sees it (ExternalImplementation provides it). Every
// error these return has already killed the adapter: the next case starts a fresh one.
class AdapterChannel {
 public:
  virtual ~AdapterChannel() = default;
  // The hello of the adapter now running.
  virtual const AdapterHello& hello() const = 0;
  // Takes `count` request ids and returns the first: a failure consumes the ids sent so far.
  virtual int64_t take_ids(size_t count) = 0;
  // Sends one request line and reads its reply within --adapter-timeout, parsed strictly within
  // the reply budget; `what` names the request in errors ("request 3", "batch [3..6]").
  virtual Result<AdapterReply> round_trip(const std::string& request, const std::string& what) = 0;
  // Kills the adapter and returns `message` as the error.
  virtual Error fail(std::string message) = 0;
  // The base protocol's exchange of the step: a capture request per call and rank (one batch per
  // case when the hello asked for batches), each with the engine's `context` merged in (null:
  // none), the replies applied as the host executor applies a model's decisions.
  virtual Result<ConcreteOutcome> exchange_capture_requests(const Case& c, const Step& step,
                                                            const RequestContext* context) = 0;
};

class EngineAdapter {
 public:
  virtual ~EngineAdapter() = default;

  // One step of a case of this engine, exchanged with the running adapter: the outcome the judge reads.
  virtual Result<ConcreteOutcome> exchange_step(AdapterChannel& channel, const Case& c, const Step& step) const = 0;
  // Reads one reply to the engine's step request (a `buffer`-shaped one where it has a shape) as
  // exchange_step() does: the robustness target's (fuzz/libfuzzer/robustness.cpp) way in.
  virtual Result<AdapterReplyTexts> read_reply_for_fuzzing(const nlohmann::json& reply,
                                                           const BufferShape& buffer) const = 0;
};

// An engine whose steps travel as the base protocol's capture requests (vLLM's, and vllm-ascend's
// with its context added): its replies are the base protocol's too.
class CaptureRequestAdapter : public EngineAdapter {
 public:
  Result<AdapterReplyTexts> read_reply_for_fuzzing(const nlohmann::json& reply,
                                                   const BufferShape& buffer) const override {
    R3_TRY(CaptureReply read, read_capture_reply(reply, buffer));
    return AdapterReplyTexts{std::move(read.branch), std::move(read.error)};
  }
};

// The adapter part of `engine`; null when it has none (fuzz/engines/registry.cpp).
const EngineAdapter* engine_adapter(Engine engine);

}  // namespace r3
