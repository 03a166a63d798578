#include "fuzz/io/strict_json.hpp"

#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace r3 {
namespace {

using json = nlohmann::json;

// A char iterator that records how far the parser has read, so a SAX event can say where it is.
class TrackingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* p, const char** read_up_to) : p_(p), read_up_to_(read_up_to) {}
  reference operator*() const { return *p_; }
  TrackingIterator& operator++() {
    *read_up_to_ = ++p_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackingIterator& other) const { return p_ == other.p_; }
  bool operator!=(const TrackingIterator& other) const { return p_ != other.p_; }

 private:
  const char* p_;
  const char** read_up_to_;
};

// "line L, column C" of byte `offset` (both from 1).
std::string position_text(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// The DOM builder nlohmann::json::parse uses, plus a set of the keys seen in each open object.
class NoDuplicateKeys : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  NoDuplicateKeys(json& result, std::string_view text, const char* const* read_up_to)
      : json_sax_dom_parser(result, true), text_(text), read_up_to_(read_up_to) {}

  bool start_object(std::size_t n) {
    keys_.emplace_back();
    return json_sax_dom_parser::start_object(n);
  }
  bool end_object() {
    keys_.pop_back();
    return json_sax_dom_parser::end_object();
  }
  bool key(string_t& k) {
    if (!keys_.back().insert(k).second) {
      const auto read = static_cast<size_t>(*read_up_to_ - text_.data());
      duplicate_ = "duplicate key \"" + k + "\" at " + position_text(text_, read == 0 ? 0 : read - 1);
      return false;  // stops the parse
    }
    return json_sax_dom_parser::key(k);
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  std::string_view text_;
  const char* const* read_up_to_;
  std::vector<std::set<std::string>> keys_;
  std::string duplicate_;
};

}  // namespace

Result<json> parse_json_strictly(std::string_view text) {
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return Error{"NUL byte at " + position_text(text, nul)};
  }
  json result;
  const char* read_up_to = text.data();
  NoDuplicateKeys sax(result, text, &read_up_to);
  try {
    const bool ok = json::sax_parse(TrackingIterator(text.data(), &read_up_to),
                                    TrackingIterator(text.data() + text.size(), &read_up_to), &sax);
    if (!sax.duplicate().empty()) return Error{sax.duplicate()};
    if (!ok) return Error{std::string(kInvalidJson) + "cannot parse"};
  } catch (const json::exception& e) {
    // what() reads "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    std::string why = e.what();
    if (auto cut = why.find("] "); cut != std::string::npos) why = why.substr(cut + 2);
    return Error{std::string(kInvalidJson) + why};
  }
  return result;
}

}  // namespace r3
