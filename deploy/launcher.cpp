#include "deploy/launcher.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include "core/cuda_driver.hpp"
#include "core/launch_contract.hpp"
#include "deploy/launch_contract_check.hpp"

namespace tunedb::cuda {

namespace {

// One frozen cubin as loaded: its module and, when its family has a serving launcher, the bound
// config the hot path launches.
struct Slot {
  std::unique_ptr<tuner::cuda::Module> module;
  const tuner::DeployFamily* family = nullptr;
  tuner::BoundConfig config;
};

std::string join(const std::set<std::string_view>& values) {
  std::string joined;
  for (std::string_view value : values) {
    joined += (joined.empty() ? "" : ", ") + std::string(value);
  }
  return joined.empty() ? "none" : joined;
}

std::optional<std::int64_t> launch_param(const Cubin& cubin, std::string_view name) {
  if (cubin.launches.empty()) return std::nullopt;
  for (const Param& param : cubin.launches.front().launch_params) {
    if (param.name == name) return param.value;
  }
  return std::nullopt;
}

// Checks the cubin's launch contract, loads the module, resolves every kernel of the launch rows,
// raises each kernel's max-dynamic-smem attribute, and lets the family bind its roles and geometry
// values.
Slot load_slot(const Cubin& cubin, const std::string& path) {
  const std::string name = std::string(cubin.family) + " " + std::string(cubin.params_json) +
                           " for " + std::string(cubin.arch);
  const std::string what = "tunedb_cuda: " + name;
  const tuner::DeployFamily* family = deploy_family_by_name(cubin.family);
  if (family != nullptr && !cubin.launches.empty()) {
    if (const auto problem =
            launch_contract_problem(path + "'s cubin of " + name, cubin.launch_contract,
                                    tuner::launch_contract(cubin.family))) {
      throw DbInputError(*problem);
    }
  }
  Slot slot;
  slot.module = std::make_unique<tuner::cuda::Module>(cubin.bytes, what);
  std::vector<std::pair<std::string_view, tuner::BoundKernel>> kernels;
  for (const KernelLaunch& launch : cubin.launches) {
    const CUfunction function = slot.module->function(std::string(launch.kernel_name));
    if (launch.max_dynamic_smem > 0) {
      tuner::cuda::set_max_dynamic_smem(function, launch.max_dynamic_smem,
                                        what + " role " + std::string(launch.role));
    }
    const auto threads = static_cast<unsigned>(launch.block_threads);
    const auto smem = static_cast<unsigned>(launch.dynamic_smem);
    kernels.push_back(
        {launch.role,
         {function, threads, smem, tuner::cuda::cluster_capacity(function, threads, smem)}});
  }
  slot.family = family;
  if (slot.family == nullptr || kernels.empty()) {
    slot.family = nullptr;
    return slot;
  }
  try {
    slot.config = slot.family->bind(
        [&](std::string_view role) -> const tuner::BoundKernel* {
          for (const auto& [name, kernel] : kernels) {
            if (name == role) return &kernel;
          }
          return nullptr;
        },
        [&](std::string_view name) { return launch_param(cubin, name); });
  } catch (const std::runtime_error& error) {
    throw DbError(what + ": " + error.what(), "");
  }
  return slot;
}

}  // namespace

struct Launcher::Data {
  tuner::cuda::Context context;
  TuningDb db;
  std::string arch;
  std::vector<Slot> slots;  // by Cubin::index; no module for other arches
};

Launcher::Launcher(std::unique_ptr<Data> data) noexcept : data_(std::move(data)) {}
Launcher::Launcher(Launcher&&) noexcept = default;
Launcher& Launcher::operator=(Launcher&&) noexcept = default;
Launcher::~Launcher() = default;

Launcher Launcher::open(const std::filesystem::path& path, int ordinal,
                        const OpenOptions& options) {
  tuner::cuda::require_gpu();
  const tuner::cuda::DeviceInfo device = tuner::cuda::device_info(ordinal);
  if (!options.verify_checksum) {
    throw DbInputError("tunedb_cuda loads code only from a checked frozen DB: open " +
                       path.string() + " with verify_checksum");
  }
  auto data = std::unique_ptr<Data>(new Data{tuner::cuda::Context(ordinal),
                                             TuningDb::open(path, options),
                                             "sm_" + std::to_string(device.arch_sm()),
                                             {}});
  if (!data->db.info().frozen) {
    throw DbInputError(path.string() +
                       " is a tuning store: the launcher needs a frozen DB (`tuner freeze`)");
  }
  std::set<std::string_view> arches;
  data->slots.resize(data->db.cubin_count());
  for (std::size_t index = 0; index < data->db.cubin_count(); ++index) {
    const Cubin& cubin = data->db.cubin(index);
    arches.insert(cubin.arch);
    if (cubin.arch == data->arch) data->slots[index] = load_slot(cubin, path.string());
  }
  if (!arches.contains(data->arch)) {
    throw DbInputError(path.string() + " holds no cubin for this device's arch " + data->arch +
                       " (" + device.name + "); it holds cubins for " + join(arches) +
                       ": freeze a store swept for " + data->arch +
                       " (`tuner sweep --budget-arch " + data->arch +
                       "`, then `tuner freeze --arch " + data->arch + "`)");
  }
  return Launcher(std::move(data));
}

const std::string& Launcher::arch() const noexcept { return data_->arch; }

const TuningDb& Launcher::db() const noexcept { return data_->db; }

std::size_t Launcher::workspace_bytes(std::string_view family, std::string_view shape,
                                      int max_batch) const {
  if (max_batch < 1) throw DbInputError("tunedb_cuda workspace query: max_batch must be >= 1");
  std::size_t largest = 0;
  for (int batch = 1; batch <= max_batch; ++batch) {
    const Lookup found = data_->db.lookup(family, data_->arch, shape, batch);
    const Slot* slot = found.cubin == nullptr ? nullptr : &data_->slots[found.cubin->index];
    if (slot == nullptr || slot->family == nullptr) {
      throw DbInputError("tunedb_cuda: no launchable cubin of family '" + std::string(family) +
                         "' for " + data_->arch + " in " + data_->db.info().path +
                         ": check the family name and freeze a store that tuned it");
    }
    std::size_t bytes = 0;
    const ServeResult result = slot->family->workspace_bytes(slot->config, shape, batch, &bytes);
    if (result.status != ServeStatus::ok) {
      throw DbInputError("tunedb_cuda workspace query for " + std::string(family) + " shape '" +
                         std::string(shape) + "' batch " + std::to_string(batch) + ": " +
                         result.what);
    }
    largest = std::max(largest, bytes);
  }
  return largest;
}

ServeResult Launcher::launch(std::string_view family, std::string_view shape, int batch,
                             const void* args, std::size_t args_size, CUstream stream,
                             LaunchReport* report) const noexcept {
  const tuner::DeployFamily* deploy = deploy_family_by_name(family);
  if (deploy == nullptr) {
    return {ServeStatus::bad_arguments, "no serving launcher for this family"};
  }
  if (args == nullptr || args_size != deploy->args_size) {
    return {ServeStatus::bad_arguments,
            "args_size is not the size of this family's argument record: build the record from "
            "its declared fields (DeployFamily::fields, tunedb_cuda_args_field) or its "
            "kernels/<family>/serve_args.h"};
  }
  const Lookup found = data_->db.lookup(family, data_->arch, shape, batch);
  if (report != nullptr) {
    *report = {found.how,    found.miss,          found.tuned_batch,
               found.config, how_name(found.how), miss_name(found.miss)};
  }
  const Slot* slot = found.cubin == nullptr ? nullptr : &data_->slots[found.cubin->index];
  if (slot == nullptr || slot->family != deploy) {
    return {ServeStatus::no_kernel, "no launchable frozen cubin for this family and arch"};
  }
  return deploy->launch(slot->config, shape, batch, args, stream, &tuner::cuda::launch_unchecked);
}

const char* status_name(ServeStatus status) noexcept {
  switch (status) {
    case ServeStatus::ok:
      return "ok";
    case ServeStatus::bad_shape:
      return "bad_shape";
    case ServeStatus::bad_batch:
      return "bad_batch";
    case ServeStatus::bad_arguments:
      return "bad_arguments";
    case ServeStatus::workspace_too_small:
      return "workspace_too_small";
    case ServeStatus::no_kernel:
      return "no_kernel";
    case ServeStatus::launch_failed:
      return "launch_failed";
  }
  return "unknown";
}

}  // namespace tunedb::cuda
