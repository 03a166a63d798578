// ExternalImplementation on SGLang steps (fuzz/adapter/sglang_protocol.hpp): every rank's
// request, DP-major, one round trip each, or all of them in one line when the hello asked for
// batches; the replies become the published images the concrete judge reads. Kept apart from
// external_implementation.cpp, which holds the vLLM exchange.
#include <utility>

#include "fuzz/adapter/batch.hpp"
#include "fuzz/adapter/external_implementation.hpp"
#include "fuzz/adapter/sglang_protocol.hpp"
#include "fuzz/codec/case_json.hpp"

namespace r3 {

using nlohmann::json;

Result<ConcreteOutcome> ExternalImplementation::run_sglang(const Case& c, const Step& step) const {
  if (!hello_->sglang) return Error{"the adapter's hello does not list \"sglang\" in \"engines\""};
  const json case_json = case_to_json(c);
  const size_t count = static_cast<size_t>(step.dp) * step.tp;
  std::vector<SglangReply> replies;
  // Reads one reply: `what` names its request line, `where` its place in a batch ("" unbatched).
  auto read_reply = [&](const std::string& line, const std::string& what, const json& reply, int64_t want,
                        const std::string& where) -> Status {
    auto id = reply_id(reply);
    if (!id) return fail("the reply to " + what + ": " + where + id.error().message + ": " + quote_line(line));
    if (*id != want)
      return fail("the reply to " + what + ": " + where + "carries id " + std::to_string(*id) + ", expected " +
                  std::to_string(want) + ": " + quote_line(line));
    auto parsed = read_sglang_reply(reply, c.model.top_k);
    if (!parsed) return fail("the reply to " + what + ": " + where + parsed.error().message + ": " + quote_line(line));
    replies.push_back(std::move(*parsed));
    return ok_status();
  };
  if (hello_->batch) {
    const int64_t first = next_id_;
    next_id_ += static_cast<int64_t>(count);
    const std::string what = batch_name(first, count);
    R3_TRY(std::string line, exchange(sglang_batch_request(first, case_json, c, step), what, options_.timeout));
    R3_TRY(const json reply, parse_reply(line, what));
    if (!reply.is_object() || reply.size() != 1 || !reply.contains("replies") || !reply["replies"].is_array())
      return fail("the reply to " + what + ": expected {\"replies\": [...]}: " + quote_line(line));
    if (reply["replies"].size() != count)
      return fail("the reply to " + what + ": replies: expected " + std::to_string(count) +
                  " replies (one per request, in order), got " + std::to_string(reply["replies"].size()) + ": " +
                  quote_line(line));
    for (size_t i = 0; i < count; ++i)
      R3_TRY_STATUS(read_reply(line, what, reply["replies"][i], first + static_cast<int64_t>(i),
                               "replies[" + std::to_string(i) + "]: "));
  } else {
    for (int dp = 0; dp < step.dp; ++dp)
      for (int tp = 0; tp < step.tp; ++tp) {
        const int64_t id = next_id_++;
        const std::string what = "request " + std::to_string(id);
        R3_TRY(std::string line, exchange(sglang_request(id, case_json, c, step, dp, tp).dump(), what, options_.timeout));
        R3_TRY(const json reply, parse_reply(line, what));
        R3_TRY_STATUS(read_reply(line, what, reply, id, ""));
      }
  }
  auto outcome = sglang_outcome(c, step, replies);
  if (!outcome) return fail("the replies to the case's " + std::to_string(count) + " requests: " + outcome.error().message);
  return outcome;
}

}  // namespace r3
