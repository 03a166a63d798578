#include "fuzz/io/heap_policy.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace r3 {

void keep_freed_memory_in_heap() {
#if defined(__GLIBC__)
  // Allocations up to 64 MiB come from the heap, and the heap gives back only a free top above
  // 256 MiB: a campaign's working set stays mapped. (Under AddressSanitizer its allocator
  // ignores these settings.)
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace r3
