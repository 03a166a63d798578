// Runs a built executable (the e2e tests' r3fuzz) with stdout and stderr captured to files in a
// directory the test owns, and returns its exit code and both streams (style.md 12).
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace r3::test {

struct BinaryRun {
  int exit_code = -1;  // 128 + the signal when a signal ended it, as a shell reports it
  std::string out;     // stdout
  std::string err;     // stderr
};

// The whole file, byte for byte; empty when it cannot be read.
inline std::string read_file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline int exit_code_of_wait_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// The run's streams, read back from the files they were written to in `capture_dir`.
inline BinaryRun captured_run(int exit_code, const std::filesystem::path& capture_dir) {
  return {exit_code, read_file_bytes(capture_dir / "stdout"), read_file_bytes(capture_dir / "stderr")};
}

// Starts `binary` with `args` (no shell), its stdout and stderr going to files in `capture_dir`;
// returns its pid, for a test that must signal it before waiting for it.
inline pid_t start_binary(const std::string& binary, const std::vector<std::string>& args,
                          const std::filesystem::path& capture_dir) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open((capture_dir / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open((capture_dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for a binary start_binary() started and collects what it wrote.
inline BinaryRun wait_for_binary(pid_t pid, const std::filesystem::path& capture_dir) {
  int status = 0;
  waitpid(pid, &status, 0);
  return captured_run(exit_code_of_wait_status(status), capture_dir);
}

inline BinaryRun run_binary(const std::string& binary, const std::vector<std::string>& args,
                            const std::filesystem::path& capture_dir) {
  return wait_for_binary(start_binary(binary, args, capture_dir), capture_dir);
}

// Runs `binary` through the shell with `shell_args` appended as written: the caller quotes what
// needs quoting. For tests that read best as one command line.
inline BinaryRun run_binary_command_line(const std::string& binary, const std::string& shell_args,
                                         const std::filesystem::path& capture_dir) {
  const std::string cmd = "'" + binary + "' " + shell_args + " >'" + (capture_dir / "stdout").string() + "' 2>'" +
                          (capture_dir / "stderr").string() + "'";
  return captured_run(exit_code_of_wait_status(std::system(cmd.c_str())), capture_dir);
}

}  // namespace r3::test
