// `tuner plan`: every member of the family's cross product with its fate and reason, as a table,
// JSON or CSV (a parameter value the shape rules out alone is one row, "*" for the other
// parameters, with the members it stands for). Budgets are checked before any compile; what is left
// compiles through the cubin cache on a thread pool. --audit compiles what the budget pruned too
// and judges the static model.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "db/store/shards.hpp"
#include "db/store/store.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/plan.hpp"
#include "tuner/plan_record.hpp"
#include "tuner/run_info.hpp"
#include "tuner/shard.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

enum class Format { table, json, csv };

Format parse_format(const std::string& text) {
  if (text == "table") return Format::table;
  if (text == "json") return Format::json;
  if (text == "csv") return Format::csv;
  throw InputError("--format '" + text + "' is not known: use table, json or csv");
}

template <typename T>
nlohmann::json or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// The row's figures, null where a stage did not run (the same columns in JSON and CSV).
struct RowFigures {
  std::optional<int> est_smem_bytes, est_regs, ptxas_regs, ptxas_spill_bytes, ptxas_static_smem;
  std::optional<int> blocks_per_sm;
  std::optional<std::string> occupancy_limiter;
  std::optional<double> compile_ms;
  std::optional<bool> cached;
};

RowFigures figures_of(const PlanRow& row) {
  RowFigures figures;
  if (row.budget) {
    figures.est_smem_bytes = row.budget->smem_bytes_per_block;
    figures.est_regs = row.budget->registers_per_thread;
  }
  if (row.compiled) {
    figures.compile_ms = row.compiled->compile_ms;
    figures.cached = row.compiled->cached;
    if (row.compiled->succeeded) {
      figures.ptxas_regs = row.compiled->ptxas.registers;
      figures.ptxas_spill_bytes = row.compiled->ptxas.spill_bytes();
      figures.ptxas_static_smem = row.compiled->ptxas.static_smem_bytes;
    }
  }
  if (const Occupancy* occupancy = row.shown_occupancy()) {
    figures.blocks_per_sm = occupancy->blocks_per_sm;
    figures.occupancy_limiter = to_string(occupancy->limiter);
  }
  return figures;
}

const char* verdict_name(AuditVerdict verdict) {
  switch (verdict) {
    case AuditVerdict::false_prune:
      return "false_prune";
    case AuditVerdict::false_keep:
      return "false_keep";
    case AuditVerdict::none:
      break;
  }
  return "agrees";
}

// One JSON row: a config (or a narrowed value: its one parameter, no figures, its members).
nlohmann::json row_json(const PlanResult& result, nlohmann::json params, Fate fate,
                        const std::string& reason, const RowFigures& figures, long long members,
                        AuditVerdict audit) {
  nlohmann::json object = {
      {"family", result.family},
      {"params", std::move(params)},
      {"fate", std::string(to_string(fate))},
      {"reason", reason},
      {"est_smem_bytes", or_null(figures.est_smem_bytes)},
      {"est_regs", or_null(figures.est_regs)},
      {"ptxas_regs", or_null(figures.ptxas_regs)},
      {"ptxas_spill_bytes", or_null(figures.ptxas_spill_bytes)},
      {"ptxas_static_smem_bytes", or_null(figures.ptxas_static_smem)},
      {"blocks_per_sm", or_null(figures.blocks_per_sm)},
      {"occupancy_limiter", or_null(figures.occupancy_limiter)},
      {"compile_ms", or_null(figures.compile_ms)},
      {"cached", or_null(figures.cached)},
      {"members", members},
  };
  if (result.audited) object["audit"] = verdict_name(audit);
  return object;
}

nlohmann::json to_json_rows(const PlanResult& result) {
  nlohmann::json rows = nlohmann::json::array();
  for (const NarrowedValue& value : result.narrowed) {
    // Decided before any budget: no figures.
    rows.push_back(row_json(result, {{value.param, value.value}}, Fate::pruned_shape, value.reason,
                            RowFigures{}, value.members, AuditVerdict::none));
  }
  for (const PlanRow& row : result.rows) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, value] : row.config.values) params[name] = value;
    rows.push_back(
        row_json(result, std::move(params), row.fate, row.reason, figures_of(row), 1, row.audit));
  }
  return rows;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

