// The ranges a case may take. Wide enough for any deployment we know of (D*T up to
// thousands of ranks, M up to 16M rows), narrow enough that no derived count overflows int64.
#pragma once

#include <cstdint>

namespace r3::limits {

inline constexpr int kMaxDp = 1024;
inline constexpr int kMaxTp = 64;
inline constexpr int kMaxLayers = 1024;
inline constexpr int kMaxTopK = 64;
inline constexpr int kMaxExperts = 1 << 20;
inline constexpr int64_t kMaxRows = int64_t{1} << 24;  // M, tokens, cudagraph sizes, chunk size
inline constexpr int kMaxCudagraphSizes = 1024;
inline constexpr int kMaxMicrobatches = 16;
inline constexpr int64_t kMaxChunks = 4096;
inline constexpr int kMaxMetadataEntries = kMaxDp * kMaxTp;
// A case's texts (note, expect.impl): 1 MiB, the most the binary case format carries, so every
// case the JSON reader accepts round-trips through the binary form (fuzz/codec/case_binary.hpp).
inline constexpr int64_t kMaxTextBytes = int64_t{1} << 20;

// Narrow replay storage (corner case 9): expert ids are 0 .. E-1, and int16 holds ids up to
// 32767, so E up to 32768 experts fit; with more, ids wrap.
inline constexpr int kMaxExpertsInInt16 = 32768;

}  // namespace r3::limits
