// `tuner freeze`: a tuning store's winners into a self-contained read-only file for serving, with
// the cubin of every winning config compiled for the arch the winners were pruned for (the
// deployment target), so a serving machine needs neither NVRTC nor a compile at start-up.
// `tuner verify`: recompute a frozen file's checksum and check its schema.
//
// Kernel names stored with each cubin: the split kernel for each KV format that uses the config,
// in KvFormat order (fp8_ds_mla, bf16), then the combine kernel (always last). A cubin with two
// names has one split kernel; the family's default config carries both formats' split kernels
// (any shape may fall back to it), so a consumer takes names[kv] when there are three.
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "db/store/store.hpp"
#include "db/tunedb/freeze.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "tuner/arch.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/db_open.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/config.hpp"
#include "tuner/cubin_cache.hpp"
#include "tuner/error.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

using smla_family::KvFormat;

// (budget arch, canonical params) -> the KV formats whose winners run that config.
using KvUse = std::map<std::pair<std::string, std::string>, std::set<KvFormat>>;

struct StoreWinners {
  KvUse kv_use;
  std::set<std::string> default_params;  // canonical default configs the sweeps recorded
};

StoreWinners read_winners(const std::string& store_path, const std::optional<std::string>& arch) {
  const db::Store store = db::Store::open(store_path);
  db::WinnerFilter filter;
  filter.family = smla_family::kFamilyName;
  filter.budget_arch = arch;
  StoreWinners found;
  for (const db::WinnerRecord& winner : store.winners(filter)) {
    found.kv_use[{winner.budget_arch, db::canonical_params_json(winner.params_json)}].insert(
        smla_family::parse_kv_format(winner.kv_format));
    found.default_params.insert(db::canonical_params_json(winner.default_params_json));
  }
  return found;
}

class FamilyCubins {
 public:
  FamilyCubins(StoreWinners winners, const CubinCache& cache)
      : winners_(std::move(winners)), cache_(cache) {}

  tunedb::CubinImage operator()(const tunedb::CubinRequest& request) {
    if (request.family != smla_family::kFamilyName) {
      throw InputError("cannot compile cubins for family '" + request.family +
                       "': this tuner knows " + smla_family::kFamilyName +
                       " (freeze with --arch to leave the other winners out)");
    }
    if (request.source_hash != smla_family::source_hash()) {
      throw InputError("the winners of " + request.params_json + " for " + request.arch +
                       " were timed with kernel sources " + request.source_hash +
                       ", but this tuner's sources are " + smla_family::source_hash() +
                       ": re-run tuner sweep with this build, or freeze with the build that "
                       "swept");
    }
    const Arch arch = arch_by_name(request.arch);
    const smla_family::KernelConfig config =
        smla_family::from_config(config_from_json(request.params_json));
    const std::vector<KvFormat> formats = formats_for(request);
    CompileRequest compile = smla_family::split_program(config, formats.front(), arch.sm);
    for (std::size_t i = 1; i < formats.size(); ++i) {
      compile.name_expressions.insert(compile.name_expressions.end() - 1,
                                      smla_family::split_kernel_name(config, formats[i]));
      compile.context.append("+").append(smla_family::to_string(formats[i]));
    }
    const CachedCompile compiled = compile_cached(cache_, compile);
    if (!compiled.compiled) {
      throw std::runtime_error("NVRTC rejected " + compile.context + ":\n" + compiled.result.log);
    }
    tunedb::CubinImage image{compiled.result.cubin, {}};
    for (const std::string& expression : compile.name_expressions) {
      image.kernel_names.push_back(compiled.result.lowered_names.at(expression));
    }
    std::string kv_names;
    for (KvFormat kv : formats) {
      if (!kv_names.empty()) kv_names.append("+");
      kv_names.append(smla_family::to_string(kv));
    }
    std::printf(
        "cubin for %s (the winners' budget arch): %s kv %s, %zu bytes, %s\n", arch.name.c_str(),
        request.params_json.c_str(), kv_names.c_str(), image.bytes.size(),
        compiled.from_cache ? "from the cubin cache"
                            : ("compiled in " +
                               std::to_string(static_cast<int>(compiled.result.compile_ms)) + " ms")
                                  .c_str());
    std::fflush(stdout);
    return image;
  }

 private:
  std::vector<KvFormat> formats_for(const tunedb::CubinRequest& request) const {
    std::set<KvFormat> formats;
    const auto used = winners_.kv_use.find({request.arch, request.params_json});
    if (used != winners_.kv_use.end()) formats = used->second;
    if (winners_.default_params.contains(request.params_json) || formats.empty()) {
      formats = {KvFormat::fp8_ds_mla, KvFormat::bf16};
    }
    return {formats.begin(), formats.end()};
  }

  StoreWinners winners_;
  const CubinCache& cache_;
};

std::string joined(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : join_names(names);
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
        "cubin's ELF arch\nagainst its row.\nExit 0 and \"ok\" when intact; 1 and the problem when "
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
    return 0;
  } catch (const std::exception& error) {
    // DbError (damaged, checksum mismatch) or DbInputError (not frozen, foreign, newer): either
    // way the file is not one a deployment may ship.
    std::fprintf(stderr, "tuner verify: %s: FAILED: %s\n", path.c_str(), error.what());
    return 1;
  }
}

}  // namespace tuner::cli
