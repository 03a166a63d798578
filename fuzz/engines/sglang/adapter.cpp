// SGLang's steps with an external adapter (protocol.hpp): every rank's request, DP-major, one
// round trip each, or all of them in one line when the hello asked for batches; the replies
// become the published images the concrete judge reads. The vLLM-family capture exchange stays
// in fuzz/adapter/external_implementation.cpp.
#include <string>
#include <utility>
#include <vector>

#include "fuzz/adapter/batch.hpp"
#include "fuzz/adapter/engine_adapter.hpp"
#include "fuzz/adapter/external_implementation.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/engines/sglang/protocol.hpp"
#include "reference/engines/sglang/fields.hpp"

namespace r3::sglang {
namespace {

using nlohmann::json;

class Adapter final : public EngineAdapter {
 public:
  Result<ConcreteOutcome> exchange_step(AdapterChannel& channel, const Case& c, const Step& step) const override;
  Result<AdapterReplyTexts> read_reply_for_fuzzing(const json& reply, const BufferShape& buffer) const override {
    R3_TRY(SglangReply read, read_sglang_reply(reply, buffer.top_k));
    return AdapterReplyTexts{std::move(read.branch), std::move(read.error)};
  }
};

Result<ConcreteOutcome> Adapter::exchange_step(AdapterChannel& channel, const Case& c, const Step& step) const {
  if (!channel.hello().serves(sglang::engine())) return Error{"the adapter's hello does not list \"sglang\" in \"engines\""};
  const json case_json = case_to_json(c);
  const size_t count = static_cast<size_t>(step.dp) * step.tp;
  std::vector<SglangReply> replies;
  // Reads one reply: `what` names its request line, `where` its place in a batch ("" unbatched).
  auto read_reply = [&](const std::string& line, const std::string& what, const json& reply, int64_t want,
                        const std::string& where) -> Status {
    auto id = reply_id(reply);
    if (!id) return channel.fail("the reply to " + what + ": " + where + id.error().message + ": " + quote_line(line));
    if (*id != want)
      return channel.fail("the reply to " + what + ": " + where + "carries id " + std::to_string(*id) + ", expected " +
                          std::to_string(want) + ": " + quote_line(line));
    auto parsed = read_sglang_reply(reply, c.model.top_k);
    if (!parsed)
      return channel.fail("the reply to " + what + ": " + where + parsed.error().message + ": " + quote_line(line));
    replies.push_back(std::move(*parsed));
    return ok_status();
  };
  if (channel.hello().batch) {
    const int64_t first = channel.take_ids(count);
    const std::string what = batch_name(first, count);
    R3_TRY(const AdapterReply got, channel.round_trip(sglang_batch_request(first, case_json, c, step), what));
    const std::string& line = got.line;
    const json& reply = got.reply;
    if (!reply.is_object() || reply.size() != 1 || !reply.contains("replies") || !reply["replies"].is_array())
      return channel.fail("the reply to " + what + ": expected {\"replies\": [...]}: " + quote_line(line));
    if (reply["replies"].size() != count)
      return channel.fail("the reply to " + what + ": replies: expected " + std::to_string(count) +
                          " replies (one per request, in order), got " + std::to_string(reply["replies"].size()) +
                          ": " + quote_line(line));
    for (size_t i = 0; i < count; ++i)
      R3_TRY_STATUS(read_reply(line, what, reply["replies"][i], first + static_cast<int64_t>(i),
                               "replies[" + std::to_string(i) + "]: "));
  } else {
    for (int dp = 0; dp < step.dp; ++dp)
      for (int tp = 0; tp < step.tp; ++tp) {
        const int64_t id = channel.take_ids(1);
        const std::string what = "request " + std::to_string(id);
        R3_TRY(const AdapterReply got, channel.round_trip(sglang_request(id, case_json, c, step, dp, tp).dump(), what));
        R3_TRY_STATUS(read_reply(got.line, what, got.reply, id, ""));
      }
  }
  auto outcome = sglang_outcome(c, step, replies);
  if (!outcome)
    return channel.fail("the replies to the case's " + std::to_string(count) + " requests: " + outcome.error().message);
  return outcome;
}

}  // namespace

const EngineAdapter& adapter_part() {
  static const Adapter part;
  return part;
}

}  // namespace r3::sglang
