#include "db/tunedb/params.hpp"

#include <algorithm>
#include <charconv>

namespace tunedb {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::optional<std::vector<NamedValue>> object() {
    std::vector<NamedValue> params;
    if (!consume('{')) return std::nullopt;
    if (consume('}')) return finish(std::move(params));
    do {
      std::optional<std::string> name = string();
      if (!name || !consume(':')) return std::nullopt;
      std::optional<std::int64_t> value = integer();
      if (!value) return std::nullopt;
      params.push_back({std::move(*name), *value});
    } while (consume(','));
    if (!consume('}')) return std::nullopt;
    return finish(std::move(params));
  }

 private:
  std::optional<std::vector<NamedValue>> finish(std::vector<NamedValue> params) {
    skip_space();
    if (pos_ != text_.size()) return std::nullopt;
    std::sort(params.begin(), params.end(),
              [](const NamedValue& a, const NamedValue& b) { return a.name < b.name; });
    const auto duplicate = std::adjacent_find(
        params.begin(), params.end(),
        [](const NamedValue& a, const NamedValue& b) { return a.name == b.name; });
    if (duplicate != params.end()) return std::nullopt;
    return params;
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  // Parameter names are identifiers: escapes and control characters are refused rather than
  // decoded, so the canonical text is the stored text.
  std::optional<std::string> string() {
    if (!consume('"')) return std::nullopt;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '\\' || c < 0x20) return std::nullopt;
      ++pos_;
    }
    if (pos_ == text_.size() || pos_ == start) return std::nullopt;
    std::string name(text_.substr(start, pos_ - start));
    ++pos_;
    return name;
  }

  std::optional<std::int64_t> integer() {
    skip_space();
    const char* first = text_.data() + pos_;
    const char* last = text_.data() + text_.size();
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(first, last, value);
    if (error != std::errc() || end == first) return std::nullopt;
    // JSON has no leading '+' or leading zeros; a '.', 'e' or 'E' right after makes it a float.
    const std::string_view digits(first, static_cast<std::size_t>(end - first));
    const std::string_view unsigned_digits = digits.front() == '-' ? digits.substr(1) : digits;
    if (unsigned_digits.size() > 1 && unsigned_digits.front() == '0') return std::nullopt;
    if (end != last && (*end == '.' || *end == 'e' || *end == 'E')) return std::nullopt;
    pos_ += digits.size();
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::optional<std::vector<NamedValue>> parse_params_json(std::string_view json) {
  return Parser(json).object();
}

std::string params_to_json(const std::vector<NamedValue>& params) {
  std::string json = "{";
  for (const NamedValue& param : params) {
    if (json.size() > 1) json += ',';
    json += '"' + param.name + "\":" + std::to_string(param.value);
  }
  return json + '}';
}

namespace {

// An integer as params_to_json writes it at `pos` (no '+', leading zero or "-0"; within int64):
// its length, or 0.
std::size_t canonical_integer_length(std::string_view json, std::size_t pos) {
  const char* first = json.data() + pos;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(first, json.data() + json.size(), value);
  if (error != std::errc() || end == first) return 0;
  const std::string_view digits(first, static_cast<std::size_t>(end - first));
  const std::string_view unsigned_digits = digits.front() == '-' ? digits.substr(1) : digits;
  if (unsigned_digits.front() == '0' && (digits.size() > 1)) return 0;  // "01", "-0", "-01"
  return digits.size();
}

}  // namespace

bool is_canonical_params_json(std::string_view json) {
  if (json.size() < 2 || json.front() != '{' || json.back() != '}') return false;
  if (json.size() == 2) return true;
  std::string_view previous_name;
  std::size_t pos = 1;
  while (true) {
    if (json[pos] != '"') return false;
    const std::size_t name_start = ++pos;
    while (pos < json.size() && json[pos] != '"') {
      const auto c = static_cast<unsigned char>(json[pos]);
      if (c == '\\' || c < 0x20) return false;
      ++pos;
    }
    if (pos == json.size() || pos == name_start) return false;
    const std::string_view name = json.substr(name_start, pos - name_start);
    if (!previous_name.empty() && !(previous_name < name)) return false;  // sorted, no duplicate
    previous_name = name;
    if (++pos == json.size() || json[pos] != ':') return false;
    const std::size_t length = canonical_integer_length(json, ++pos);
    if (length == 0) return false;
    pos += length;  // < json.size(): the text ends in '}', which is no digit
    if (json[pos] == '}') return pos + 1 == json.size();
    if (json[pos] != ',') return false;
    ++pos;
  }
}

std::optional<std::string> canonical_params_json(std::string_view json) {
  // The store's rows arrive canonical (the tuner writes them so): checked, not rebuilt, which was
  // 2 s of recording a 1.2 M-row plan.
  if (is_canonical_params_json(json)) return std::string(json);
  std::optional<std::vector<NamedValue>> params = parse_params_json(json);
  if (!params) return std::nullopt;
  return params_to_json(*params);
}

}  // namespace tunedb
