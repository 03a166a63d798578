// The lifecycle kill matrix (fuzz/mutants/trace_kill_matrix.hpp): every lifecycle fault, the
// copy-order ones included, is killed in each engine's fixed model, and the report's lines.
#include "fuzz/mutants/trace_kill_matrix.hpp"

#include <gtest/gtest.h>

#include <string>

namespace r3 {
namespace {

TEST(TraceKillMatrix, EveryLifecycleAndCopyFaultIsKilledInEachFixedModel) {
  for (const char* profile : {"sglang", "vllm"}) {
    SCOPED_TRACE(profile);
    const std::vector<TraceMutantResult> rows = trace_kill_matrix(parse_profile(profile).value(), 1, 200);
    ASSERT_EQ(rows.size(), all_lifecycle_faults().size() + all_copy_faults().size());
    for (const TraceMutantResult& r : rows) EXPECT_TRUE(r.killed) << to_string(r.fault) << ": " << r.detail;
    const std::string text = trace_kill_matrix_text(rows);
    EXPECT_NE(text.find("result: 5 of 5 lifecycle mutants killed\n"), std::string::npos) << text;
    EXPECT_NE(text.find("result: 3 of 3 copy-order mutants killed, 0 equivalent within bounds\n"), std::string::npos)
        << text;
  }
}

// A copy fault the drawn traces miss goes to the bounded search, which settles it either way.
TEST(TraceKillMatrix, TheBoundedSearchKillsOrProvesACopyFault) {
  TraceMutantResult killed{"x-fixed", LifecycleFault::copy_not_awaited, true, 5, "wrong_route", "request 0 ...",
                           true, false, 12};
  TraceMutantResult equivalent{"x-fixed", LifecycleFault::copy_reads_next_forward, false, 5, "", "", true, true, 40};
  const std::string text = trace_kill_matrix_text({killed, equivalent});
  EXPECT_EQ(text,
            "  x-fixed+copy-not-awaited (a read does not wait for the copy to host: rows of a copy still in flight read "
            "back as zeros): killed by the bounded search after 5 drawn traces and 12 tiny ones (wrong_route: request 0 "
            "...)\n"
            "  x-fixed+copy-reads-next-forward (a late copy to host reads the rows the next forward wrote (no clone or "
            "snapshot before the next forward, or no event synchronized before the next copy)): equivalent within bounds "
            "(2 requests, 3 steps, prompts of 2, 2 outputs, every completion order: 40 judged) after 5 drawn traces\n"
            "result: 0 of 0 lifecycle mutants killed\n"
            "result: 1 of 2 copy-order mutants killed, 1 equivalent within bounds\n");
}

}  // namespace
}  // namespace r3
