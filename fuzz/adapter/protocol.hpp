// The adapter protocol "r3fuzz-adapter/1" (docs/adapter-protocol.md): JSON lines between
// r3fuzz and an external implementation. This file builds requests and reads replies; it
// knows nothing of processes. Every reading error names the field that is wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/capture.hpp"
#include "reference/case.hpp"
#include "reference/engine.hpp"
#include "reference/error.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

inline constexpr std::string_view kAdapterProtocol = "r3fuzz-adapter/1";

// How an adapter sizes its monolithic replay buffer (docs/layout-contract.md section 6), declared in its hello.
enum class ReplaySizing { max_num_tokens, dp_group, dispatch_group };
std::string_view to_string(ReplaySizing s);
int64_t replay_rows_for(ReplaySizing s, const Case& c);

struct AdapterHello {
  std::string name;
  std::string version;
  ReplaySizing replay_rows = ReplaySizing::dispatch_group;
  bool batch = false;  // one request and one reply per case (fuzz/adapter/batch.hpp)
  // The engines whose steps the adapter answers ("engines", registered engines' names; absent:
  // the default engine only), in the order listed. An engine may send its steps as its own
  // requests and replies (fuzz/adapter/engine_adapter.hpp).
  std::vector<Engine> engines = {Engine{}};
  bool serves(Engine engine) const;
};

nlohmann::json hello_request();
// Reads the adapter's answer to the hello; a protocol mismatch is an error naming both.
Result<AdapterHello> read_hello(const nlohmann::json& reply);

// What an engine adds to each rank's capture request beyond the base protocol's fields (vllm-ascend:
// the step's comm type and the rank's own count, which its capture reads from the forward
// context): one JSON object per rank, whose keys are merged into the request. The base fields win:
// a key the request already has is refused by an internal check.
using RequestContext = std::function<nlohmann::json(const RankView& view)>;

// The request for one rank in one capture call: what that rank's capture() sees.
nlohmann::json capture_request(int64_t id, const nlohmann::json& case_json, const Step& step, const Call& call,
                               const RankView& view, const BufferShape& buffer, const RequestContext* context = nullptr);
// The same without "case", "topk_ids" and "tp_all_gather": the fields a batch does not repeat.
nlohmann::json capture_request_fields(int64_t id, const Step& step, const Call& call, const RankView& view,
                                      const BufferShape& buffer, const RequestContext* context = nullptr);
// A row tensor as the protocol sends it: one list of top_k int32 values per row.
nlohmann::json tensor_values(const RowTensor& tensor, int top_k);


// One capture-buffer row written by the adapter (at the request's layer).
struct RowWrite {
  int64_t dst_row = 0;
  std::vector<int32_t> values;  // top_k values
};

// Every text an adapter replies, in either protocol (an "error", a "branch", the hello's
// strings, a key named in an error), is kept to this many bytes, cut at a character boundary
// and followed by "... (N bytes in all)": it travels into every verdict, finding file, note,
// report and JUnit file, and 4 KiB is far more than any exception message worth reading
// (docs/SECURITY.md). read_reply_string() cuts every string it reads.
inline constexpr size_t kMaxStoredReplyTextBytes = 4096;
// `text` cut as above (unchanged when it fits): the one cut both protocols share.
std::string stored_reply_text(std::string text);

struct CaptureReply {
  int64_t id = 0;
  std::string branch;      // "" when the adapter did not say
  bool rejected = false;
  std::string error;       // the message raised, when rejected
  bool has_copies = false; // the reply gave copies (ranges) rather than written rows
  std::vector<Copy> copies;
  std::vector<RowWrite> writes;
  bool used_tp_all_gather = false;  // the rank issued the TP all-gather
};

// The id of a reply, or an error naming what is wrong with it.
Result<int64_t> reply_id(const nlohmann::json& reply);
// A branch name as a string_view that lives as long as the process (CaptureDecision keeps one).
std::string_view adapter_branch_name(const std::string& name);

// Reads a reply to a capture request whose capture buffer is `buffer` wide.
Result<CaptureReply> read_capture_reply(const nlohmann::json& reply, const BufferShape& buffer);

// The field readers every reply is read with (an engine's own replies too: engine_adapter.hpp), so errors
// name the field the same way: "rows[0].values[1]: expected an integer, got a string".
Result<int64_t> read_reply_int(const nlohmann::json& v, std::string_view field, int64_t lo, int64_t hi);
// The string, cut by stored_reply_text(): no reply text is kept longer.
Result<std::string> read_reply_string(const nlohmann::json& v, std::string_view field);
// `where` + "unknown key ..." for a key outside `allowed` (the key cut as any reply text).
Status only_reply_keys(const nlohmann::json& object, std::string_view where,
                       std::initializer_list<std::string_view> allowed);
// "an integer", "a number", or JSON's type name: how errors name what they got.
std::string_view reply_type_name(const nlohmann::json& v);

}  // namespace r3
