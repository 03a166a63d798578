// The exit statuses every command shares (README, "Every command exits ..."), so a report that
// knows its outcome and main() that catches the unexpected say the same number.
#pragma once

namespace r3 {

inline constexpr int kExitFinding = 1;  // a finding, or a verdict that changed
// Distinct from 0/1/2, so CI can tell a bug in r3fuzz from a finding or a bad input. Also a
// judgement that threw in a worker (out of memory under a cap, or a bug): the report then covers
// the cases before it, and its findings are written.
inline constexpr int kInternalErrorExit = 3;

}  // namespace r3
