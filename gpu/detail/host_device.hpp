// R3_HD marks a function both host and device callable under nvcc and is empty for the
// host compiler (CUTLASS_HOST_DEVICE habit), so kernel bodies have one source.
#pragma once

#if defined(__CUDACC__)
#define R3_HD __host__ __device__
#else
#define R3_HD
#endif
