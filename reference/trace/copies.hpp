// When each step's copy to host completes: a trace's optional "copies" record (docs/TRACES.md,
// "Copies"; lifecycle contract section 5). Every engine copies the rows its capture wrote in a
// forward from the device to the host asynchronously; several real R3 bugs are races in that copy
// (a staging slot reused before its rows were committed, a handler path that never commits, a
// device buffer overwritten before its copy landed). The record says, for the steps whose copy
// does not complete in order, when it does; an engine's lifecycle model (LifecycleModel::run)
// reads it, and the engine states which records its streams and events allow (a CopyWindow).
//
// The time order inside a trace: step n is its events, then its forward (which writes the device
// buffer and issues the step's copy), then its end (result processing: finishes and their reads,
// prefix publication). For step S's copy:
//  - "done_before_step": D (S + 1 < D <= steps.size()) says the copy lands after the forward of
//    step D - 1 and before the forward of step D: the forwards of steps S + 1 .. D - 1 ran
//    before it read what it copies. D = steps.size() is "at the end": after the last forward.
//  - no entry: D = S + 1, in order: the copy lands after its own forward, before any read at the
//    end of its own step and before the next step's forward.
//  - a read at the end of step m that does not wait for the copy sees it landed exactly when
//    D <= m + 1; a read that waits (SGLang's finalize, a forced drain, vLLM's in-order output)
//    sees it whenever it lands. An engine whose result processing of step m runs after it
//    launched the forward of step m + 1 (an overlap scheduler) says so through its window.
#pragma once

#include <string>
#include <vector>

#include "reference/error.hpp"

namespace r3 {

struct Trace;

// One step's copy, completing out of order.
struct CopyCompletion {
  int step = 0;              // S: the step whose forward's rows are copied
  int done_before_step = 0;  // D: lands after step D - 1's forward, before step D's (see above)
  bool operator==(const CopyCompletion&) const = default;
};

// The record's own rules, whatever the engine: entries in increasing step order, at most one per
// step, the step in range, S + 1 < D <= steps.size() (an in-order entry is left out, so that one
// completion order has one text). Errors name the entry: "copies[1].done_before_step: 2 is not
// after step 3".
Status check_copies(const Trace& t);

// D of every step (S + 1 where the record has no entry), for a trace check_copies accepted.
std::vector<int> completion_steps(const Trace& t);

// Whether any step's copy lands out of order.
bool has_late_copies(const Trace& t);

// Which completion orders an engine's streams and events allow for a trace: for step S, every
// D in [S + 1, latest[S]] (a copy may always land sooner than the latest its synchronization
// lets it). `rule` names the synchronization that bounds it and its source, for the error of a
// record outside the window.
struct CopyWindow {
  std::vector<int> latest;  // one per step, S + 1 <= latest[S] <= steps.size()
  std::string rule;
};

// Every copy in order: latest[S] = S + 1.
CopyWindow in_order_window(const Trace& t, std::string rule);
// A copy may land up to `lag` forwards late: latest[S] = min(S + 1 + lag, steps.size()).
CopyWindow lagging_window(const Trace& t, int lag, std::string rule);

// The record within the window, or an error naming the entry, the window and the rule:
// "copies[0].done_before_step: 6 is past what step 3's copy allows (at most 5): RULE".
Status check_copies_within(const Trace& t, const CopyWindow& window);

}  // namespace r3
