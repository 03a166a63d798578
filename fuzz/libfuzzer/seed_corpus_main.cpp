// r3fuzz_seed_corpus OUT_DIR CASE.json|DIR...: readable cases -> fuzz inputs, one OUT_DIR/<stem>.bin
// per case (directories are walked for *.json, in sorted order), as `r3fuzz seed --to-binary`
// writes them. .clusterfuzzlite/build.sh packs the seed corpora with it: it links the case
// codec only, so the OSS-Fuzz build compiles the fuzz targets and this, not the whole r3fuzz
// tool. Every bad file is reported (its path first); exit 0 when all converted, 2 otherwise.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/new_file.hpp"
#include "fuzz/io/terminal_text.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> case_files(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    const fs::path in = argv[i];
    if (!fs::is_directory(in)) {
      files.push_back(in);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& e : fs::recursive_directory_iterator(in))
      if (e.is_regular_file() && e.path().extension() == ".json") found.push_back(e.path());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

r3::Status convert(const fs::path& file, const fs::path& out_dir) {
  R3_TRY(r3::Case c, r3::read_case_file(file.string()));
  const std::vector<uint8_t> bytes = r3::case_to_binary(c);
  const fs::path out = out_dir / (file.stem().string() + ".bin");
  // A new file renamed over the name, like every output of r3fuzz (docs/SECURITY.md rule 2).
  return r3::write_new_file(out.string(), {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: r3fuzz_seed_corpus OUT_DIR CASE.json|DIR...\n";
    return 2;
  }
  int failed = 0, written = 0;
  for (const fs::path& file : case_files(argc, argv)) {
    const r3::Status s = convert(file, argv[1]);
    if (s.ok()) {
      ++written;
    } else {
      std::cerr << "r3fuzz_seed_corpus: " << r3::terminal_safe(s.error().message) << "\n";
      ++failed;
    }
  }
  std::cout << "r3fuzz_seed_corpus: wrote " << written << " input(s) into " << argv[1] << "\n";
  return failed ? 2 : 0;
}
