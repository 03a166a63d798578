// A user's capture implementation, tested by r3fuzz in a few lines: the version of vLLM's
// capture between the naive one and PR #50874, which knew the naive gathered batch, a rank's
// own tokens and SP shards, but not gathered SP shards (docs/layout-contract.md section 7, branches 2, 3, 5).
//
//   my_capture_campaign [CASES] [SEED]   exit 0 clean, 1 failures found, 2 error
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>

#include "fuzz/plugin/plugin.hpp"

namespace {

// Sees exactly what vLLM's capture() sees (r3::CaptureCall) and says which rows it copies.
class MyCapture final : public r3::CapturePolicy {
 public:
  std::string_view name() const override { return "my-capture"; }

  r3::Allocation allocate(const r3::Case& c) const override {
    r3::Allocation a;
    a.capture_rows = c.max_num_tokens;
    if (c.monolithic) a.replay_rows = r3::dispatch_group_replay_rows(c);
    return a;
  }

  void decide(const r3::CaptureCall& call, r3::CaptureDecision& out) const override {
    const int64_t n = call.rows;
    if (call.metadata == nullptr) return copy(r3::branch::single, 0, n, false, call, out);
    const auto& across = call.metadata->num_tokens_across_dp;
    const auto d = static_cast<size_t>(call.dp_rank);
    if (d >= across.size()) return out.reject("no num_tokens_across_dp entry for this rank");
    const int64_t total = std::accumulate(across.begin(), across.end(), int64_t{0});
    const int64_t before = std::accumulate(across.begin(), across.begin() + static_cast<std::ptrdiff_t>(d), int64_t{0});
    const int64_t n_d = across[d];
    if (n == total) return copy(r3::branch::naive_total, before, n_d, false, call, out);
    if (n == n_d) return copy(r3::branch::local, 0, n_d, false, call, out);
    if (call.tp_size > 1 && n == (n_d + call.tp_size - 1) / call.tp_size)
      return copy(r3::branch::sp_allgather, 0, n_d, true, call, out);
    out.reject("routed experts have " + std::to_string(n) + " rows, expected " + std::to_string(total) + " or " +
               std::to_string(n_d));
  }

 private:
  static void copy(std::string_view branch, int64_t src, int64_t rows, bool tp_gather, const r3::CaptureCall& call,
                   r3::CaptureDecision& out) {
    if (call.layer >= call.capture_buffer.layers || rows > call.capture_buffer.rows)
      return out.reject("capture buffer too small");
    out.branch = branch;
    out.copies.push_back({0, src, rows, tp_gather});
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (auto s = r3::plugin::register_policy("my-capture", [] { return std::make_unique<MyCapture>(); }); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.error().message.c_str());
    return 2;
  }
  r3::CampaignOptions options;
  options.max_cases = argc > 1 ? std::atoll(argv[1]) : 2000;
  options.seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  options.out_dir = "";  // print only; set a folder to keep each failing case as JSON
  return r3::plugin::run_campaign_main({"my-capture"}, options);
}