template <typename T>
std::string text_or(const std::optional<T>& value, const std::string& none) {
  if (!value) return none;
  if constexpr (std::is_same_v<T, std::string>) {
    return *value;
  } else if constexpr (std::is_same_v<T, bool>) {
    return *value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, double>) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f", *value);
    return buffer;
  } else {
    return std::to_string(*value);
  }
}

// A narrowed value's cells under the parameter columns: its value, "*" (any) elsewhere.
std::vector<std::string> narrowed_cells(const std::vector<Parameter>& space,
                                        const NarrowedValue& value) {
  std::vector<std::string> cells;
  cells.reserve(space.size());
  for (const Parameter& parameter : space) {
    cells.push_back(parameter.name == value.param ? std::to_string(value.value) : "*");
  }
  return cells;
}

void print_csv(const PlanResult& result, const std::vector<Parameter>& space) {
  if (result.recorded_rows() == 0) return;  // a shard with no config of this plan
  std::string header = "family";
  for (const Parameter& parameter : space) header += "," + parameter.name;
  header +=
      ",fate,reason,est_smem_bytes,est_regs,ptxas_regs,ptxas_spill_bytes,"
      "ptxas_static_smem_bytes,blocks_per_sm,occupancy_limiter,compile_ms,cached,members";
  if (result.audited) header += ",audit";
  std::printf("%s\n", header.c_str());
  for (const NarrowedValue& value : result.narrowed) {
    std::string line = result.family;
    for (const std::string& cell : narrowed_cells(space, value)) line += "," + cell;
    line += "," + std::string(to_string(Fate::pruned_shape)) + "," + csv_field(value.reason) +
            ",,,,,,,,,," + std::to_string(value.members) + (result.audited ? ",agrees" : "");
    std::printf("%s\n", line.c_str());
  }
  for (const PlanRow& row : result.rows) {
    const RowFigures f = figures_of(row);
    std::string line = result.family;
    for (const auto& entry : row.config.values) line += "," + std::to_string(entry.second);
    line += "," + std::string(to_string(row.fate)) + "," + csv_field(row.reason);
    for (const std::string& field :
         {text_or(f.est_smem_bytes, ""), text_or(f.est_regs, ""), text_or(f.ptxas_regs, ""),
          text_or(f.ptxas_spill_bytes, ""), text_or(f.ptxas_static_smem, ""),
          text_or(f.blocks_per_sm, ""), text_or(f.occupancy_limiter, ""),
          f.compile_ms ? std::to_string(*f.compile_ms) : std::string(), text_or(f.cached, ""),
          std::string("1")}) {
      line += "," + field;
    }
    if (result.audited) line += std::string(",") + verdict_name(row.audit);
    std::printf("%s\n", line.c_str());
  }
}

