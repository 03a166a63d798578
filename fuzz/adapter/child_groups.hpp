// The process groups of the adapters now running, kept where a signal handler can reach them:
// r3fuzz ending on SIGINT, SIGTERM or SIGHUP kills them first, so no adapter outlives it
// (docs/adapter-protocol.md). A handler may only touch lock-free atomics, so this is a fixed
// table of them rather than a container.
#pragma once

#include <sys/types.h>

namespace r3 {

// ChildProcess calls these when it starts a child in its own group and before it reaps it.
// More than the table holds (256 adapters at once) are not remembered; their ChildProcess
// still kills them on every ordinary exit path.
void remember_child_group(pid_t group) noexcept;
void forget_child_group(pid_t group) noexcept;

// SIGKILL to every remembered group. Async-signal-safe.
void kill_child_groups() noexcept;

}  // namespace r3
