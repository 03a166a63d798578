// Adapter descendants that leave the adapter's process group (a grandchild calling setsid())
// escape the group kill. r3fuzz makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER),
// so such descendants are re-parented to r3fuzz when their parent dies; each time an adapter is
// reaped, every child of r3fuzz that is not a running adapter is one of them, and is killed and
// reaped (docs/SECURITY.md, docs/adapter-protocol.md).
#pragma once

#include <sys/types.h>

#include <mutex>

namespace r3 {

// Called once by main(). Until then (in tests and fuzz targets, which have other children)
// reap_escaped_descendants() does nothing. Returns false when the kernel refused.
bool become_child_subreaper();

// Held by ChildProcess across starting a child and recording it, so a sweep in another thread
// never takes a new adapter for an escaped descendant.
std::unique_lock<std::mutex> lock_adapter_table();
void add_running_adapter(pid_t pid);     // under lock_adapter_table()
void remove_running_adapter(pid_t pid);  // under lock_adapter_table()

// After adapter `group` was killed and reaped: waits (at most 2 s) for the rest of its process
// group to die, and SIGKILLs and reaps every child of r3fuzz that is not a running adapter,
// until none is left (a killed descendant's own children re-parent to r3fuzz in turn).
void reap_escaped_descendants(pid_t group);

// For a signal handler about to end r3fuzz (fuzz/cli/stop_signals.cpp), after it killed the
// adapters' groups: SIGKILLs and reaps every child until none is left, so descendants that
// re-parent as their parents die go too; at most about 200 ms. Async-signal-safe (raw system
// calls only); does nothing unless become_child_subreaper() succeeded.
void kill_children_before_dying() noexcept;

}  // namespace r3
