// How the process keeps memory it frees. A step of a wide case (D = 512, T = 8) holds vectors
// of a few hundred KiB: above glibc's mmap threshold, each is mapped fresh and unmapped again
// case after case, and the page faults cost about three quarters of deriving the step. Kept
// in the heap instead, the next case reuses the same pages.
#pragma once

namespace r3 {

// Call once at start-up, before the first allocation that matters (main, a fuzz target's
// initializer, a benchmark). A no-op where the C library has no such settings.
void keep_freed_memory_in_heap();

}  // namespace r3
