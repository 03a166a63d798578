// A capture policy: a model of an engine's capture decision, taken from shapes alone, plus
// the buffers that engine version allocates. Policies are symbolic implementations: the
// harness can judge them on production sizes without moving a byte.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "reference/capture.hpp"
#include "reference/case.hpp"

namespace r3 {

// The buffers an implementation allocates for a case's engine configuration.
struct Allocation {
  int64_t capture_rows = 0;                // rows of the [rows, L, K] capture buffer
  std::optional<int64_t> replay_rows;      // monolithic replay buffer rows; nullopt when none
  int replay_bits = 16;                    // storage width of replay ids (int16 in vLLM)
};

class CapturePolicy {
 public:
  virtual ~CapturePolicy() = default;
  virtual std::string_view name() const = 0;
  virtual Allocation allocate(const Case& c) const = 0;
  // Fills `out` (cleared first by the caller) with the copies or the rejection.
  virtual void decide(const CaptureCall& call, CaptureDecision& out) const = 0;
  // A decision in two parts, for a judge that decides every rank of a call: check_shared()
  // makes the checks that read only what all ranks of the call see alike (the layer, the
  // buffer, the DP metadata's own consistency; never dp_rank, tp_rank or rows), and
  // decide_checked() the rest, for a call check_shared() did not reject. decide() must equal
  // check_shared() followed by decide_checked(). A check of local_sizes against
  // num_tokens_across_dp reads D*T entries: made per rank, it cost O((D*T)^2) a case.
  // The defaults check nothing shared and decide whole.
  virtual void check_shared(const CaptureCall& call, CaptureDecision& out) const {
    (void)call;
    (void)out;
  }
  virtual void decide_checked(const CaptureCall& call, CaptureDecision& out) const { decide(call, out); }
  // False when decide() never reads CaptureCall::tp_rank, as in vLLM, where every TP rank of a
  // DP rank takes the same decision from the same shapes. The symbolic judge then decides once
  // per TP group. True (the safe default) for any policy that may treat TP ranks differently.
  virtual bool reads_tp_rank() const { return true; }
  // The engine whose cases it models: a policy judges only its own engine's cases. The
  // default is the default engine (a plug-in's policy models its cases).
  virtual Engine engine() const { return Engine{}; }
  // The named changes between this model and its engine's proposed fix that it lacks, and the
  // model with some of them applied. A finding's root cause is the smallest set of them that
  // repairs it (fuzz/oracle/root_cause.hpp). Models without patches (vLLM's) have none.
  virtual std::vector<std::string_view> patch_names() const { return {}; }
  virtual std::unique_ptr<CapturePolicy> with_patches(std::span<const std::string_view> names) const {
    (void)names;
    return nullptr;
  }
};

// The policy model of that name, from every engine's table (EngineModel::policies()), or null.
std::unique_ptr<CapturePolicy> make_policy(std::string_view name);
// Every policy model's name, engine by engine: "vllm-50874, vllm-pre-50874, r3-fixed, sglang, ...".
std::string policy_names();

// Replay buffer rows under vLLM's sizing after #50874: M * (D*T if EP else D).
int64_t dispatch_group_replay_rows(const Case& c);

}  // namespace r3
