#pragma once
// tunedb_cuda: launch the winners of a frozen DB on the current device, with no tuner and no
// compiler. Open once at start-up (loads every cubin for the device's arch, sets each kernel's
// max-dynamic-smem attribute: do it outside any graph capture); then launch() is a lookup, the
// family's geometry and the kernel launches: no allocation, no synchronization, no module load,
// legal inside CUDA graph capture. Depends on the CUDA Driver API (loaded at run time) and tunedb.
#include <cuda.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/deploy_family.hpp"
#include "db/tunedb/tunedb.hpp"

#define TUNEDB_CUDA_API __attribute__((visibility("default")))

namespace tunedb::cuda {

using tuner::ServeResult;
using tuner::ServeStatus;

// What a launch ran: the lookup rule (exact / bucket / default with its miss) and the config.
struct LaunchReport {
  How how = How::not_found;
  Miss miss = Miss::none;
  int tuned_batch = 0;
  const Config* config = nullptr;
  const char* how_text = "";   // "exact", "bucket", "default" (static strings)
  const char* miss_text = "";  // "none", "arch_not_in_db", "family_not_in_db", "shape_not_tuned"
};

class TUNEDB_CUDA_API Launcher {
 public:
  // Opens `path` (a frozen DB, checksum verified) for device `ordinal`, whose arch (sm_90) is the
  // one looked up. Throws DbInputError when the DB holds no cubin for that arch (naming it and the
  // arches it holds), is not frozen, or holds a cubin of that arch frozen under another launch
  // contract than this library's (launch_contract_check.hpp); DbError for a damaged file;
  // tuner::NoGpuError without a GPU; tuner::CudaError when a module or kernel fails to load.
  static Launcher open(const std::filesystem::path& path, int ordinal = 0,
                       const OpenOptions& options = {});
  Launcher(Launcher&&) noexcept;
  Launcher& operator=(Launcher&&) noexcept;
  ~Launcher();

  const std::string& arch() const noexcept;
  const TuningDb& db() const noexcept;

  // Start-up: the workspace that every launch of `family` on `shape` with batch 1..max_batch
  // needs (the largest). Throws DbInputError for an unknown family or a bad shape or batch.
  std::size_t workspace_bytes(std::string_view family, std::string_view shape, int max_batch) const;

  // Hot path. `args` points to the family's argument record (kernels/<family>/serve_args.h, or
  // built from its declared fields: args_fields) of `args_size` bytes; another size is refused
  // (bad_arguments). A miss launches the family default and says so in `report`. Returns ok, or
  // why nothing was enqueued (or cuLaunchKernel's result).
  ServeResult launch(std::string_view family, std::string_view shape, int batch, const void* args,
                     std::size_t args_size, CUstream stream,
                     LaunchReport* report = nullptr) const noexcept;
  // The same with the record itself, e.g. launch("<family>", shape, batch, record, stream).
  template <typename Args>
  ServeResult launch(std::string_view family, std::string_view shape, int batch, const Args& args,
                     CUstream stream, LaunchReport* report = nullptr) const noexcept {
    static_assert(std::is_trivially_copyable_v<Args> && !std::is_pointer_v<Args>,
                  "pass the family's argument record (a plain C struct), not a pointer");
    return launch(family, shape, batch, &args, sizeof args, stream, report);
  }

  struct Data;

 private:
  explicit Launcher(std::unique_ptr<Data> data) noexcept;
  std::unique_ptr<Data> data_;
};

// "ok", "bad_shape", ... for messages.
TUNEDB_CUDA_API const char* status_name(ServeStatus status) noexcept;

// The families this library launches, in registry order (deploy/families.cpp), and one by name
// (nullptr when none of that name has a serving launcher): each with its argument record
// (DeployFamily::args_size, DeployFamily::fields). Allocation-free; no GPU needed.
TUNEDB_CUDA_API std::span<const tuner::DeployFamily* const> deploy_families() noexcept;
TUNEDB_CUDA_API const tuner::DeployFamily* deploy_family_by_name(std::string_view name) noexcept;

}  // namespace tunedb::cuda
