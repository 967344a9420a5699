#pragma once
// freeze: copy a tuning store's winners into a new, self-contained, read-only file for serving
// (winners, default configs, cubins, provenance metadata, checksum; no trials). verify: recompute
// a frozen file's checksum and check its schema.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/tunedb/tunedb.hpp"

namespace tunedb {

// One compiled image to freeze: the winning config of a family for the deployment arch.
struct CubinRequest {
  std::string family;
  std::string arch;         // the budget (deployment) arch, e.g. "sm_120"
  std::string params_json;  // canonical
  std::string source_hash;  // the kernel source the winner was timed with
};

// How the serving launcher launches one kernel of the image (table `launches`, db/README.md).
struct LaunchRecord {
  std::string role;         // the family's role name (e.g. "split", "combine")
  std::string kernel_name;  // one of the image's kernel_names
  int block_threads = 0;
  int dynamic_smem = 0;
  int max_dynamic_smem = 0;        // >= dynamic_smem
  std::string launch_params_json;  // the values the family's deploy geometry reads
};

struct CubinImage {
  std::vector<char> bytes;                  // never empty
  std::vector<std::string> kernel_names;    // mangled names in the image
  std::vector<LaunchRecord> launches = {};  // empty: a family the launcher cannot launch
  // The family's launch contract its kernels were compiled under (core/launch_contract.hpp);
  // required with launches: the launcher refuses a cubin whose contract is not its own.
  std::string launch_contract = {};
};

// The caller (the tuner CLI) compiles or fetches the image; tunedb never runs a compiler.
using CubinProvider = std::function<CubinImage(const CubinRequest&)>;

struct FreezeOptions {
  std::optional<std::string> budget_arch;  // keep only winners for this arch
  std::optional<std::string> device_name;  // keep only winners timed on this device
  std::vector<DefaultConfig> defaults;     // override the defaults the sweeps recorded
  bool overwrite = false;                  // replace an existing output file
};

struct FreezeSummary {
  std::filesystem::path path;
  std::size_t winners = 0;
  std::size_t cubins = 0;
  std::string checksum;
  std::vector<std::string> budget_arches;
  std::vector<std::string> device_names;
};

// Writes `out` from the store at `store_path`: a temporary file next to `out`, renamed into
// place when complete, so a reader never sees half a file. `cubins` may be empty (no images).
// Throws DbInputError for a missing store, an existing `out` without overwrite, no winners
// matching the filters, or winners of several devices for one key; DbError for SQLite failures.
FreezeSummary freeze(const std::filesystem::path& store_path, const std::filesystem::path& out,
                     const FreezeOptions& options, const CubinProvider& cubins);

struct VerifyReport {
  std::string checksum;
  int schema_version = 0;
  std::size_t winners = 0;
  std::size_t cubins = 0;
  std::vector<std::string> budget_arches;
  // family -> the launch contracts (core/launch_contract.hpp) of its cubins that carry launch
  // records: read from the file that was checked, so `tuner verify` lists what it verified.
  std::map<std::string, std::set<std::string>> launch_contracts;
};

// Checks that `path` is a frozen file of a schema this build reads and that its content still
// hashes to the stored checksum. Throws DbInputError (missing, foreign, not frozen, newer) or
// DbError (damaged, checksum mismatch).
VerifyReport verify(const std::filesystem::path& path);

}  // namespace tunedb
