#pragma once
// tunedb: the serving-side lookup of tuned kernel configurations. Depends on SQLite only (no CUDA,
// no tuner/). Open once at startup; lookups are then noexcept, allocation-free, O(log n) and
// safe from any number of threads (the object is immutable after open).
//
// Shapes are canonical text, "name=value" pairs sorted by name and joined by ',', as the family
// builds it (e.g. "block=128,k=7168,n=4096"; a family may fold model-level values, such as heads
// over tensor-parallel ranks, into one dimension; `tuner query` prints the text for any
// model-level shape). Family names and dimensions are data here. db/tunedb/shape.hpp checks and
// assembles the text.
//
// Lookup rules for (family, arch, shape, batch):
//   exact    the shape has a winner tuned at this batch.
//   bucket   the shape has winners, none at this batch: the smallest tuned batch >= the asked one,
//            or the largest tuned batch when the asked one is above all (tuned_batch < batch
//            then says so). Batches below 1 are looked up as 1.
//   default  nothing tuned for the shape on this arch: the family's default config; `miss` says
//            why (arch_not_in_db: the file was frozen for other archs, e.g. an sm_90 file asked
//            for sm_120 -- a deployment mismatch worth logging; family_not_in_db; shape_not_tuned).
//   not_found  as default, but no default config is known for the family (config == nullptr).
// "arch" is the budget (deployment) arch the winners were tuned for, e.g. sm_120. A winner tuned
// for sm_120 may have been timed on another GPU: measured_arch and device_name say where, so an
// H200 timing is never mistaken for an sm_120 one.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite/error.hpp"

namespace tunedb {

using tuner::db::DbError;       // a damaged file, a failed SQLite call
using tuner::db::DbInputError;  // a missing, foreign or newer file; a bad option

struct Param {
  std::string_view name;
  std::int64_t value = 0;
};

// One kernel configuration. Lives as long as the TuningDb that returned it.
struct Config {
  std::vector<Param> params;     // sorted by name
  std::string_view params_json;  // canonical: {"name_a":16,"name_b":4,...}
  std::size_t index = 0;         // position among the TuningDb's configs

  std::optional<std::int64_t> value(std::string_view name) const noexcept;
};

// How to launch one kernel of a frozen cubin (frozen schema 3, table `launches`): what the serving
// launcher (libtunedb_cuda) binds at start-up.
struct KernelLaunch {
  std::string_view role;         // the family's name for it: e.g. "split", "combine"
  std::string_view kernel_name;  // lowered (mangled) name in the cubin
  int block_threads = 0;
  int dynamic_smem = 0;      // bytes per launch
  int max_dynamic_smem = 0;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to set at load
  std::vector<Param> launch_params;  // the values the family's geometry reads, sorted by name
};

// A compiled kernel image frozen next to the winners (a frozen file only).
struct Cubin {
  std::vector<char> bytes;
  std::vector<std::string_view> kernel_names;  // mangled names, as cuModuleGetFunction wants
  std::string_view kernel_names_text;          // the same, one per line
  std::string_view family;
  std::string_view arch;               // the arch the image was compiled for ("sm_90")
  std::string_view params_json;        // the config it runs
  std::string_view launch_contract;    // the parameter layout its kernels read (freeze.hpp)
  std::size_t index = 0;               // position among the TuningDb's cubins
  std::vector<KernelLaunch> launches;  // by role; empty for a family the launcher cannot launch
};

enum class How { exact, bucket, default_config, not_found };
enum class Miss { none, arch_not_in_db, family_not_in_db, shape_not_tuned };
const char* how_name(How how) noexcept;     // "exact", "bucket", "default", "not_found"
const char* miss_name(Miss miss) noexcept;  // "none", "arch_not_in_db", ...

struct Lookup {
  const Config* config = nullptr;  // nullptr only for How::not_found
  How how = How::not_found;
  Miss miss = Miss::none;  // none for exact and bucket
  int tuned_batch = 0;     // the winner's batch; 0 for default / not_found
  double median_us = std::numeric_limits<double>::quiet_NaN();  // winner's time; NaN otherwise
  std::int64_t run_id = 0;         // the sweep that found the winner; 0 otherwise
  std::string_view measured_arch;  // where the winner was timed ("sm_90"); "" otherwise
  std::string_view device_name;    // "NVIDIA H200"; "" otherwise
  bool default_kept = false;       // the sweep found nothing faster than the default beyond noise
  const Cubin* cubin = nullptr;    // the frozen image for config and arch, when there is one
};

struct DefaultConfig {
  std::string family;
  std::string params_json;  // a flat JSON object of integers
};

struct OpenOptions {
  // Added to (and overriding) the defaults table of a frozen file, or the default configs the
  // sweeps recorded in a store.
  std::vector<DefaultConfig> defaults;
  // Keep only winners timed on this device; needed when a store holds winners of several devices
  // for the same arch and shape (open refuses to guess).
  std::optional<std::string> device_name;
  // Recompute a frozen file's checksum and check every cubin's ELF arch at open (a few ms per MB
  // of cubins). Without it, lookups answer no cubin: code is handed out only from checked files.
  bool verify_checksum = true;
};

struct DbInfo {
  std::string path;
  bool frozen = false;
  int schema_version = 0;
  std::string checksum;                    // frozen files only
  std::vector<std::string> budget_arches;  // sorted
  std::vector<std::string> device_names;   // sorted
  std::size_t winners = 0;
  std::size_t cubins = 0;
};

class TuningDb {
 public:
  // Opens a frozen file (read-only, immutable, checksum verified) or a tuning store (read-only)
  // and loads every winner. Throws DbInputError for a missing, foreign or newer file and for
  // malformed options, DbError for a damaged one.
  static TuningDb open(const std::filesystem::path& path, const OpenOptions& options = {});

  TuningDb(TuningDb&& other) noexcept;
  TuningDb& operator=(TuningDb&& other) noexcept;
  ~TuningDb();

  // The hot path: `shape` is canonical text (a text that is not canonical matches nothing).
  Lookup lookup(std::string_view family, std::string_view arch, std::string_view shape,
                int batch) const noexcept;
  // The same from name -> value pairs (allocates; call once at start-up and keep the answer).
  // Throws DbInputError naming the pair that is not allowed.
  Lookup lookup(std::string_view family, std::string_view arch,
                const std::map<std::string, std::string, std::less<>>& shape, int batch) const;

  const DbInfo& info() const noexcept;
  // Every distinct config (winners and defaults), indexed by Config::index.
  std::size_t config_count() const noexcept;
  const Config& config(std::size_t index) const noexcept;
  // Every cubin (frozen files opened with verify_checksum only), indexed by Cubin::index: what a
  // serving launcher loads at start-up.
  std::size_t cubin_count() const noexcept;
  const Cubin& cubin(std::size_t index) const noexcept;

  struct Data;  // defined in tuning_db_data.hpp (internal)

 private:
  explicit TuningDb(std::unique_ptr<const Data> data) noexcept;
  std::unique_ptr<const Data> data_;
};

}  // namespace tunedb
