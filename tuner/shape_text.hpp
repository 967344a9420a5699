#pragma once
// Canonical shape text (as the DB keys it) back into a Shape.
#include <string_view>

#include "core/shape.hpp"

namespace tuner {

// Throws InputError when `text` is not canonical (db/tunedb/shape.hpp says what is), naming the
// text, the problem and the expected form.
Shape parse_canonical_shape(std::string_view text);

}  // namespace tuner
