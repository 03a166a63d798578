// Sources: vllm-project/vllm vllm/distributed/aux_output_connector/worker.py @ f99d53b521fa3f0d17af80e141bcb0306130960b
// (AuxOutputWorkerConnector.prepare_output, begin_step) and the newer stored copy 70427204877, as
// docs/lifecycle-contract.md 2.3 ("Copy to host") cites them.
#include "reference/engines/vllm/lifecycle_copies.hpp"

namespace r3::vllm {

// Why every order inside the window reads the same rows, so that LifecycleModel::run needs no
// branch on the record (tests/reference/engines/vllm/lifecycle_copies_test.cpp shows it for every
// version):
//  - prepare_output snapshots the step's rows on the main stream, in stream order after the
//    forward and before the next one, and the copy to host reads that snapshot, not the buffer the
//    next forward writes: a late copy still carries its own step's rows;
//  - the rows are committed (process_output) when the executor consumes that step's output, in
//    step order, and consuming it waits for the copy; begin_step waits for the previous pending
//    output before it applies the next step's metadata (@ f99d53b; the newer copy counts in-flight
//    outputs per request and defers teardown until they are consumed).
CopyWindow copy_window(const Trace& t, const Timeline& timeline, Profile profile) {
  (void)timeline;
  const bool legacy = !profile.is_any() && profile.variant() == 1;
  if (legacy) {
    return in_order_window(t, "vLLM releases before the AuxOutput connector (profile vllm-legacy): the lifecycle "
                              "contract does not describe their copy to host, so no late completion is claimed");
  }
  if (!t.config.overlap) {
    return in_order_window(t, "vLLM without async scheduling consumes each step's output before it schedules the "
                              "next (worker.py, begin_step @ f99d53b), so every copy lands in order");
  }
  return lagging_window(t, 1,
                        "vLLM with async scheduling consumes a step's output, waiting for its copy, before it "
                        "applies the metadata of the step after the next (worker.py, prepare_output and begin_step "
                        "@ f99d53b)");
}

}  // namespace r3::vllm
