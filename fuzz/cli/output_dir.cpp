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

// What is at a name r3fuzz would replace, as write_new_file() says it: "a FIFO".
const char* kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    default: return "not a regular file";
  }
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

Status check_output_file(std::string_view flag, const std::string& file) {
  const std::string prefix = std::string(flag) + " " + file + ": ";
  if (file.empty()) return Error{std::string(flag) + ": empty path"};
  std::error_code ec;
  const fs::path path(file);
  // lstat: a symbolic link at the name is refused, never followed (write_new_file's rule).
  const fs::file_status at = fs::symlink_status(path, ec);
  if (fs::is_directory(at)) return Error{prefix + "is a directory, not a file"};
  if (fs::exists(at) && !fs::is_regular_file(at)) {
    return Error{prefix + "refusing to replace " + kind_of(at.type()) + " (r3fuzz writes only regular files, each one new)"};
  }
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::file_status where = fs::status(folder, ec);
  if (!fs::exists(where)) return Error{prefix + "no such folder: " + folder.string()};
  if (!fs::is_directory(where)) return Error{prefix + folder.string() + " is not a directory"};
  return probe_writable(prefix, folder);
}

}  // namespace r3
