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

// The DOM builder nlohmann::json::parse uses, plus a set of the keys seen in each open object,
// and the depth and parsed size counted against the budget.
class NoDuplicateKeys : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  NoDuplicateKeys(json& result, std::string_view text, const char* const* read_up_to, const JsonBudget& budget)
      : json_sax_dom_parser(result, true), text_(text), read_up_to_(read_up_to), budget_(budget) {}

  bool null() { return charge(0) && json_sax_dom_parser::null(); }
  bool boolean(bool v) { return charge(0) && json_sax_dom_parser::boolean(v); }
  bool number_integer(number_integer_t v) { return charge(0) && json_sax_dom_parser::number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return charge(0) && json_sax_dom_parser::number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return charge(0) && json_sax_dom_parser::number_float(v, s); }
  bool string(string_t& v) { return charge(sizeof(string_t) + v.size()) && json_sax_dom_parser::string(v); }

  bool start_object(std::size_t n) {
    if (!enter()) return false;
    keys_.emplace_back();
    return json_sax_dom_parser::start_object(n);
  }
  bool end_object() {
    keys_.pop_back();
    --depth_;
    return json_sax_dom_parser::end_object();
  }
  bool start_array(std::size_t n) { return enter() && json_sax_dom_parser::start_array(n); }
  bool end_array() {
    --depth_;
    return json_sax_dom_parser::end_array();
  }
  bool key(string_t& k) {
    if (!keys_.back().insert(k).second) {
      problem_ = "duplicate key \"" + k + "\" at " + here();
      return false;  // stops the parse
    }
    // The map node, the key twice (ours and the document's) and the value slot.
    return charge(kMapNodeBytes + 2 * (sizeof(string_t) + k.size())) && json_sax_dom_parser::key(k);
  }
  const std::string& problem() const { return problem_; }

 private:
  static constexpr size_t kMapNodeBytes = 48;

  std::string here() const {
    const auto read = static_cast<size_t>(*read_up_to_ - text_.data());
    return position_text(text_, read == 0 ? 0 : read - 1);
  }
  bool enter() {
    if (++depth_ > budget_.max_depth) {
      problem_ = "nested deeper than " + std::to_string(budget_.max_depth) + " levels at " + here();
      return false;
    }
    return charge(0);
  }
  // Every value costs a json node, plus `extra`.
  bool charge(size_t extra) {
    parsed_ += sizeof(json) + extra;
    if (parsed_ <= budget_.max_parsed_bytes) return true;
    problem_ = "larger than the budget of " + std::to_string(budget_.max_parsed_bytes) + " bytes once parsed, at " +
               here();
    return false;
  }

  std::string_view text_;
  const char* const* read_up_to_;
  const JsonBudget& budget_;
  size_t depth_ = 0;
  size_t parsed_ = 0;
  std::vector<std::set<std::string>> keys_;
  std::string problem_;
};

}  // namespace

Result<json> parse_json_strictly(std::string_view text, const JsonBudget& budget) {
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return Error{"NUL byte at " + position_text(text, nul)};
  }
  json result;
  const char* read_up_to = text.data();
  NoDuplicateKeys sax(result, text, &read_up_to, budget);
  try {
    const bool ok = json::sax_parse(TrackingIterator(text.data(), &read_up_to),
                                    TrackingIterator(text.data() + text.size(), &read_up_to), &sax);
    if (!sax.problem().empty()) return Error{sax.problem()};
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
