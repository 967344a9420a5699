#include "tuner/shape_text.hpp"

#include "core/error.hpp"
#include "db/tunedb/shape.hpp"

namespace tuner {

Shape parse_canonical_shape(std::string_view text) {
  if (const auto problem = tunedb::shape_problem(text)) {
    throw InputError("shape '" + std::string(text) + "' is not canonical (" + *problem +
                     "): write name=value pairs sorted by name, joined by ',' without spaces, "
                     "e.g. 'block=128,k=7168,n=4096'");
  }
  Shape shape;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view pair = text.substr(start, comma - start);
    const std::size_t equals = pair.find('=');
    shape.dims.emplace(std::string(pair.substr(0, equals)), std::string(pair.substr(equals + 1)));
    start = comma + 1;
  }
  return shape;
}

}  // namespace tuner
