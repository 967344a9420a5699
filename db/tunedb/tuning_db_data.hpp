#pragma once
// Internal to tunedb (tunedb.hpp is the interface): the in-memory index a TuningDb answers from,
// built from a file by tuning_db_loader.cpp and searched by tuning_db_lookup.cpp.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/tunedb.hpp"

namespace tunedb {

namespace detail {

struct ShapeKey {
  std::string_view family;
  std::string_view arch;
  std::string_view shape;  // canonical text

  auto tie() const noexcept { return std::tie(family, arch, shape); }
};

struct Entry {
  int batch = 0;
  const Config* config = nullptr;
  double median_us = 0.0;
  std::int64_t run_id = 0;
  std::string_view measured_arch;
  std::string_view device_name;
  bool default_kept = false;
  const Cubin* cubin = nullptr;
};

// One (family, arch, shape): its entries are data.entries[first, first + count), by batch.
struct Group {
  ShapeKey key;
  std::size_t first = 0;
  std::size_t count = 0;
};

struct FamilyDefault {
  std::string_view family;
  const Config* config = nullptr;
};

struct FamilyArchCubin {
  std::string_view family;
  std::string_view arch;
  const Cubin* cubin = nullptr;
};

}  // namespace detail

struct TuningDb::Data {
  std::set<std::string, std::less<>> strings;  // interned: stable, NUL-terminated
  std::deque<Config> configs;                  // a deque never moves its elements
  std::deque<Cubin> cubins;
  std::vector<detail::Entry> entries;
  std::vector<detail::Group> groups;                                         // sorted by key
  std::vector<std::string_view> arches;                                      // sorted
  std::vector<std::pair<std::string_view, std::string_view>> family_arches;  // sorted
  std::vector<detail::FamilyDefault> defaults;                               // sorted by family
  std::vector<detail::FamilyArchCubin> default_cubins;  // sorted by (family, arch)
  DbInfo info;

  std::string_view intern(std::string_view text) {
    auto found = strings.find(text);
    if (found == strings.end()) found = strings.emplace(text).first;
    return *found;
  }

  const detail::Group* find_group(const detail::ShapeKey& key) const noexcept;
  const detail::Entry& pick_entry(const detail::Group& group, int batch, How& how) const noexcept;
  Miss why_missing(std::string_view family, std::string_view arch) const noexcept;
  const Config* default_for(std::string_view family) const noexcept;
  const Cubin* default_cubin(std::string_view family, std::string_view arch) const noexcept;
};

namespace detail {

// Reads the winners (of options.device_name only, when given), the defaults and, with `cubins`
// (a frozen file whose checksum and ELF arches were checked), the cubins of an open file.
// Throws DbError naming the damaged row, DbInputError for winners of several devices or a
// malformed default in `options`.
std::unique_ptr<TuningDb::Data> load_tuning_db(const tuner::db::Connection& connection,
                                               std::string path, bool frozen, bool cubins,
                                               const OpenOptions& options);

}  // namespace detail

}  // namespace tunedb
