// Helpers shared by the GPU pipeline tests: small cases, running the pipeline, reading rows.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_implementation.hpp"
#include "reference/layout.hpp"
#include "reference/provenance.hpp"
#include "tests/support/case_fixtures.hpp"

namespace r3::gpu::testing {

inline Case small_case(int dp, int tp, bool sp, int64_t m, std::vector<int64_t> tokens, Path path,
                       bool monolithic = false) {
  // L = 2, K = 2, E = 64, layer 1
  return r3::test::with_model_at_layer(r3::test::make_case({dp, tp, sp, sp}, m, std::move(tokens), path, monolithic),
                                       {2, 2, 64}, 1);
}

inline Step step_of(const Case& c) {
  auto step = derive_step(c);
  EXPECT_TRUE(step.ok()) << (step.ok() ? "" : step.error().message);
  return std::move(step).value();
}

inline std::unique_ptr<GpuImplementation> gpu(Fault fault = Fault::none, std::string policy = "vllm-50874",
                                              Selection selection = Selection::host_decision) {
  auto made = make_gpu_implementation({Backend::host, selection, std::move(policy), fault});
  EXPECT_TRUE(made.ok()) << (made.ok() ? "" : made.error().message);
  return std::move(made).value();
}

inline ConcreteOutcome run(const GpuImplementation& impl, const Case& c) {
  const Step step = step_of(c);
  auto out = impl.run_concrete(c, step);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return std::move(out).value();
}

// Value (row, layer, k) of a capture image's body; row may run into the guards (-guard..rows+guard).
inline int32_t capture_at(const GuardedImage& img, int64_t row, int layer, int k, int top_k) {
  return img.data.at(static_cast<size_t>((img.guard_rows + row) * img.row_width + layer * top_k + k));
}

// Row `row` of a guarded image (guard rows included: row -1 is the last front guard row).
inline std::vector<int32_t> row_of(const GuardedImage& img, int64_t row) {
  const auto begin = img.data.begin() + (img.guard_rows + row) * img.row_width;
  return {begin, begin + img.row_width};
}

// "token (1, 2)" for the row's values at `layer`, when all K slots agree; else "mixed".
inline std::string captured(const GuardedImage& img, int64_t row, int layer, int top_k) {
  std::string first;
  for (int k = 0; k < top_k; ++k) {
    const int32_t v = capture_at(img, row, layer, k, top_k);
    if (v == kCanary) return "canary";
    const auto decoded = decode_value(v);
    if (!decoded) return "value " + std::to_string(v);
    if (decoded->k != k) return "slot mismatch";
    const std::string text = decoded->id.kind == RowKind::untouched
                                 ? "untouched row " + std::to_string(decoded->id.index) + " layer " +
                                       std::to_string(decoded->id.dp)
                                 : describe(decoded->id);
    if (k == 0) first = text;
    else if (text != first) return "mixed";
  }
  return first;
}

// Rows of the back guard that lost their canary: how far writes ran past the buffer's end.
inline int64_t rows_past_end(const GuardedImage& img) {
  const int32_t canary = img.bits < 32 ? static_cast<int16_t>(kCanary) : kCanary;
  for (int64_t g = img.guard_rows - 1; g >= 0; --g)
    for (int32_t v : row_of(img, img.rows + g))
      if (v != canary) return g + 1;
  return 0;
}

inline int64_t rows_before_start(const GuardedImage& img) {
  const int32_t canary = img.bits < 32 ? static_cast<int16_t>(kCanary) : kCanary;
  for (int64_t g = 0; g < img.guard_rows; ++g)
    for (int32_t v : row_of(img, g - img.guard_rows))
      if (v != canary) return img.guard_rows - g;
  return 0;
}

}  // namespace r3::gpu::testing
