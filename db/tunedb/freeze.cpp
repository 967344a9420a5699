#include "db/tunedb/freeze.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/format.hpp"
#include "db/tunedb/frozen.hpp"
#include "db/tunedb/launches.hpp"
#include "db/tunedb/params.hpp"

namespace tunedb {

using tuner::db::Connection;
using tuner::db::OpenMode;
using tuner::db::Statement;
using tuner::db::Transaction;

namespace {

// Winners matching the freeze filters (?1 budget arch, ?2 device; NULL = any).
constexpr const char* kWinnerFilter =
    "(?1 IS NULL OR budget_arch = ?1) AND (?2 IS NULL OR device_name = ?2)";

constexpr const char* kWinnerColumns =
    "family, budget_arch, measured_arch, device_name, shape, batch, params_json, median_us, "
    "default_params_json, default_median_us, speedup_vs_default, noise_rel, decision, reason, "
    "source_hash, run_id, bytes_moved";

// Removes the temporary output unless it was renamed into place.
class TempFile {
 public:
  explicit TempFile(std::filesystem::path path) : path_(std::move(path)) { remove(); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!released_) remove();
  }
  const std::filesystem::path& path() const { return path_; }
  void release() { released_ = true; }

 private:
  void remove() noexcept {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    std::filesystem::remove(path_.string() + "-journal", ignored);
  }
  std::filesystem::path path_;
  bool released_ = false;
};

Statement filtered(const Connection& source, const std::string& sql, const FreezeOptions& options) {
  Statement statement = source.prepare(sql);
  statement.bind(1, options.budget_arch);
  statement.bind(2, options.device_name);
  return statement;
}

std::vector<std::string> column_values(Statement statement) {
  std::vector<std::string> values;
  while (statement.step()) {
    if (!statement.is_null(0)) values.push_back(statement.column_text(0));
  }
  return values;
}

std::string join(const std::vector<std::string>& values) {
  std::string joined;
  for (const std::string& value : values) joined += (joined.empty() ? "" : ",") + value;
  return joined;
}

void check_output(const std::filesystem::path& store, const std::filesystem::path& out,
                  const FreezeOptions& options) {
  std::error_code error;
  if (std::filesystem::equivalent(store, out, error)) {
    throw DbInputError("freeze would overwrite its own input " + store.string() +
                       ": write the frozen DB to another path");
  }
  if (std::filesystem::exists(out, error) && !options.overwrite) {
    throw DbInputError("frozen DB " + out.string() +
                       " already exists: choose another output path or ask to overwrite it");
  }
  const std::filesystem::path parent = out.parent_path().empty() ? "." : out.parent_path();
  if (!std::filesystem::is_directory(parent, error)) {
    throw DbInputError("cannot write frozen DB " + out.string() + ": directory " + parent.string() +
                       " does not exist; create it first");
  }
}

void check_selection(const Connection& source, const std::string& store,
                     const FreezeOptions& options) {
  Statement count =
      filtered(source, std::string("SELECT COUNT(*) FROM winners WHERE ") + kWinnerFilter, options);
  count.step();
  if (count.column_int64(0) == 0) {
    const std::vector<std::string> present = column_values(source.prepare(
        "SELECT DISTINCT budget_arch || ' (' || device_name || ')' FROM winners ORDER BY 1"));
    throw DbInputError(
        "no winners in " + store + " for budget arch " + options.budget_arch.value_or("(any)") +
        " and device " + options.device_name.value_or("(any)") + "; it holds: " +
        (present.empty() ? std::string("no winners, run `tuner sweep` first") : join(present)));
  }
  Statement clash = filtered(
      source,
      std::string("SELECT family, budget_arch, batch, group_concat(device_name, ', ') FROM "
                  "winners WHERE ") +
          kWinnerFilter +
          " GROUP BY family, budget_arch, shape, batch "
          "HAVING COUNT(*) > 1 LIMIT 1",
      options);
  if (clash.step()) {
    throw DbInputError(store + " holds winners of several devices (" + clash.column_text(3) +
                       ") for " + clash.column_text(0) + " " + clash.column_text(1) + " batch " +
                       clash.column_text(2) + ": pick one device to freeze");
  }
}

class Freezer {
 public:
  Freezer(const Connection& source, const Connection& out, std::string store,
          const FreezeOptions& options, const CubinProvider& provider)
      : source_(source),
        out_(out),
        store_(std::move(store)),
        options_(options),
        provider_(provider) {}

  FreezeSummary write() {
    Transaction transaction(out_);
    out_.exec(detail::kFrozenSchemaSql);
    copy_winners();
    write_defaults();
    write_cubins();
    write_metadata();
    summary_.checksum = detail::frozen_checksum(out_);
    put_metadata("checksum", summary_.checksum);
    transaction.commit();
    return summary_;
  }

