// `tuner freeze`: a tuning store's winners into a self-contained read-only file for serving, with
// the cubin of every winning config compiled for the arch the winners were pruned for (the
// deployment target), so a serving machine needs neither NVRTC nor a compile at start-up.
// `tuner verify`: recompute a frozen file's checksum and check its schema.
//
// Kernel names stored with each cubin: the lowered names of the family's frozen_program for the
// config and the shapes whose winners run it (Family::frozen_program says the order); with each,
// the launch facts of Family::frozen_launches (role, block size, dynamic smem, launch params).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "core/arch.hpp"
#include "core/config.hpp"
#include "core/cubin_cache.hpp"
#include "core/error.hpp"
#include "core/launch_contract.hpp"
#include "db/store/store.hpp"
#include "db/tunedb/freeze.hpp"
#include "kernels/registry.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/db_open.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/shape_text.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

// (family, budget arch, canonical params) -> the shapes whose winners run that config.
using ShapeUse = std::map<std::tuple<std::string, std::string, std::string>, std::vector<Shape>>;

struct StoreWinners {
  ShapeUse shape_use;
  std::set<std::pair<std::string, std::string>> default_params;  // (family, canonical default)
};

StoreWinners read_winners(const std::string& store_path, const std::optional<std::string>& arch) {
  const db::Store store = db::Store::open(store_path);
  db::WinnerFilter filter;
  filter.budget_arch = arch;
  StoreWinners found;
  for (const db::WinnerRecord& winner : store.winners(filter)) {
    found
        .shape_use[{winner.family, winner.budget_arch,
                    db::canonical_params_json(winner.params_json)}]
        .push_back(parse_canonical_shape(winner.shape));
    found.default_params.insert(
        {winner.family, db::canonical_params_json(winner.default_params_json)});
  }
  return found;
}

class FamilyCubins {
 public:
  FamilyCubins(StoreWinners winners, const CubinCache& cache)
      : winners_(std::move(winners)), cache_(cache) {}

  tunedb::CubinImage operator()(const tunedb::CubinRequest& request) {
    const Family& family = family_by_name(request.family);
    if (request.source_hash != family.source_hash()) {
      throw InputError("the winners of " + request.family + " " + request.params_json + " for " +
                       request.arch + " were timed with kernel sources " + request.source_hash +
                       ", but this tuner's sources are " + family.source_hash() +
                       ": re-run tuner sweep with this build, or freeze with the build that "
                       "swept");
    }
    const Arch arch = arch_by_name(request.arch);
    const Config config = config_from_json(request.params_json);
    const std::vector<Shape> shapes = shapes_for(request);
    const CompileRequest compile = family.frozen_program(config, shapes, arch.sm);
    const CachedCompile compiled = compile_cached(cache_, compile);
    if (!compiled.compiled) {
      throw std::runtime_error("NVRTC rejected " + compile.context + ":\n" + compiled.result.log);
    }
    // This build's contract: the cubin is compiled from this build's templates (the source hash
    // matched above), so its kernels read the parameter blocks this build's launcher packs.
    tunedb::CubinImage image{
        compiled.result.cubin, {}, {}, std::string(launch_contract(family.name))};
    for (const std::string& expression : compile.name_expressions) {
      image.kernel_names.push_back(compiled.result.lowered_names.at(expression));
    }
    if (family.frozen_launches != nullptr) {
      for (const FrozenLaunch& launch : family.frozen_launches(config, shapes)) {
        if (launch.max_dynamic_smem > arch.max_smem_per_block_optin_bytes) {
          // A store row no plan of this arch kept (edited, or swept for another arch): its
          // kernel could never launch there, so nothing is frozen.
          throw InputError(request.family + " " + request.params_json + " (" + launch.role +
                           ") asks for " + std::to_string(launch.max_dynamic_smem) +
                           " B of dynamic shared memory, above " + arch.name + "'s opt-in " +
                           std::to_string(arch.max_smem_per_block_optin_bytes) +
                           " B: it cannot launch there; re-run tuner sweep for " + arch.name);
        }
        image.launches.push_back({launch.role,
                                  compiled.result.lowered_names.at(launch.name_expression),
                                  launch.block_threads, launch.dynamic_smem,
                                  launch.max_dynamic_smem, launch.launch_params_json});
      }
    }
    std::printf("cubin for %s (the winners' budget arch): %s, %zu bytes, %s\n", arch.name.c_str(),
                compile.context.c_str(), image.bytes.size(),
                compiled.from_cache
                    ? "from the cubin cache"
                    : ("compiled in " +
                       std::to_string(static_cast<int>(compiled.result.compile_ms)) + " ms")
                          .c_str());
    std::fflush(stdout);
    return image;
  }

