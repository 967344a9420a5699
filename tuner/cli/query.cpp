// `tuner query`: what a serving engine would get from a tuning DB (store or frozen file) for one
// problem and batch, and why: the config, the rule that fired, and where the winner came from.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"
#include "db/tunedb/tunedb.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/db_open.hpp"
#include "tuner/cli/problem_options.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

constexpr const char* kJsonFieldsHelp =
    "JSON fields (--format json): db, frozen, family, arch, shape (the canonical text the DB keys\n"
    "  on: name=value pairs sorted by name, as the family canonicalizes them), batch, how (exact | "
    "bucket | default | not_found), miss (none |\n"
    "  arch_not_in_db | family_not_in_db | shape_not_tuned), config (object of parameters, null\n"
    "  when not_found), params_json (canonical text or null), tuned_batch, median_us, run_id,\n"
    "  measured_arch, device_name (null unless how is exact or bucket), default_kept (bool),\n"
    "  cubin_bytes and kernel_names (the frozen image for config and arch; null / [] if none),\n"
    "  launch_contract (the parameter layout its kernels read: core/launch_contract.hpp).\n";

// --arch when given; otherwise the DB's only budget arch.
std::string choose_arch(const std::string& given, const tunedb::DbInfo& info) {
  if (!given.empty()) return given;
  if (info.budget_arches.size() == 1) return info.budget_arches.front();
  if (info.budget_arches.empty()) {
    throw InputError(info.path +
                     " holds no winners, so no budget arch can be chosen for you: pass --arch "
                     "(e.g. --arch sm_120) to get the family's default config");
  }
  throw InputError(info.path + " holds winners for several budget arches (" +
                   join_names(info.budget_arches) + "): pass --arch with one of them");
}

nlohmann::json optional_text(std::string_view text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(text));
}

nlohmann::json to_json(const tunedb::DbInfo& info, const std::string& family,
                       const std::string& arch, const std::string& shape, int batch,
                       const tunedb::Lookup& found) {
  const bool from_winner = found.how == tunedb::How::exact || found.how == tunedb::How::bucket;
  nlohmann::json config = nullptr;
  if (found.config != nullptr) {
    config = nlohmann::json::object();
    for (const tunedb::Param& param : found.config->params) {
      config[std::string(param.name)] = param.value;
    }
  }
  nlohmann::json kernel_names = nlohmann::json::array();
  if (found.cubin != nullptr) {
    for (std::string_view name : found.cubin->kernel_names) kernel_names.push_back(name);
  }
  return {
      {"db", info.path},
      {"frozen", info.frozen},
      {"family", family},
      {"arch", arch},
      {"shape", shape},
      {"batch", batch},
      {"how", tunedb::how_name(found.how)},
      {"miss", tunedb::miss_name(found.miss)},
      {"config", config},
      {"params_json", found.config != nullptr
                          ? nlohmann::json(std::string(found.config->params_json))
                          : nlohmann::json(nullptr)},
      {"tuned_batch", from_winner ? nlohmann::json(found.tuned_batch) : nlohmann::json(nullptr)},
      {"median_us", from_winner && std::isfinite(found.median_us) ? nlohmann::json(found.median_us)
                                                                  : nlohmann::json(nullptr)},
      {"run_id", from_winner ? nlohmann::json(found.run_id) : nlohmann::json(nullptr)},
      {"measured_arch", optional_text(found.measured_arch)},
      {"device_name", optional_text(found.device_name)},
      {"default_kept", found.default_kept},
      {"cubin_bytes", found.cubin != nullptr ? nlohmann::json(found.cubin->bytes.size())
                                             : nlohmann::json(nullptr)},
      {"kernel_names", kernel_names},
      {"launch_contract", found.cubin != nullptr
                              ? nlohmann::json(std::string(found.cubin->launch_contract))
                              : nlohmann::json(nullptr)},
  };
}

std::string rule_text(const tunedb::Lookup& found, int batch) {
  switch (found.how) {
    case tunedb::How::exact:
      return "exact (tuned at batch " + std::to_string(batch) + ")";
    case tunedb::How::bucket:
      return found.tuned_batch >= batch
                 ? "bucket (batch " + std::to_string(batch) + " -> smallest tuned batch above, " +
                       std::to_string(found.tuned_batch) + ")"
                 : "bucket (batch " + std::to_string(batch) + " is above every tuned batch: the " +
                       "largest, " + std::to_string(found.tuned_batch) + ")";
    case tunedb::How::default_config:
      return std::string("default (nothing tuned: ") + tunedb::miss_name(found.miss) + ")";
    case tunedb::How::not_found:
      break;
  }
  return std::string("not_found (nothing tuned: ") + tunedb::miss_name(found.miss) +
         ", and no default config known for the family)";
}

void print_table(const tunedb::DbInfo& info, const std::string& arch, const std::string& shape,
                 int batch, const tunedb::Lookup& found) {
  std::printf("db          %s (%s)\n", info.path.c_str(), info.frozen ? "frozen" : "store");
  std::printf("shape       %s\n", shape.c_str());
  std::printf("arch        %s\n", arch.c_str());
  std::printf("config      %s\n",
              found.config != nullptr ? std::string(found.config->params_json).c_str() : "(none)");
  std::printf("rule        %s\n", rule_text(found, batch).c_str());
  if (found.how == tunedb::How::exact || found.how == tunedb::How::bucket) {
    std::printf("tuned batch %d\n", found.tuned_batch);
    std::printf("measured    %.2f us on %s (%s)%s\n", found.median_us,
                std::string(found.device_name).c_str(), std::string(found.measured_arch).c_str(),
                found.default_kept ? "; the sweep kept the default" : "");
    std::printf("run         %lld\n", static_cast<long long>(found.run_id));
  }
  if (found.cubin != nullptr) {
    std::printf("cubin       %zu bytes, %zu kernels\n", found.cubin->bytes.size(),
                found.cubin->kernel_names.size());
  }
}

}  // namespace

int run_query(const Args& args) {
  ProblemOptions problem = problem_options_for(args);
  std::string db_path;
  std::string batch_text;
  std::string arch;
  std::string format = "table";
  po::options_description options("query options");
  options.add_options()("db", po::value(&db_path)->required(),
                        "tuning DB: a store or a frozen file");
  add_problem_options(options, problem);
  options.add_options()("batch", po::value(&batch_text)->required(), "batch size to look up")(
      "arch", po::value(&arch),
      "budget (deployment) arch the winners were tuned for, e.g. sm_120; default: the DB's "
      "only one")("format", po::value(&format)->default_value(format), "table | json");
  if (!parse_or_help(
          "query",
          "--db FILE [--family F] [shape options] --batch 37 [--arch sm_120] [--format json]\n\n" +
              std::string(kJsonFieldsHelp),
          options, args)) {
    return 0;
  }
  if (format != "table" && format != "json") {
    throw InputError("--format '" + format + "' is not known: use table or json");
  }
  const Problem parsed = parse_problem(problem);
  const int batch = parse_positive_int(batch_text, "batch");
  const tunedb::TuningDb db = open_tuning_db(db_path);
  const std::string chosen_arch = choose_arch(arch, db.info());
  const std::string shape = parsed.shape.canonical();
  const std::string& family = parsed.family->name;
  const tunedb::Lookup found = db.lookup(family, chosen_arch, shape, batch);
  if (format == "json") {
    std::cout << to_json(db.info(), family, chosen_arch, shape, batch, found).dump(1) << "\n";
  } else {
    print_table(db.info(), chosen_arch, shape, batch, found);
  }
  return 0;
}

}  // namespace tuner::cli
