// Writing an output file: always a new file. The bytes go to a temporary file created in the
// target's folder (O_CREAT | O_EXCL, mode 0644), which is then renamed over the name. An existing
// file at the name is never opened for writing, so a hard link planted in --out cannot carry the
// write to a file outside it, and a FIFO planted there cannot block r3fuzz (docs/SECURITY.md).
#pragma once

#include <string>
#include <string_view>

#include "reference/error.hpp"

namespace r3 {

// Writes `bytes` as the file `path`. Refused when `path` exists and is not a regular file (a
// symbolic link, FIFO, socket, device or directory: "<path>: refusing to replace a FIFO"), so
// /dev/full or /dev/stdout given as an output is an error, never written through. A failed write
// or close (ENOSPC, EIO) is an error naming the path and the errno text ("<path>: cannot open for
// writing: ...", "<path>: cannot write: No space left on device"); the temporary file is
// then removed and an earlier file at `path` stays as it was.
Status write_new_file(const std::string& path, std::string_view bytes);

}  // namespace r3
