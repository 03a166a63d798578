// --out checked before any case runs: a path that is a file, or a folder r3fuzz cannot
// write into, is a usage error (exit 2) at once, not a failure to save the first finding
// minutes into a campaign.
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

}  // namespace r3
