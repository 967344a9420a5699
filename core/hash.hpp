#pragma once
// Content hashes (SHA-256, hex) for source fingerprints and cache keys.
#include <string>
#include <string_view>

namespace tuner {

std::string sha256_hex(std::string_view data);

}  // namespace tuner
