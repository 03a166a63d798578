#include "fuzz/io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace r3 {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

std::string size_text(uint64_t bytes) {
  if (bytes % (uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::string> read_input_file(const std::string& path, uint64_t limit) {
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; fstat then refuses it.
  const Fd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) return Error{path + ": cannot open: " + errno_text(errno)};
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return Error{path + ": cannot read: " + errno_text(errno)};
  if (S_ISDIR(st.st_mode)) return Error{path + ": is a directory"};
  if (!S_ISREG(st.st_mode)) return Error{path + ": not a regular file (" + kind_of(st.st_mode) + ")"};
  const auto size = static_cast<uint64_t>(st.st_size);
  const std::string too_large = path + ": too large: ";
  const std::string limit_text = " (the limit is " + size_text(limit) + ")";
  if (size > limit) return Error{too_large + std::to_string(size) + " bytes" + limit_text};
  std::string bytes;
  bytes.resize(static_cast<size_t>(size));
  size_t got = 0;
  // The file may change under us: read until EOF, never past the limit.
  for (;;) {
    if (got == bytes.size()) {
      if (bytes.size() > limit) return Error{too_large + "more than " + std::to_string(limit) + " bytes" + limit_text};
      bytes.resize(bytes.size() + 4096);
    }
    const ssize_t n = ::read(file.fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{path + ": cannot read: " + errno_text(errno)};
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > limit) return Error{too_large + "more than " + std::to_string(limit) + " bytes" + limit_text};
  bytes.resize(got);
  return bytes;
}

}  // namespace r3