// The family's parameters as columns, each as wide as its name.
void print_table(const PlanResult& result, const std::vector<Parameter>& space) {
  if (result.recorded_rows() == 0) return;  // a shard with no config of this plan
  std::string head;
  for (const Parameter& parameter : space) head += parameter.name + " ";
  std::printf("%s| %8s %7s | %4s %5s %7s | %6s %-13s | %-20s %6s %6s | %s\n", head.c_str(),
              "est_smem", "est_reg", "regs", "spill", "st_smem", "blk/SM", "limiter", "fate", "ms",
              "cached", "reason");
  for (const NarrowedValue& value : result.narrowed) {
    std::string values;
    const std::vector<std::string> cells = narrowed_cells(space, value);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      values +=
          std::string(space[i].name.size() - std::min(space[i].name.size(), cells[i].size()), ' ') +
          cells[i] + " ";
    }
    std::printf("%s| %8s %7s | %4s %5s %7s | %6s %-13s | %-20s %6s %6s | %s (%lld configs)\n",
                values.c_str(), "-", "-", "-", "-", "-", "-", "-", "pruned_shape", "-", "-",
                value.reason.c_str(), value.members);
  }
  for (const PlanRow& row : result.rows) {
    const RowFigures f = figures_of(row);
    std::string values;
    for (const auto& [name, value] : row.config.values) {
      values +=
          std::string(name.size() - std::min(name.size(), std::to_string(value).size()), ' ') +
          std::to_string(value) + " ";
    }
    std::printf("%s| %8s %7s | %4s %5s %7s | %6s %-13s | %-20s %6s %6s | %s\n", values.c_str(),
                text_or(f.est_smem_bytes, "-").c_str(), text_or(f.est_regs, "-").c_str(),
                text_or(f.ptxas_regs, "-").c_str(), text_or(f.ptxas_spill_bytes, "-").c_str(),
                text_or(f.ptxas_static_smem, "-").c_str(), text_or(f.blocks_per_sm, "-").c_str(),
                text_or(f.occupancy_limiter, "-").c_str(), std::string(to_string(row.fate)).c_str(),
                text_or(f.compile_ms, "-").c_str(), text_or(f.cached, "-").c_str(),
                row.reason.c_str());
  }
}

// Counts and the audit list. Goes to stdout after a table, to stderr after JSON or CSV so that
// stdout stays one parseable document.
void print_summary(std::FILE* out, const PlanResult& result, double wall_s) {
  std::fprintf(out, "fates (%lld configs):", result.members());
  for (Fate fate : kAllFates) {
    std::fprintf(out, " %s %d", std::string(to_string(fate)).c_str(), result.count(fate));
  }
  std::fprintf(out,
               "\npruned before compile: %d; compile keys: %d, compiled now: %d, from cache: %d; "
               "%.1f s\n",
               result.pruned_before_compile(), result.compile_keys, result.compiles_done,
               result.compile_keys - result.compiles_done, wall_s);
  if (!result.narrowed.empty()) {
    std::fprintf(out,
                 "ruled out by the shape alone: %zu parameter values (%lld configs, one row "
                 "each)\n",
                 result.narrowed.size(), result.narrowed_members());
  }
  if (!result.audited) return;
  std::fprintf(out, "audit: false prunes %d, false keeps %d\n", result.false_prunes,
               result.false_keeps);
  for (const PlanRow& row : result.rows) {
    if (row.audit == AuditVerdict::none) continue;
    // A false prune shows the budget's reason next to what the compile found.
    const std::string budget_reason =
        row.audit == AuditVerdict::false_prune ? " (budget: " + row.reason + ")" : "";
    std::fprintf(out, "  %s %s: %s%s\n", verdict_name(row.audit), describe(row.config).c_str(),
                 row.audit_note.c_str(), budget_reason.c_str());
  }
}

// `tuner plan`'s options beyond the problem's, as given.
struct PlanCli {
  std::string arch_name = "sm_120";
  std::string format_name = "table";
  std::string cache_dir;
  bool cache_dir_given = false;
  std::string jobs_text = "0";
  bool audit = false;
  bool allow_spills = false;
  std::string db_path;
  std::string shard_text = "1/1";
};

void add_plan_options(po::options_description& options, PlanCli& cli) {
  options.add_options()("arch", po::value(&cli.arch_name)->default_value(cli.arch_name),
                        ("target arch whose limits prune configs: " + known_arch_names()).c_str())(
      "format", po::value(&cli.format_name)->default_value(cli.format_name), "table | json | csv")(
      "audit", po::bool_switch(&cli.audit),
      "also compile what the budget pruned; report false prunes and false keeps")(
      "allow-spills", po::bool_switch(&cli.allow_spills),
      "keep configs whose ptxas report shows spills")(
      "cache-dir", po::value(&cli.cache_dir)->notifier([&cli](const std::string&) {
        cli.cache_dir_given = true;
      }),
      "cubin cache directory (default $XDG_CACHE_HOME/tuner or ~/.cache/tuner)")(
      "jobs", po::value(&cli.jobs_text)->default_value(cli.jobs_text),
      "compile threads; 0: all cores")(
      "db", po::value(&cli.db_path),
      "record the plan (every config's fate) in this SQLite tuning DB")(
      "shard", po::value(&cli.shard_text),
      "i/N: plan only this deterministic slice of the compile keys (merge the --db files of all "
      "N with tuner merge)");
}

