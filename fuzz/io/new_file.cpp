#include "fuzz/io/new_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace r3 {
namespace {

std::string errno_text() { return std::strerror(errno); }

// What lstat found, for "refusing to replace a FIFO".
const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

Status write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{errno ? errno_text() : "write error"};
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return ok_status();
}

}  // namespace

Status write_new_file(const std::string& path, std::string_view bytes) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return Error{path + ": refusing to replace " + std::string(kind_of(st.st_mode)) +
                 " (r3fuzz writes only regular files, each one new)"};
  }
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  // A name no one else picks: pid and a per-process counter; O_EXCL refuses one that exists.
  static std::atomic<unsigned long> counter{0};
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temp = (dir / (".r3fuzz-new-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp")).string();
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return Error{path + ": cannot open for writing: " + errno_text()};  // the temporary, in its folder
  errno = 0;
  Status written = write_all(fd, bytes);
  if (::close(fd) != 0 && written.ok()) written = Error{errno_text()};
  if (!written.ok()) {
    ::unlink(temp.c_str());
    return Error{path + ": cannot write: " + written.error().message};
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(temp.c_str());
    return Error{path + ": cannot write: " + why};
  }
  return ok_status();
}

}  // namespace r3
