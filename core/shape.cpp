#include "core/shape.hpp"

#include <charconv>

#include "core/error.hpp"

namespace tuner {

std::string Shape::canonical() const {
  std::string text;
  for (const auto& [name, value] : dims) {
    if (!text.empty()) text += ',';
    text += name;
    text += '=';
    text += value;
  }
  return text;
}

const std::string& Shape::text(std::string_view name) const {
  const auto found = dims.find(name);
  if (found == dims.end()) {
    throw InputError("shape '" + canonical() + "' has no dimension '" + std::string(name) + "'");
  }
  return found->second;
}

long long Shape::integer(std::string_view name) const {
  const std::string& value = text(name);
  long long number = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, error] = std::from_chars(value.data(), end, number);
  if (value.empty() || error != std::errc() || ptr != end) {
    throw InputError("shape dimension " + std::string(name) + " needs an integer, got '" + value +
                     "'");
  }
  return number;
}

}  // namespace tuner
