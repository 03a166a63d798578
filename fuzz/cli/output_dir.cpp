#include "fuzz/cli/output_dir.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace r3 {
namespace {

namespace fs = std::filesystem;

// access(W_OK) says yes to root everywhere but read-only mounts; creating a file is the test
// that holds for every user and file system.
Status probe_writable(const std::string& prefix, const fs::path& dir) {
  std::string name = (dir / ".r3fuzz-write-test-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return Error{prefix + "cannot write into " + dir.string() + ": " + std::strerror(errno)};
  ::close(fd);
  ::unlink(name.c_str());
  return ok_status();
}

}  // namespace

Status check_output_dir(std::string_view flag, const std::string& dir) {
  const std::string prefix = std::string(flag) + " " + dir + ": ";
  if (dir.empty()) return Error{std::string(flag) + ": empty path"};
  std::error_code ec;
  const fs::path path(dir);
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) return Error{prefix + "not a directory"};
    return probe_writable(prefix, path);
  }
  // The nearest ancestor that exists decides whether the folder can be created.
  fs::path ancestor = fs::absolute(path, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec) && ancestor != ancestor.parent_path())
    ancestor = ancestor.parent_path();
  if (!fs::is_directory(ancestor, ec)) return Error{prefix + ancestor.string() + " is not a directory"};
  return probe_writable(prefix, ancestor);
}

}  // namespace r3
