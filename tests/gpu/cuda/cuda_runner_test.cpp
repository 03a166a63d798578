// The CUDA backends against the host backend: same cases, same images, element by element.
// Needs a GPU (nccl: two); without one each test is skipped with the reason printed.
#include <gtest/gtest.h>

#include "fuzz/generate/generator.hpp"
#include "gpu/gpu_implementation.hpp"
#include "reference/layout.hpp"

namespace r3::gpu {
namespace {

std::unique_ptr<GpuImplementation> make_or_skip(Backend backend, Fault fault, std::string* why) {
  auto made = make_gpu_implementation({backend, Selection::host_decision, "vllm-50874", fault});
  if (!made.ok()) {
    *why = made.error().message;
    return nullptr;
  }
  return std::move(made).value();
}

// Small generated cases (the campaign generator, fixed seed) that provenance values can encode.
std::vector<std::pair<Case, Step>> small_cases(int count) {
  std::vector<std::pair<Case, Step>> out;
  GeneratorOptions options;
  options.sizes = {SizeClass::tiny, SizeClass::small};
  options.wide_experts = true;
  for (uint64_t i = 0; static_cast<int>(out.size()) < count; ++i) {
    Case c = generate_case(7, i, options).c;
    auto step = derive_step(c);
    if (step.ok()) out.emplace_back(std::move(c), std::move(step).value());
  }
  return out;
}

void expect_same(const Result<ConcreteOutcome>& a, const Result<ConcreteOutcome>& b, size_t index) {
  ASSERT_EQ(a.ok(), b.ok()) << "case " << index << ": " << (a.ok() ? b.error().message : a.error().message);
  if (!a.ok()) {
    EXPECT_EQ(a.error().message, b.error().message);
    return;
  }
  ASSERT_EQ(a->ranks.size(), b->ranks.size());
  for (size_t r = 0; r < a->ranks.size(); ++r) {
    EXPECT_EQ(a->ranks[r].capture.data, b->ranks[r].capture.data) << "case " << index << " rank " << r;
    ASSERT_EQ(a->ranks[r].replay.has_value(), b->ranks[r].replay.has_value());
    if (a->ranks[r].replay) {
      EXPECT_EQ(a->ranks[r].replay->data, b->ranks[r].replay->data) << "case " << index;
    }
  }
}

void compare_backends(Backend backend) {
  std::string why;
  for (Fault fault : {Fault::none, Fault::tp_major_order, Fault::replay_per_rank, Fault::no_trim}) {
    auto device = make_or_skip(backend, fault, &why);
    if (!device) {
      GTEST_SKIP() << why;
    }
    auto host = make_or_skip(Backend::host, fault, &why);
    ASSERT_NE(host, nullptr) << why;
    const auto cases = small_cases(300);
    std::vector<CaseAndStep> items;
    for (const auto& [c, step] : cases) items.push_back({&c, &step});
    const auto on_device = device->run_batch(items);
    const auto on_host = host->run_batch(items);
    for (size_t i = 0; i < items.size(); ++i) expect_same(on_device[i], on_host[i], i);
    // One by one on the device too (a batch must not differ from single launches).
    for (size_t i = 0; i < 20; ++i) expect_same(device->run_concrete(cases[i].first, cases[i].second), on_host[i], i);
  }
}

TEST(CudaRunner, VirtualRanksOnOneDeviceMatchTheHostBackend) { compare_backends(Backend::virtual_); }

TEST(CudaRunner, NcclAcrossGpusMatchesTheHostBackend) { compare_backends(Backend::nccl); }

}  // namespace
}  // namespace r3::gpu
