// Reading a frozen file or a store into TuningDb::Data: interned strings, one Config per distinct
// params text, winners grouped by (family, arch, shape) and sorted by batch, the defaults, and
// the cubins of a checked frozen file.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/launches.hpp"
#include "db/tunedb/params.hpp"
#include "db/tunedb/tunedb.hpp"
#include "db/tunedb/tuning_db_data.hpp"

namespace tunedb {

using detail::Entry;
using detail::ShapeKey;
using tuner::db::Connection;
using tuner::db::Statement;

namespace {

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
        "SELECT family, arch, params_json, source_hash, kernel_names, launch_contract, bytes "
        "FROM cubins");
    while (rows.step()) {
      Cubin& cubin = data_->cubins.emplace_back();
      cubin.bytes = rows.column_blob(6);
      cubin.launch_contract = data_->intern(rows.column_text(5));
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
                           "': pass a flat JSON object of integers, e.g. {\"name_a\":16}");
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

namespace detail {

std::unique_ptr<TuningDb::Data> load_tuning_db(const Connection& connection, std::string path,
                                               bool frozen, bool cubins,
                                               const OpenOptions& options) {
  return Loader(connection, std::move(path), frozen, cubins, options).load();
}

}  // namespace detail

}  // namespace tunedb
