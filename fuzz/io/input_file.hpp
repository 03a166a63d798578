// Reading a file r3fuzz did not write (a case, a deployment, a log, crash bytes): the one
// reader every command uses, so a hostile path cannot exhaust memory or block. Only regular
// files are read (not directories, FIFOs, sockets or devices such as /dev/zero), and at most
// kMaxInputFileBytes of them; every refusal is an error value naming the file and the reason.
#pragma once

#include <cstdint>
#include <string>

#include "reference/error.hpp"

namespace r3 {

// 64 MiB: the largest corpus case is a few KiB and a production log of a million steps is
// about 60 MiB, so the limit costs nothing real and bounds memory (docs/SECURITY.md).
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{64} << 20;

// The whole file. Errors read "<path>: <reason>", the reason being "cannot open: <errno text>",
// "is a directory", "not a regular file (a FIFO)", "too large: N bytes (the limit is 64 MiB)"
// or "cannot read: <errno text>".
Result<std::string> read_input_file(const std::string& path, uint64_t limit = kMaxInputFileBytes);

}  // namespace r3
