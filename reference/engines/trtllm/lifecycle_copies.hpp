// TensorRT-LLM's copy to host (RouteCopier, route_capture.py @ 06a976ce and aa94b01;
// docs/lifecycle-contract.md R8 to R10): which completion orders of the trace's "copies" record
// (reference/trace/copies.hpp) its streams and events allow. check_profile enforces the window and
// the trace draw draws within it; lifecycle_capture.cpp reads the record.
#pragma once

#include "reference/trace/copies.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::trtllm {

// A step's copy may be seen landed up to three steps late (latest done_before_step S + 4): the
// drains in finish_forward only query the copy's event, and the executor runs ahead of the GPU;
// the one bound is the ring of three slots, whose reuse by step S + 3's stage synchronizes step
// S's copy (both versions), so it has landed before the forward of step S + 4.
CopyWindow copy_window(const Trace& t, const Timeline& timeline);

}  // namespace r3::trtllm