// --db: every config's fate as a plan run (with its shard's work, when sharded).
void record_plan_run(const std::string& db_path, const Args& args, const PlanResult& result,
                     const Family& family, const ShardSpec& shard, bool allow_spills,
                     std::FILE* info) {
  db::Store store = db::Store::open(db_path);
  std::string command_line = "tuner plan";
  for (const std::string& arg : args) command_line += " " + arg;
  const std::int64_t run_id =
      store.begin_run(base_run_info(db::RunKind::plan, result.arch.name, command_line));
  record_plan(store, run_id, result, family);
  if (shard.sharded()) {
    db::record_shard(
        store, run_id, shard.index, shard.count,
        plan_work(result.family, result.shape.canonical(), result.arch.name, allow_spills));
  }
  store.end_run(run_id);
  std::fprintf(info, "recorded %lld fates (%lld rows) as plan run %lld in %s\n", result.members(),
               static_cast<long long>(result.recorded_rows()), static_cast<long long>(run_id),
               db_path.c_str());
}

}  // namespace

int run_plan(const Args& args) {
  ProblemOptions problem = problem_options_for(args);
  PlanCli cli;
  po::options_description options("plan options");
  add_problem_options(options, problem);
  add_plan_options(options, cli);
  if (!parse_or_help("plan", "--arch sm_120 [--family F] [shape options] [options]", options, args))
    return 0;

  PlanRequest request;
  const Problem parsed = parse_problem(problem);
  request.family = parsed.family;
  request.shape = parsed.shape;
  const Format format = parse_format(cli.format_name);
  request.jobs =
      cli.jobs_text == "0" ? 0u : static_cast<unsigned>(parse_positive_int(cli.jobs_text, "jobs"));
  request.audit = cli.audit;
  request.allow_spills = cli.allow_spills;
  std::vector<ArchDisagreement> disagreements;
  request.arch = plan_arch(cli.arch_name, &disagreements);
  const ShardSpec shard = parse_shard(cli.shard_text);
  if (shard.sharded()) {
    request.keep = [shard](std::string_view key) { return in_shard(shard, key); };
  }
  // An empty --cache-dir is refused by CubinCache rather than read as "use the default".
  const CubinCache cache(cli.cache_dir_given ? std::filesystem::path(cli.cache_dir)
                                             : default_cache_dir());

  std::FILE* info = format == Format::table ? stdout : stderr;
  std::fprintf(info, "tuner plan: %s, %s [%s], %s (%s), NVRTC %s, cache %s\n",
               request.family->name.c_str(), request.family->describe_shape(request.shape).c_str(),
               request.shape.canonical().c_str(), request.arch.name.c_str(),
               request.arch.source.c_str(), nvrtc_version().c_str(), cache.dir().c_str());
  if (!disagreements.empty()) {
    std::fprintf(info, "arch table vs device:\n%s\n", format_disagreements(disagreements).c_str());
  }
  const auto start = std::chrono::steady_clock::now();
  const PlanResult result = plan(request, cache);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (format == Format::json) std::cout << to_json_rows(result).dump(1) << "\n" << std::flush;
  if (format == Format::csv) print_csv(result, request.family->space());
  if (format == Format::table) print_table(result, request.family->space());
  std::fflush(stdout);
  print_summary(info, result, wall_s);
  if (!cli.db_path.empty()) {
    record_plan_run(cli.db_path, args, result, *request.family, shard, cli.allow_spills, info);
  }
  return 0;
}

}  // namespace tuner::cli
