// main() for fuzz targets in builds without libFuzzer: runs LLVMFuzzerTestOneInput once on
// every file named (directories are walked), so the target bodies are built and tested with
// any compiler, and a crash artifact replays without clang. Exit 0 when every input ran.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/io/input_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

int run_file(const std::filesystem::path& path, int& rejected) {
  // The same bounded reader as the r3fuzz tool: a FIFO or /dev/zero is refused, not read forever.
  const r3::Result<std::string> bytes = r3::read_input_file(path.string());
  if (!bytes) {
    std::fprintf(stderr, "%s\n", bytes.error().message.c_str());
    return 2;
  }
  if (LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()) == -1) ++rejected;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE|DIR...  (runs the fuzz target once on each input)\n", argv[0]);
    return 2;
  }
  int ran = 0;
  int rejected = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<std::filesystem::path> files;
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    for (const auto& f : files) {
      if (int rc = run_file(f, rejected); rc != 0) return rc;
      ++ran;
    }
  }
  std::fprintf(stderr, "replayed %d input(s), %d rejected by the target\n", ran, rejected);
  return 0;
}
