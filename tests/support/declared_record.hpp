#pragma once
// A family's argument record built the way a caller without its header does (the C ABI's
// description, Python's ctypes): every declared field written at its declared offset. Field i
// holds declared_value(i): 0x1000 x (i + 1) for addresses and sizes, i + 0.5 for floats, i + 1 for
// ints, so that reading the record back through the family's struct shows each name landed on
// the member of that name.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/deploy_family.hpp"

namespace tuner::test {

inline std::size_t field_index(const DeployFamily& family, std::string_view name) {
  for (std::size_t i = 0; i < family.fields.size(); ++i) {
    if (family.fields[i].name == name) return i;
  }
  FAIL("no declared field " << name);
  return 0;
}

inline std::uint64_t declared_address(const DeployFamily& family, std::string_view name) {
  return 0x1000 * (field_index(family, name) + 1);
}

inline float declared_float(const DeployFamily& family, std::string_view name) {
  return static_cast<float>(field_index(family, name)) + 0.5f;
}

inline std::vector<unsigned char> record_from_fields(const DeployFamily& family) {
  std::vector<unsigned char> bytes(family.args_size, 0);
  for (std::size_t i = 0; i < family.fields.size(); ++i) {
    const ArgField& field = family.fields[i];
    if (field.kind == ArgKind::f32) {
      const float value = static_cast<float>(i) + 0.5f;
      std::memcpy(bytes.data() + field.offset, &value, sizeof value);
    } else if (field.kind == ArgKind::i32) {
      const auto value = static_cast<std::int32_t>(i + 1);
      std::memcpy(bytes.data() + field.offset, &value, sizeof value);
    } else {
      const std::uint64_t value = 0x1000 * (i + 1);
      std::memcpy(bytes.data() + field.offset, &value, sizeof value);
    }
  }
  return bytes;
}

}  // namespace tuner::test
