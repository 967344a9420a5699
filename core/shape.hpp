#pragma once
// A problem shape as data: a family's dimensions as name -> value pairs (values are decimal
// integers or identifiers). The canonical text, "name=value" pairs sorted by name and joined by
// ',' (e.g. "m=64,n=2048"), is what the store, the
// frozen DB and the runtime lookup key on. Families build shapes (Family::canonicalize); nothing
// else knows what the dimensions mean.
#include <map>
#include <string>
#include <string_view>

namespace tuner {

struct Shape {
  std::map<std::string, std::string, std::less<>> dims;

  // "a=1,b=x": sorted by name (std::map order), no spaces.
  std::string canonical() const;
  // The value of `name`; throws InputError naming the dimension when absent or not an integer.
  long long integer(std::string_view name) const;
  const std::string& text(std::string_view name) const;
  bool operator==(const Shape& other) const = default;
};

// Parsing canonical text back into a Shape: tuner/shape_text.hpp (over db/tunedb/shape.hpp, the
// one checker of the canonical form).

}  // namespace tuner
