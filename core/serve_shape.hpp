#pragma once
// Reading a canonical shape text ("a=1,b=x", core/shape.hpp) on the serving launcher's hot path:
// no allocation, no exceptions. Header-only, so that libtunedb_cuda's families use it without
// linking core/.
#include <algorithm>
#include <charconv>
#include <cstddef>
#include <optional>
#include <string_view>
#include <system_error>

namespace tuner::serve_shape {

// The value of dimension `name`; nullopt when it is absent or a pair of the text has no '='.
inline std::optional<std::string_view> value(std::string_view shape,
                                             std::string_view name) noexcept {
  std::optional<std::string_view> found;
  while (!shape.empty()) {
    const std::size_t comma = std::min(shape.find(','), shape.size());
    const std::string_view pair = shape.substr(0, comma);
    shape.remove_prefix(std::min(comma + 1, shape.size()));
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) return std::nullopt;
    if (pair.substr(0, equals) == name) found = pair.substr(equals + 1);
  }
  return found;
}

// The value of `name` as a positive decimal int; nullopt when absent, not one, or <= 0.
inline std::optional<int> positive(std::string_view shape, std::string_view name) noexcept {
  const std::optional<std::string_view> text = value(shape, name);
  if (!text) return std::nullopt;
  int parsed = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), parsed);
  if (error != std::errc() || end != text->data() + text->size() || parsed <= 0) {
    return std::nullopt;
  }
  return parsed;
}

}  // namespace tuner::serve_shape
