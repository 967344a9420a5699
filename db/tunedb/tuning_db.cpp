#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/frozen.hpp"
#include "db/tunedb/launches.hpp"
#include "db/tunedb/params.hpp"
#include "db/tunedb/shape.hpp"
#include "db/tunedb/tunedb.hpp"

namespace tunedb {

using tuner::db::Connection;
using tuner::db::Statement;

namespace {

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

// A winner row as read, before indexing.
struct WinnerRow {
  std::string_view family, arch, measured_arch, device_name, shape, params_json, source_hash;
  std::string_view default_params_json;
  int batch = 0;
  double median_us = 0.0;
  std::int64_t run_id = 0;
  bool default_kept = false;

  ShapeKey key() const { return {family, arch, shape}; }
};

std::string describe(const WinnerRow& row) {
  return std::string(row.family) + " " + std::string(row.arch) + " " + std::string(row.shape) +
         " batch=" + std::to_string(row.batch);
}

std::vector<std::string> sorted_unique(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

struct TuningDb::Data {
  std::set<std::string, std::less<>> strings;  // interned: stable, NUL-terminated
  std::deque<Config> configs;                  // a deque never moves its elements
  std::deque<Cubin> cubins;
  std::vector<Entry> entries;
  std::vector<Group> groups;                                                 // sorted by key
  std::vector<std::string_view> arches;                                      // sorted
  std::vector<std::pair<std::string_view, std::string_view>> family_arches;  // sorted
  std::vector<FamilyDefault> defaults;                                       // sorted by family
  std::vector<FamilyArchCubin> default_cubins;  // sorted by (family, arch)
  DbInfo info;

  std::string_view intern(std::string_view text) {
    auto found = strings.find(text);
    if (found == strings.end()) found = strings.emplace(text).first;
    return *found;
  }

  const Group* find_group(const ShapeKey& key) const noexcept;
  const Entry& pick_entry(const Group& group, int batch, How& how) const noexcept;
  Miss why_missing(std::string_view family, std::string_view arch) const noexcept;
  const Config* default_for(std::string_view family) const noexcept;
  const Cubin* default_cubin(std::string_view family, std::string_view arch) const noexcept;
};

namespace {

// Reads a file into TuningDb::Data. One instance per open.
class Loader {
 public:
  Loader(const Connection& connection, std::string path, bool frozen, bool cubins,
         const OpenOptions& options)
      : connection_(connection),
        path_(std::move(path)),
        frozen_(frozen),
        cubins_checked_(cubins),
        options_(options) {
    data_ = std::make_unique<TuningDb::Data>();
  }

  std::unique_ptr<TuningDb::Data> load() {
    read_cubins();
    std::vector<WinnerRow> rows = read_winners();
    read_defaults(rows);
    index_winners(std::move(rows));
    index_default_cubins();
    fill_info();
    return std::move(data_);
  }

 private:
  const Config* config_for(std::string_view params_json, const std::string& where) {
    const auto found = configs_by_json_.find(params_json);
    if (found != configs_by_json_.end()) return found->second;
    std::optional<std::vector<NamedValue>> parsed = parse_params_json(params_json);
    if (!parsed) {
      throw DbError(where + " has malformed params_json '" + std::string(params_json) +
                        "' (wanted a flat JSON object of integers): the file is damaged; " +
                        "freeze it again from the store",
                    path_);
    }
    Config& config = data_->configs.emplace_back();
    config.index = data_->configs.size() - 1;
    for (const NamedValue& param : *parsed) {
      config.params.push_back({data_->intern(param.name), param.value});
    }
    config.params_json = data_->intern(params_to_json(*parsed));
    configs_by_json_.emplace(data_->intern(params_json), &config);
    configs_by_json_.emplace(config.params_json, &config);
    return &config;
  }

  void read_cubins() {
    if (!cubins_checked_) return;
    Statement rows = connection_.prepare(
        "SELECT family, arch, params_json, source_hash, kernel_names, bytes FROM cubins");
    while (rows.step()) {
      Cubin& cubin = data_->cubins.emplace_back();
      cubin.bytes = rows.column_blob(5);
      cubin.kernel_names_text = data_->intern(rows.column_text(4));
      std::string_view names = cubin.kernel_names_text;
      while (!names.empty()) {
        const std::size_t end = std::min(names.find('\n'), names.size());
        if (end > 0) cubin.kernel_names.push_back(names.substr(0, end));
        names.remove_prefix(std::min(end + 1, names.size()));
      }
      const auto key =
          std::make_tuple(data_->intern(rows.column_text(0)), data_->intern(rows.column_text(1)),
                          data_->intern(rows.column_text(2)), data_->intern(rows.column_text(3)));
      cubin.family = std::get<0>(key);
      cubin.arch = std::get<1>(key);
      cubin.params_json = std::get<2>(key);
      cubin.index = data_->cubins.size() - 1;
      detail::read_launches(
          connection_, std::get<3>(key), cubin,
          [this](std::string_view text) { return data_->intern(text); }, path_);
      cubins_[key] = &cubin;
      cubins_by_config_.emplace(
          std::make_tuple(std::get<0>(key), std::get<1>(key), std::get<2>(key)), &cubin);
    }
  }

  std::vector<WinnerRow> read_winners() {
    Statement rows = connection_.prepare(
        "SELECT family, budget_arch, measured_arch, device_name, shape, batch, params_json, "
        "median_us, run_id, decision, source_hash, default_params_json FROM winners "
        "WHERE ?1 IS NULL OR device_name = ?1");
    rows.bind(1, options_.device_name);
    std::vector<WinnerRow> winners;
    while (rows.step()) {
      WinnerRow row;
      row.family = data_->intern(rows.column_text(0));
      row.arch = data_->intern(rows.column_text(1));
      row.measured_arch = data_->intern(rows.column_text(2));
      row.device_name = data_->intern(rows.column_text(3));
      row.shape = data_->intern(rows.column_text(4));
      row.batch = static_cast<int>(rows.column_int64(5));
      row.params_json = data_->intern(rows.column_text(6));
      row.median_us = rows.column_double(7);
      row.run_id = rows.column_int64(8);
      row.default_kept = rows.column_text(9) == "default_kept";
      row.source_hash = data_->intern(rows.column_text(10));
      row.default_params_json = data_->intern(rows.column_text(11));
      winners.push_back(row);
    }
    return winners;
  }

  // Frozen: the defaults table. Store: each family's default config as its latest sweep recorded
  // it. Then the caller's defaults on top.
  void read_defaults(const std::vector<WinnerRow>& rows) {
    std::map<std::string_view, const Config*> by_family;
    if (frozen_) {
      Statement statement = connection_.prepare("SELECT family, params_json FROM defaults");
      while (statement.step()) {
        const std::string_view family = data_->intern(statement.column_text(0));
        by_family[family] = config_for(data_->intern(statement.column_text(1)),
                                       "defaults row for family " + std::string(family));
      }
    } else {
      std::map<std::string_view, std::int64_t> latest_run;
      for (const WinnerRow& row : rows) {
        const auto found = latest_run.find(row.family);
        if (found != latest_run.end() && found->second > row.run_id) continue;
        latest_run[row.family] = row.run_id;
        by_family[row.family] =
            config_for(row.default_params_json, "default_params_json of winner " + describe(row));
      }
    }
    for (const DefaultConfig& given : options_.defaults) {
      if (!parse_params_json(given.params_json)) {
        throw DbInputError("default config for family '" + given.family + "' is '" +
                           given.params_json +
                           "': pass a flat JSON object of integers, e.g. {\"block_t\":16}");
      }
      by_family[data_->intern(given.family)] =
          config_for(data_->intern(given.params_json), "default for " + given.family);
    }
    for (const auto& [family, config] : by_family) data_->defaults.push_back({family, config});
  }

  void index_winners(std::vector<WinnerRow> rows) {
    std::sort(rows.begin(), rows.end(), [](const WinnerRow& a, const WinnerRow& b) {
      return std::tie(a.family, a.arch, a.shape, a.batch, a.device_name) <
             std::tie(b.family, b.arch, b.shape, b.batch, b.device_name);
    });
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const WinnerRow& row = rows[i];
      if (i > 0 && rows[i - 1].key().tie() == row.key().tie() && rows[i - 1].batch == row.batch) {
        throw DbInputError(path_ + " holds winners of several devices for " + describe(row) + " (" +
                           std::string(rows[i - 1].device_name) + ", " +
                           std::string(row.device_name) +
                           "): choose one with OpenOptions::device_name");
      }
      if (data_->groups.empty() || data_->groups.back().key.tie() != row.key().tie()) {
        data_->groups.push_back({row.key(), data_->entries.size(), 0});
      }
      ++data_->groups.back().count;
      data_->entries.push_back(make_entry(row));
      data_->arches.push_back(row.arch);
      data_->family_arches.emplace_back(row.family, row.arch);
    }
    auto& arches = data_->arches;
    std::sort(arches.begin(), arches.end());
    arches.erase(std::unique(arches.begin(), arches.end()), arches.end());
    auto& pairs = data_->family_arches;
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  }

  Entry make_entry(const WinnerRow& row) {
    Entry entry;
    entry.batch = row.batch;
    entry.config = config_for(row.params_json, "winner " + describe(row));
    entry.median_us = row.median_us;
    entry.run_id = row.run_id;
    entry.measured_arch = row.measured_arch;
    entry.device_name = row.device_name;
    entry.default_kept = row.default_kept;
    const auto cubin =
        cubins_.find(std::make_tuple(row.family, row.arch, row.params_json, row.source_hash));
    entry.cubin = cubin == cubins_.end() ? nullptr : cubin->second;
    return entry;
  }

  void index_default_cubins() {
    for (const auto& [family, arch] : data_->family_arches) {
      const Config* config = data_->default_for(family);
      if (config == nullptr) continue;
      const auto cubin = cubins_by_config_.find(std::make_tuple(family, arch, config->params_json));
      if (cubin != cubins_by_config_.end()) {
        data_->default_cubins.push_back({family, arch, cubin->second});
      }
    }
  }

  void fill_info() {
    DbInfo& info = data_->info;
    info.path = path_;
    info.frozen = frozen_;
    info.winners = data_->entries.size();
    info.cubins = data_->cubins.size();
    for (std::string_view arch : data_->arches) info.budget_arches.emplace_back(arch);
    std::vector<std::string> devices;
    for (const Entry& entry : data_->entries) devices.emplace_back(entry.device_name);
    info.device_names = sorted_unique(std::move(devices));
  }

  using CubinKey =
      std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>;
  using ConfigCubinKey = std::tuple<std::string_view, std::string_view, std::string_view>;

  const Connection& connection_;
  std::string path_;
  bool frozen_;
  bool cubins_checked_;
  const OpenOptions& options_;
  std::unique_ptr<TuningDb::Data> data_;
  std::map<std::string_view, const Config*> configs_by_json_;
  std::map<CubinKey, const Cubin*> cubins_;
  std::map<ConfigCubinKey, const Cubin*> cubins_by_config_;  // first image per config wins
};

}  // namespace

// ---- lookup ----

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

// ---- open ----

TuningDb TuningDb::open(const std::filesystem::path& path, const OpenOptions& options) {
  detail::check_db_path(path, "tuning DB");
  const std::string name = path.string();
  try {
    const detail::CheckedFile file = detail::open_checked(path, options.verify_checksum);
    // Cubins are code: they are handed out only from a frozen file whose checksum and ELF arches
    // were checked.
    const bool cubins = file.kind.frozen && options.verify_checksum;
    std::unique_ptr<Data> data =
        Loader(file.connection, name, file.kind.frozen, cubins, options).load();
    data->info.schema_version = file.kind.schema_version;
    data->info.checksum = file.checksum;
    return TuningDb(std::move(data));
  } catch (const DbError& error) {
    if (error.code() == 0) throw;  // already says what is wrong with the file
    throw detail::reading_error(error, name);
  }
}

TuningDb::TuningDb(std::unique_ptr<const Data> data) noexcept : data_(std::move(data)) {}
TuningDb::TuningDb(TuningDb&&) noexcept = default;
TuningDb& TuningDb::operator=(TuningDb&&) noexcept = default;
TuningDb::~TuningDb() = default;

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

const DbInfo& TuningDb::info() const noexcept {
  static const DbInfo kEmpty;
  return data_ ? data_->info : kEmpty;
}

std::size_t TuningDb::config_count() const noexcept { return data_ ? data_->configs.size() : 0; }

const Config& TuningDb::config(std::size_t index) const noexcept { return data_->configs[index]; }

std::size_t TuningDb::cubin_count() const noexcept { return data_ ? data_->cubins.size() : 0; }

const Cubin& TuningDb::cubin(std::size_t index) const noexcept { return data_->cubins[index]; }

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