 private:
  void copy_winners() {
    Statement rows = filtered(source_,
                              std::string("SELECT ") + kWinnerColumns + " FROM winners WHERE " +
                                  kWinnerFilter + " ORDER BY family, budget_arch, shape, batch",
                              options_);
    Statement insert = out_.prepare(std::string("INSERT INTO winners (") + kWinnerColumns +
                                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                                    "?12, ?13, ?14, ?15, ?16, ?17)");
    while (rows.step()) {
      for (int column = 0; column < rows.column_count(); ++column) {
        const int rc =
            sqlite3_bind_value(insert.get(), column + 1, sqlite3_column_value(rows.get(), column));
        if (rc != SQLITE_OK) {
          throw tuner::db::DbError("sqlite3_bind_value", rc, sqlite3_errstr(rc), insert.sql(),
                                   out_.path());
        }
      }
      insert.run();
      insert.reset();
      record_winner(rows);
      ++summary_.winners;
    }
  }

  // Remembers what the cubins, defaults and metadata need from one copied row.
  void record_winner(const Statement& row) {
    const std::string family = row.column_text(0);
    const std::string arch = row.column_text(1);
    const std::int64_t run_id = row.column_int64(15);
    images_.insert({family, arch, row.column_text(6), row.column_text(14)});
    auto& latest = latest_by_family_arch_[{family, arch}];
    if (latest.run_id <= run_id) latest = {run_id, row.column_text(14)};
    auto& family_default = default_by_family_[family];
    if (family_default.run_id <= run_id) family_default = {run_id, row.column_text(8)};
  }

  void write_defaults() {
    std::map<std::string, std::string> defaults;
    for (const auto& [family, latest] : default_by_family_) defaults[family] = latest.text;
    for (const DefaultConfig& given : options_.defaults) {
      std::optional<std::string> canonical = canonical_params_json(given.params_json);
      if (!canonical) {
        throw DbInputError("default config for family '" + given.family + "' is '" +
                           given.params_json +
                           "': pass a flat JSON object of integers, e.g. {\"name_a\":16}");
      }
      defaults[given.family] = *canonical;
    }
    Statement insert = out_.prepare("INSERT INTO defaults (family, params_json) VALUES (?1, ?2)");
    for (const auto& [family, params_json] : defaults) {
      insert.bind(1, family).bind(2, params_json).run();
      insert.reset();
    }
    // Serving falls back to the default config for untuned shapes: freeze its image too.
    for (const auto& [family_arch, latest] : latest_by_family_arch_) {
      images_.insert(
          {family_arch.first, family_arch.second, defaults[family_arch.first], latest.text});
    }
  }

  void write_cubins() {
    if (!provider_) return;
    Statement insert = out_.prepare(
        "INSERT INTO cubins (family, arch, params_json, source_hash, kernel_names, "
        "launch_contract, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    for (const auto& [family, arch, params_json, source_hash] : images_) {
      const CubinImage image = provider_(CubinRequest{family, arch, params_json, source_hash});
      std::string what = family;
      what += " ";
      what += params_json;
      what += " for ";
      what += arch;
      if (image.bytes.empty()) {
        throw tuner::db::DbError("the cubin provider returned no bytes for " + what, store_);
      }
      const std::string problem = cubin_arch_problem(image.bytes.data(), image.bytes.size(), arch);
      if (!problem.empty()) {
        std::string message = "the cubin provider's image for " + what;
        message += " " + problem;
        message += ": compile it for " + arch;
        message += " (nothing was written)";
        throw tuner::db::DbError(message, store_);
      }
      std::string names;
      for (const std::string& name : image.kernel_names) {
        if (name.empty() || name.find('\n') != std::string::npos) {
          throw tuner::db::DbError("the cubin provider returned a bad kernel name for " + what,
                                   store_);
        }
        names += (names.empty() ? "" : "\n") + name;
      }
      insert.bind(1, family).bind(2, arch).bind(3, params_json).bind(4, source_hash);
      if (!image.launches.empty() && image.launch_contract.empty()) {
        throw tuner::db::DbError(
            "the cubin provider gave launch records but no launch contract for " + what +
                ": a launcher could not tell which parameter layout " +
                "its kernels read (nothing was written)",
            store_);
      }
      insert.bind(5, names).bind(6, image.launch_contract);
      insert.bind(7, tuner::db::Blob{image.bytes.data(), image.bytes.size()});
      insert.run();
      insert.reset();
      detail::insert_launches(out_, {family, arch, params_json, source_hash}, image, store_);
      ++summary_.cubins;
    }
  }

  std::vector<std::string> distinct(const std::string& column) {
    return column_values(filtered(
        source_,
        "SELECT DISTINCT " + column + " FROM winners WHERE " + kWinnerFilter + " ORDER BY 1",
        options_));
  }

  std::vector<std::string> distinct_run_field(const std::string& column) {
    return column_values(filtered(source_,
                                  "SELECT DISTINCT " + column +
                                      " FROM runs WHERE id IN (SELECT run_id FROM winners WHERE " +
                                      kWinnerFilter + ") ORDER BY 1",
                                  options_));
  }

