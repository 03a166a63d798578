// Paths from the command line inside what a command prints. The user typed them, but a file name
// can hold any byte but '/' and NUL (a glob or a script passes such a name on), so a path is shown
// as text from a file is: through terminal_safe() (docs/SECURITY.md, rule 5), every command alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reference/error.hpp"

namespace r3 {

// `e` with every occurrence of each of `paths` shown through terminal_safe(). Longer paths are
// replaced first, so a folder named inside a file's path is replaced with it. Messages that name
// no such path come back unchanged.
Error with_shown_paths(Error e, std::vector<std::string_view> paths);

}  // namespace r3
