// The in-process half of the judging-cost curve (bench/run-benchmarks.sh, "Symbolic judging
// cost against the layout"): symbolic time per case on production-shaped layouts at
// D in {8, 64, 512} and T in {1, 8}, for vLLM and SGLang. A case's time is deriving its step
// plus judging it with each of its engine's two default implementations, the work a campaign
// does for it. Each (engine, D, T) point judges the same fixed-seed cases every run.
//
//   r3fuzz_judge_scaling [--cases N] [--repeat R] [--only ENGINE/D/T]
//
// Prints one tab-separated row per point: engine D T microseconds-per-case cases.
//
// Production-shaped, as the deployments in corpus/production are:
//   vLLM    EP on, SP on when T > 1; paths gathered and local (sp_shard with SP) in turn;
//           dp_max padding with idle dummies; 1 to 64 tokens a rank, M = 64.
//   SGLang  DP attention, a2a none and deepep in turn; decode with CUDA graphs (buckets
//           T, 2T, 4T, ..., 64) and extend in turn; 1 to 64 requests or tokens a rank.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/generate/rng.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/io/heap_policy.hpp"
#include "fuzz/oracle/judge.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/vllm/model.hpp"

namespace {

using namespace r3;
using Clock = std::chrono::steady_clock;

Case vllm_case(Rng& rng, int dp, int tp, int variant) {
  Case c;
  c.topology = {dp, tp, /*ep=*/true, /*sp=*/tp > 1};
  c.model = {4, 8, 256};
  c.max_num_tokens = 64;
  c.padding.mode = PaddingMode::dp_max;
  c.idle_dummy = true;
  c.path = variant % 2 == 0 ? Path::gathered : tp > 1 ? Path::sp_shard : Path::local;
  c.layer = 3;
  c.tokens.resize(static_cast<size_t>(dp));
  for (int64_t& n : c.tokens) n = rng.range(1, 64);
  c.profile = Profile::of(vllm::engine(), 0);
  return c;
}

Case sglang_case(Rng& rng, int dp, int tp, int variant) {
  Case c;
  c.engine = sglang::engine();
  c.topology = {dp, tp, false, false};
  c.model = {4, 8, 256};
  c.layer = 3;
  sglang::Forward f;
  f.dp_attention = true;
  f.a2a = variant % 2 == 0 ? sglang::A2a::none : sglang::A2a::deepep;
  f.max_running_requests = 64;
  if (variant / 2 % 2 == 0) {
    f.kind = sglang::ForwardKind::decode;
    sglang::CudaGraphs graphs;  // aligned to attn_tp, as SGLang captures them
    for (int64_t bucket = tp; bucket <= 64; bucket *= 2) graphs.decode.push_back(bucket);
    f.cuda_graph = graphs;
    f.requests.resize(static_cast<size_t>(dp));
    for (int64_t& r : f.requests) r = rng.range(1, 64);
  } else {
    f.kind = sglang::ForwardKind::extend;
    f.chunked_prefill_size = 64;
    c.tokens.resize(static_cast<size_t>(dp));
    for (int64_t& n : c.tokens) n = rng.range(1, 64);
  }
  c.engine_fields.emplace<sglang::Forward>(f);
  c.profile = Profile::of(sglang::engine(), 0);
  return c;
}

struct Point {
  const char* engine;
  int dp, tp;
};

int fail(const std::string& what) {
  std::fprintf(stderr, "r3fuzz_judge_scaling: %s\n", what.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_in_heap();  // as r3fuzz does
  int cases = 200, repeat = 5;
  std::string only;  // one point, "vllm/512/8", for a profiler
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if ((arg == "--cases" || arg == "--repeat") && i + 1 < argc) {
      const int value = std::atoi(argv[++i]);
      if (value < 1) return fail(arg + " needs a positive integer, got '" + argv[i] + "'");
      (arg == "--cases" ? cases : repeat) = value;
    } else {
      return fail("unknown argument '" + arg + "' (usage: r3fuzz_judge_scaling [--cases N] [--repeat R] [--only ENGINE/D/T])");
    }
  }
  const Point points[] = {{"vllm", 8, 1},    {"vllm", 8, 8},    {"vllm", 64, 1},   {"vllm", 64, 8},
                          {"vllm", 512, 1},  {"vllm", 512, 8},  {"sglang", 8, 1},  {"sglang", 8, 8},
                          {"sglang", 64, 1}, {"sglang", 64, 8}, {"sglang", 512, 1}, {"sglang", 512, 8}};
  bool matched = false;
  for (const Point& p : points) {
    if (!only.empty() && only != std::string(p.engine) + "/" + std::to_string(p.dp) + "/" + std::to_string(p.tp))
      continue;
    matched = true;
    const bool sglang = std::string(p.engine) == "sglang";
    std::vector<std::unique_ptr<Implementation>> impls;
    for (const char* name : sglang ? std::vector<const char*>{"sglang", "sglang-fixed"}
                                   : std::vector<const char*>{"vllm-50874", "r3-fixed"}) {
      auto impl = make_implementation(name, {});
      if (!impl.ok()) return fail(impl.error().message);
      impls.push_back(std::move(*impl));
    }
    Rng rng(20261201u + static_cast<uint64_t>(p.dp) * 16 + static_cast<uint64_t>(p.tp));
    std::vector<Case> inputs;
    for (int i = 0; i < cases; ++i) {
      Case c = sglang ? sglang_case(rng, p.dp, p.tp, i) : vllm_case(rng, p.dp, p.tp, i);
      if (auto ok = validate(c); !ok.ok()) return fail("a generated case is invalid: " + ok.error().message);
      inputs.push_back(std::move(c));
    }
    Judgement j;
    double best = 1e30;
    for (int round = 0; round < repeat; ++round) {
      const auto start = Clock::now();
      for (const Case& c : inputs) {
        auto step = derive_step(c);
        if (!step.ok()) return fail(step.error().message);
        for (const auto& impl : impls)
          judge_symbolic_into(j, c, *step, *impl->policy(), impl->name(), RankDetails::reported_ranks);
      }
      best = std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - start).count() / cases);
    }
    std::printf("%s\t%d\t%d\t%.3f\t%d\n", p.engine, p.dp, p.tp, best, cases);
    std::fflush(stdout);
  }
  if (!matched) return fail("--only " + only + " names no point (ENGINE/D/T: vllm or sglang, D 8, 64 or 512, T 1 or 8)");
  return 0;
}
