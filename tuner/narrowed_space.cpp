#include "tuner/narrowed_space.hpp"

namespace tuner {

long long cross_product_size(const std::vector<Parameter>& space) {
  long long members = 1;
  for (const Parameter& parameter : space) {
    members *= static_cast<long long>(parameter.values.size());
  }
  return members;
}

NarrowedSpace narrow_space(const Family& family, const Shape& shape) {
  const std::vector<Parameter>& space = family.space();
  NarrowedSpace result;
  result.kept = space;
  if (family.value_rule == nullptr) return result;
  for (std::size_t index = 0; index < space.size(); ++index) {
    Parameter& kept = result.kept[index];
    kept.values.clear();
    // Members with a narrowed value here: earlier parameters at their kept values (a narrowed
    // value there already stands for the member), later ones at any value.
    long long others = 1;
    for (std::size_t other = 0; other < space.size(); ++other) {
      if (other == index) continue;
      const Parameter& counted = other < index ? result.kept[other] : space[other];
      others *= static_cast<long long>(counted.values.size());
    }
    for (const int value : space[index].values) {
      std::string reason = family.value_rule(space[index].name, value, shape);
      if (reason.empty()) {
        kept.values.push_back(value);
      } else {
        result.narrowed.push_back(
            NarrowedValue{space[index].name, value, std::move(reason), others});
      }
    }
  }
  return result;
}

Config narrowed_config(const NarrowedValue& narrowed) {
  return Config{{{narrowed.param, narrowed.value}}};
}

}  // namespace tuner
