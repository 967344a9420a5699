// The lookup over TuningDb::Data: the exact batch or the next larger tuned one (the largest
// above all), else the family's default and why there was no winner.
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "db/tunedb/shape.hpp"
#include "db/tunedb/tunedb.hpp"
#include "db/tunedb/tuning_db_data.hpp"

namespace tunedb {

using detail::Entry;
using detail::FamilyArchCubin;
using detail::FamilyDefault;
using detail::Group;
using detail::ShapeKey;

const Group* TuningDb::Data::find_group(const ShapeKey& key) const noexcept {
  const auto found = std::lower_bound(
      groups.begin(), groups.end(), key,
      [](const Group& group, const ShapeKey& probe) { return group.key.tie() < probe.tie(); });
  if (found == groups.end() || found->key.tie() != key.tie()) return nullptr;
  return &*found;
}

const Entry& TuningDb::Data::pick_entry(const Group& group, int batch, How& how) const noexcept {
  const auto first = entries.begin() + static_cast<std::ptrdiff_t>(group.first);
  const auto last = first + static_cast<std::ptrdiff_t>(group.count);
  const auto found = std::lower_bound(
      first, last, batch, [](const Entry& entry, int wanted) { return entry.batch < wanted; });
  if (found == last) {
    how = How::bucket;  // above the largest tuned batch
    return *(last - 1);
  }
  how = found->batch == batch ? How::exact : How::bucket;
  return *found;
}

Miss TuningDb::Data::why_missing(std::string_view family, std::string_view arch) const noexcept {
  if (!std::binary_search(arches.begin(), arches.end(), arch)) return Miss::arch_not_in_db;
  const auto pair = std::make_pair(family, arch);
  if (!std::binary_search(family_arches.begin(), family_arches.end(), pair)) {
    return Miss::family_not_in_db;
  }
  return Miss::shape_not_tuned;
}

const Config* TuningDb::Data::default_for(std::string_view family) const noexcept {
  const auto found = std::lower_bound(
      defaults.begin(), defaults.end(), family,
      [](const FamilyDefault& entry, std::string_view wanted) { return entry.family < wanted; });
  return found != defaults.end() && found->family == family ? found->config : nullptr;
}

const Cubin* TuningDb::Data::default_cubin(std::string_view family,
                                           std::string_view arch) const noexcept {
  const auto key = std::make_pair(family, arch);
  const auto found = std::lower_bound(
      default_cubins.begin(), default_cubins.end(), key,
      [](const FamilyArchCubin& entry, const std::pair<std::string_view, std::string_view>& want) {
        return std::make_pair(entry.family, entry.arch) < want;
      });
  if (found == default_cubins.end() || found->family != family || found->arch != arch) {
    return nullptr;
  }
  return found->cubin;
}

Lookup TuningDb::lookup(std::string_view family, std::string_view arch, std::string_view shape,
                        int batch) const noexcept {
  Lookup result;
  if (!data_) return result;
  const ShapeKey key{family, arch, shape};
  if (const Group* group = data_->find_group(key)) {
    const Entry& entry = data_->pick_entry(*group, std::max(batch, 1), result.how);
    result.config = entry.config;
    result.tuned_batch = entry.batch;
    result.median_us = entry.median_us;
    result.run_id = entry.run_id;
    result.measured_arch = entry.measured_arch;
    result.device_name = entry.device_name;
    result.default_kept = entry.default_kept;
    result.cubin = entry.cubin;
    return result;
  }
  result.miss = data_->why_missing(family, arch);
  result.config = data_->default_for(family);
  result.how = result.config != nullptr ? How::default_config : How::not_found;
  if (result.config != nullptr) result.cubin = data_->default_cubin(family, arch);
  return result;
}

Lookup TuningDb::lookup(std::string_view family, std::string_view arch,
                        const std::map<std::string, std::string, std::less<>>& shape,
                        int batch) const {
  const std::optional<std::string> text = make_shape(shape);
  if (!text) {
    std::string given;
    for (const auto& [name, value] : shape) {
      given += given.empty() ? "" : ",";
      given += name;
      given += '=';
      given += value;
    }
    throw DbInputError("shape '" + given + "' for family '" + std::string(family) +
                       "' is not allowed: names are [a-z0-9_]+, values [A-Za-z0-9_.-]+ without "
                       "leading zeros, at least one pair");
  }
  return lookup(family, arch, std::string_view(*text), batch);
}

std::optional<std::int64_t> Config::value(std::string_view name) const noexcept {
  const auto found = std::lower_bound(
      params.begin(), params.end(), name,
      [](const Param& param, std::string_view wanted) { return param.name < wanted; });
  if (found == params.end() || found->name != name) return std::nullopt;
  return found->value;
}

const char* how_name(How how) noexcept {
  switch (how) {
    case How::exact:
      return "exact";
    case How::bucket:
      return "bucket";
    case How::default_config:
      return "default";
    case How::not_found:
      return "not_found";
  }
  return "unknown";
}

const char* miss_name(Miss miss) noexcept {
  switch (miss) {
    case Miss::none:
      return "none";
    case Miss::arch_not_in_db:
      return "arch_not_in_db";
    case Miss::family_not_in_db:
      return "family_not_in_db";
    case Miss::shape_not_tuned:
      return "shape_not_tuned";
  }
  return "unknown";
}

}  // namespace tunedb
