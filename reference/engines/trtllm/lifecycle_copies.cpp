// TensorRT-LLM's copy window (lifecycle_copies.hpp). What a record inside it changes is read in
// lifecycle_capture.cpp: a non-forced drain (RouteCopier.drain, from finish_forward) commits step
// S's entry at step m exactly when the record lands it by then (D <= m + 1); forced drains (steps
// with context rows, attach_routes) and a ring slot's reuse synchronize, so they see it whenever it
// lands. wait_before_overwrite keeps the next forward from writing the device buffer before the
// copy read it (contract N8, reading (a)), so a late copy still carries its own step's rows; only
// E's reuse of a pending ring slot (R9) commits another copy's rows.
#include "reference/engines/trtllm/lifecycle_copies.hpp"

namespace r3::trtllm {

CopyWindow copy_window(const Trace& t, const Timeline& timeline) {
  (void)timeline;
  return lagging_window(t, 3,
                        "TensorRT-LLM's RouteCopier queries a copy's event without waiting, and its ring of 3 "
                        "pinned slots synchronizes step S's copy when step S + 3's stage reuses the slot "
                        "(route_capture.py: RouteCopier.stage, drain @ 06a976ce, aa94b01)");
}

}  // namespace r3::trtllm