 private:
  // Empty for a default config: any shape may fall back to it.
  std::vector<Shape> shapes_for(const tunedb::CubinRequest& request) const {
    if (winners_.default_params.contains({request.family, request.params_json})) return {};
    const auto used = winners_.shape_use.find({request.family, request.arch, request.params_json});
    return used == winners_.shape_use.end() ? std::vector<Shape>{} : used->second;
  }

  StoreWinners winners_;
  const CubinCache& cache_;
};

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : join_names(names);
}

// One line per family with launchable cubins: whether they were frozen under this build's launch
// contract, i.e. whether this build's libtunedb_cuda launches them or refuses them at open. Taken
// from the verify report, so the lines describe the file that was checked, read once.
std::vector<std::string> contract_lines(const tunedb::VerifyReport& report) {
  std::vector<std::string> lines;
  for (const auto& [family, contracts] : report.launch_contracts) {
    const std::string own(launch_contract(family));
    std::string line = family + ": launch contract ";
    const auto foreign = std::find_if(contracts.begin(), contracts.end(),
                                      [&](const std::string& contract) { return contract != own; });
    if (foreign == contracts.end()) {
      line += own;
      line += ", this build's";
    } else {
      line += *foreign;
      line += ", not this build's (";
      line += own;
      line += "): this build's libtunedb_cuda refuses these cubins";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

int run_freeze(const Args& args) {
  std::string db_path;
  std::string out_path;
  std::string arch;
  std::string cache_dir;
  bool force = false;
  po::options_description options("freeze options");
  options.add_options()("db", po::value(&db_path)->required(), "tuning store to freeze")(
      "out", po::value(&out_path)->required(), "frozen file to write")(
      "arch", po::value(&arch),
      "keep only winners tuned for this budget arch (e.g. sm_120); default: all")(
      "cache-dir", po::value(&cache_dir),
      "cubin cache directory (default $XDG_CACHE_HOME/tuner or ~/.cache/tuner)")(
      "force", po::bool_switch(&force), "replace --out when it exists");
  if (!parse_or_help("freeze", "--db tuning.db --out frozen.db [--arch sm_120] [options]", options,
                     args)) {
    return 0;
  }
  require_file(db_path, "--db");
  std::optional<std::string> budget_arch;
  if (!arch.empty()) budget_arch = arch_by_name(arch).name;
  const CubinCache cache(cache_dir.empty() ? default_cache_dir()
                                           : std::filesystem::path(cache_dir));
  tunedb::FreezeOptions freeze_options;
  freeze_options.budget_arch = budget_arch;
  freeze_options.overwrite = force;
  try {
    FamilyCubins cubins(read_winners(db_path, budget_arch), cache);
    const tunedb::FreezeSummary summary =
        tunedb::freeze(db_path, out_path, freeze_options, std::ref(cubins));
    std::printf("froze %s: %zu winners, %zu cubins, budget arches %s, devices %s, checksum %s\n",
                summary.path.c_str(), summary.winners, summary.cubins,
                joined(summary.budget_arches).c_str(), joined(summary.device_names).c_str(),
                summary.checksum.c_str());
  } catch (const tunedb::DbInputError& error) {
    throw InputError(std::string("tuner freeze: ") + error.what());
  }
  return 0;
}

int run_verify(const Args& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::printf(
        "usage: tuner verify FILE\n\nRuns every check a reader runs before it hands anything "
        "out: the frozen\nheader (application_id), the schema version, the checksum, and each "
        "cubin's ELF arch\nagainst its row; then says for each family whether its cubins were "
        "frozen under this\nbuild's launch contract (which this build's libtunedb_cuda "
        "requires).\nExit 0 and \"ok\" when intact; 1 and the problem when "
        "not a sound frozen file; "
        "2 when FILE is missing.\n");
    return 0;
  }
  if (args.size() != 1 || args[0].empty() || args[0][0] == '-') {
    throw InputError("tuner verify takes one argument, the frozen file: tuner verify FILE");
  }
  const std::string& path = args[0];
  require_file(path, "FILE");
  try {
    const tunedb::VerifyReport report = tunedb::verify(path);
    std::printf("ok: %s: schema %d, %zu winners, %zu cubins, budget arches %s, checksum %s\n",
                path.c_str(), report.schema_version, report.winners, report.cubins,
                joined(report.budget_arches).c_str(), report.checksum.c_str());
    for (const std::string& line : contract_lines(report)) std::printf("  %s\n", line.c_str());
    return 0;
  } catch (const std::exception& error) {
    // DbError (damaged, checksum mismatch) or DbInputError (not frozen, foreign, newer): either
    // way the file is not one a deployment may ship.
    std::fprintf(stderr, "tuner verify: %s: FAILED: %s\n", path.c_str(), error.what());
    return 1;
  }
}

}  // namespace tuner::cli
