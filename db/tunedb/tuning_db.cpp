// TuningDb::open (the checks every reader runs, then the loader) and the accessors of what it
// loaded.
#include <memory>
#include <string>
#include <utility>

#include "db/tunedb/frozen.hpp"
#include "db/tunedb/tunedb.hpp"
#include "db/tunedb/tuning_db_data.hpp"

namespace tunedb {

TuningDb TuningDb::open(const std::filesystem::path& path, const OpenOptions& options) {
  detail::check_db_path(path, "tuning DB");
  const std::string name = path.string();
  try {
    const detail::CheckedFile file = detail::open_checked(path, options.verify_checksum);
    // Cubins are code: they are handed out only from a frozen file whose checksum and ELF arches
    // were checked.
    const bool cubins = file.kind.frozen && options.verify_checksum;
    std::unique_ptr<Data> data =
        detail::load_tuning_db(file.connection, name, file.kind.frozen, cubins, options);
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

const DbInfo& TuningDb::info() const noexcept {
  static const DbInfo kEmpty;
  return data_ ? data_->info : kEmpty;
}

std::size_t TuningDb::config_count() const noexcept { return data_ ? data_->configs.size() : 0; }

const Config& TuningDb::config(std::size_t index) const noexcept { return data_->configs[index]; }

std::size_t TuningDb::cubin_count() const noexcept { return data_ ? data_->cubins.size() : 0; }

const Cubin& TuningDb::cubin(std::size_t index) const noexcept { return data_->cubins[index]; }

}  // namespace tunedb
