#include "fuzz/io/output_path.hpp"

#include <cctype>
#include <cstdint>
#include <cstdio>

namespace r3 {
namespace {

bool safe_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '_' || ch == '.';
}

std::string hex_hash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across runs and platforms
  for (unsigned char b : text) h = (h ^ b) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace

Status check_safe_name(std::string_view name, std::string_view what) {
  const std::string field(what);
  if (name.empty()) return Error{field + ": empty (it names the files r3fuzz writes)"};
  if (name.size() > kMaxDataNameLength) {
    return Error{field + ": " + std::to_string(name.size()) + " characters, at most " +
                 std::to_string(kMaxDataNameLength) + " allowed (it names the files r3fuzz writes)"};
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (!safe_char(name[i])) {
      return Error{field + ": character " + std::to_string(i + 1) +
                   " is not allowed (use letters, digits, '-', '_' and '.': it names the files r3fuzz writes)"};
    }
  }
  if (name.find("..") != std::string_view::npos) return Error{field + ": \"..\" is not allowed (it names the files r3fuzz writes)"};
  return ok_status();
}

std::string file_name_from_text(std::string_view text, std::string_view extension) {
  std::string name(text);
  for (char& ch : name)
    if (!safe_char(ch) && ch != '+') ch = '-';
  if (name.empty() || name.front() == '.') name.insert(name.begin(), '-');
  if (name.size() > kMaxDataNameLength) name = name.substr(0, kMaxDataNameLength - 17) + "-" + hex_hash(text);
  return name + std::string(extension);
}

Result<std::filesystem::path> output_path_inside(const std::filesystem::path& dir, const std::string& name) {
  const std::filesystem::path leaf(name);
  const bool one_component = !name.empty() && name.find('/') == std::string::npos && name != "." && name != ".." &&
                             leaf.filename() == leaf;
  if (!one_component) return Error{"refusing to write \"" + name + "\": not a plain file name inside " + dir.string()};
  std::filesystem::path path = dir / leaf;
  std::error_code ec;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) {
    return Error{path.string() + ": refusing to write through a symbolic link"};
  }
  return path;
}

}  // namespace r3
