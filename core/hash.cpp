#include "core/hash.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>

namespace tuner {

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int digest_length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &digest_length, EVP_sha256(), nullptr) !=
      1) {
    throw std::runtime_error("EVP_Digest(sha256) failed");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(static_cast<std::size_t>(digest_length) * 2);
  for (unsigned int i = 0; i < digest_length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

}  // namespace tuner
