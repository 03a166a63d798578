// --out DIR and --junit FILE checked before any case runs: a path that is a file where a folder
// is wanted (or a folder where a file is), or a folder r3fuzz cannot write into, is a usage
// error (exit 2) at once, not a failure to save the first finding or the report minutes into a
// campaign.
#pragma once

#include <string>
#include <string_view>

#include "reference/error.hpp"

namespace r3 {

// Ok when `dir` is a directory r3fuzz can create files in, or does not exist yet and can be
// created (its nearest existing ancestor is a directory r3fuzz can write into). Creates
// nothing that stays: writability is probed with a temporary file, removed at once.
// "--out r3fuzz-out/x.json: not a directory", "--out /proc/x: cannot write into /proc: ...".
Status check_output_dir(std::string_view flag, const std::string& dir);

// Ok when `file` can be written later by write_new_file() (fuzz/io/new_file.hpp): its folder
// exists, is a directory and r3fuzz can create files in it (probed as above), and the name is
// free or a regular file (which the write replaces). Creates no folder. "--junit out/r.xml: no
// such folder: out", "--junit build: is a directory, not a file", "--junit p: refusing to
// replace a FIFO (r3fuzz writes only regular files, each one new)".
Status check_output_file(std::string_view flag, const std::string& file);

}  // namespace r3
