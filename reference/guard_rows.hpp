// The guarded buffers both concrete executors share (the host executor in fuzz/oracle, the GPU
// pipeline in gpu/): every buffer has canary rows on each side, so an overrun lands in canary
// rows and is seen, never in another buffer.
#pragma once

#include <cstdint>

namespace r3 {

// At least this many canary rows guard each side of a buffer; more after a buffer when the
// decisions ask for a write that reaches further, up to kMaxGuardRows.
inline constexpr int64_t kMinGuardRows = 2;
inline constexpr int64_t kMaxGuardRows = int64_t{1} << 16;

// A replay-buffer row the kernel never wrote: expert ids are never negative.
inline constexpr int32_t kReplayUntouched = -1;

}  // namespace r3