  void write_metadata() {
    summary_.budget_arches = distinct("budget_arch");
    summary_.device_names = distinct("device_name");
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(store_, error);
    put_metadata("format", "tunedb-frozen");
    put_metadata("frozen", "1");
    put_metadata("schema_version", std::to_string(kFrozenSchemaVersion));
    Statement now = out_.prepare("SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')");
    now.step();
    put_metadata("created_at", now.column_text(0));
    put_metadata("source_store", error ? store_ : absolute.string());
    put_metadata("budget_arches", join(summary_.budget_arches));
    put_metadata("measured_arches", join(distinct("measured_arch")));
    put_metadata("device_names", join(summary_.device_names));
    put_metadata("source_hashes", join(distinct("source_hash")));
    put_metadata("run_ids", join(distinct("run_id")));
    put_metadata("driver_versions", join(distinct_run_field("driver_version")));
    put_metadata("cuda_versions", join(distinct_run_field("cuda_version")));
    put_metadata("nvrtc_versions", join(distinct_run_field("nvrtc_version")));
    put_metadata("tuner_versions", join(distinct_run_field("tuner_version")));
    put_metadata("winners", std::to_string(summary_.winners));
    put_metadata("cubins", std::to_string(summary_.cubins));
    put_metadata("checksum_algorithm", "fnv1a64 over canonical rows (db/README.md)");
  }

  void put_metadata(const std::string& key, const std::string& value) {
    Statement insert = out_.prepare("INSERT INTO metadata (key, value) VALUES (?1, ?2)");
    insert.bind(1, key).bind(2, value).run();
  }

  struct Latest {
    std::int64_t run_id = -1;
    std::string text;
  };
  using Image = std::tuple<std::string, std::string, std::string, std::string>;

  const Connection& source_;
  const Connection& out_;
  std::string store_;
  const FreezeOptions& options_;
  const CubinProvider& provider_;
  FreezeSummary summary_;
  std::set<Image> images_;  // (family, arch, params_json, source_hash)
  std::map<std::pair<std::string, std::string>, Latest> latest_by_family_arch_;  // source hash
  std::map<std::string, Latest> default_by_family_;  // default_params_json
};

std::filesystem::path temp_path_for(const std::filesystem::path& out) {
  std::filesystem::path temp = out;
  temp.replace_filename("." + out.filename().string() + ".tmp." + std::to_string(::getpid()));
  return temp;
}

}  // namespace

FreezeSummary freeze(const std::filesystem::path& store_path, const std::filesystem::path& out,
                     const FreezeOptions& options, const CubinProvider& cubins) {
  detail::check_db_path(store_path, "tuning store");
  check_output(store_path, out, options);
  const std::string store = store_path.string();
  FreezeSummary summary;
  TempFile temp(temp_path_for(out));
  try {
    const Connection source = Connection::open(store_path, OpenMode::read_only);
    if (detail::inspect_file(source, store).frozen) {
      throw DbInputError(store +
                         " is already a frozen DB: freeze reads the tuning store that "
                         "`tuner sweep` writes");
    }
    check_selection(source, store, options);
    {
      const Connection written = Connection::open(temp.path(), OpenMode::read_write_create);
      written.exec("PRAGMA journal_mode = DELETE; PRAGMA application_id = " +
                   std::to_string(kFrozenApplicationId) +
                   "; PRAGMA user_version = " + std::to_string(kFrozenSchemaVersion));
      summary = Freezer(source, written, store, options, cubins).write();
      written.exec("VACUUM");
    }
  } catch (const DbError& error) {
    if (error.code() == 0) throw;
    if (detail::is_damage(error)) throw detail::reading_error(error, store);
    throw error.with_context("freezing " + store + " into " + out.string());
  }
  std::error_code error;
  std::filesystem::rename(temp.path(), out, error);
  if (error) {
    throw DbInputError("cannot move the frozen DB into place at " + out.string() + ": " +
                       error.message());
  }
  temp.release();
  summary.path = out;
  return summary;
}

VerifyReport verify(const std::filesystem::path& path) {
  detail::check_db_path(path, "frozen DB");
  const std::string name = path.string();
  try {
    // The same checks as TuningDb::open, then: a store is not what verify is for.
    const detail::CheckedFile file = detail::open_checked(path, true);
    if (!file.kind.frozen) {
      throw DbInputError(name + " is a tuning store, not a frozen DB: `tuner freeze` makes one");
    }
    VerifyReport report;
    report.schema_version = file.kind.schema_version;
    report.checksum = file.checksum;
    report.winners =
        static_cast<std::size_t>(file.connection.query_int64("SELECT COUNT(*) FROM winners"));
    report.cubins =
        static_cast<std::size_t>(file.connection.query_int64("SELECT COUNT(*) FROM cubins"));
    Statement arches =
        file.connection.prepare("SELECT DISTINCT budget_arch FROM winners ORDER BY 1");
    while (arches.step()) report.budget_arches.push_back(arches.column_text(0));
    Statement contracts = file.connection.prepare(
        "SELECT DISTINCT family, launch_contract FROM cubins JOIN launches USING (family, arch, "
        "params_json, source_hash)");
    while (contracts.step()) {
      report.launch_contracts[contracts.column_text(0)].insert(contracts.column_text(1));
    }
    return report;
  } catch (const DbError& error) {
    if (error.code() == 0) throw;
    throw detail::reading_error(error, name);
  }
}

}  // namespace tunedb
