#include "fuzz/cli/seed_serving.hpp"

#include <filesystem>

#include "fuzz/codec/trace_json.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/seed/serving_log.hpp"

namespace r3 {
namespace fs = std::filesystem;

Result<int> seed_serving_traces(const ServingSeedArgs& a) {
  if (a.variants < 1 || a.variants > 64) return Error{"--variants: " + std::to_string(a.variants) + " is outside [1, 64]"};
  if (a.tokens_per_block < 1 || a.tokens_per_block > 8)
    return Error{"--tokens-per-block: " + std::to_string(a.tokens_per_block) + " is outside [1, 8]"};
  R3_TRY(const std::string text, read_input_file(a.log));
  Result<std::vector<ServingRecord>> records = parse_serving_log(text);
  if (!records) return Error{a.log + ": " + records.error().message};
  ServingScale scale;
  scale.tokens_per_block = a.tokens_per_block;
  const std::vector<TraceRequest> requests = requests_from_log(*records, scale);
  // Room for the log's requests whole: prompts as long as the longest, steps enough to serve all.
  TraceDrawLimits limits;
  for (const TraceRequest& r : requests) limits.max_prompt = std::max(limits.max_prompt, static_cast<int>(r.prompt.size()));
  limits.max_requests = static_cast<int>(requests.size());
  limits.max_steps = std::min(4096, 64 * static_cast<int>(requests.size()));
  const std::string stem = file_name_from_text(fs::path(a.log).stem().string(), "");
  int written = 0;
  for (int v = 1; v <= a.variants; ++v) {
    Rng rng(static_cast<uint64_t>(v));
    Result<Trace> t = schedule_requests(rng, a.profile, requests, limits);
    if (!t) return Error{a.log + ": variant " + std::to_string(v) + ": " + t.error().message};
    t->note = "seeded from " + fs::path(a.log).filename().string() + " (" + std::to_string(records->size()) +
              " requests, a 512-token block as " + std::to_string(a.tokens_per_block) + " token(s)), profile " +
              std::string(to_string(a.profile)) + ", variant " + std::to_string(v) + " of r3fuzz seed --serving-trace";
    R3_TRY(const fs::path file, output_path_inside(a.out, stem + "-" + std::string(to_string(a.profile)) + "-" +
                                                              std::to_string(v) + ".json"));
    R3_TRY_STATUS(write_trace_file(file.string(), *t));
    ++written;
  }
  return written;
}

}  // namespace r3
