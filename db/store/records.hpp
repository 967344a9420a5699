#pragma once
// The rows of a tuning store as plain structs. Optional fields are NULL in the database: a column
// that does not apply to a row (no timing for a pruned config, no device in a plan) stays empty.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tuner::db {

enum class RunKind { plan, sweep };

// What became of one configuration. A plan (no GPU) ends in pruned_shape, pruned_budget,
// compile_failed, pruned_after_compile or survivor; a sweep adds wrong_result, fault, measured.
enum class Fate {
  pruned_shape,
  pruned_budget,
  compile_failed,
  pruned_after_compile,
  survivor,
  wrong_result,
  fault,
  transient,  // timed out or out of memory: retried by the next sweep, never a resume hit
  measured,
  // Not measured at this batch: the batch search (tuner/batch_search.hpp) judged it too slow at
  // the neighbouring batches; the reason names the rule. Never a resume hit.
  skipped_by_search,
};

// plan: a fate decided without a GPU, recorded again by every plan run.
// measure: a fate decided on a device; unique per (problem, params, source, archs, device,
// measure_env) so that a resumed sweep skips it.
// retime: a finalist's interleaved re-timing against the default, which the winner rule decided
// on; one per finalist per sweep, never a resume hit.
enum class Stage { plan, measure, retime };

enum class Decision { tuned, default_kept };

const char* to_string(RunKind kind) noexcept;
const char* to_string(Fate fate) noexcept;
const char* to_string(Stage stage) noexcept;
const char* to_string(Decision decision) noexcept;
// Parse the names above; throw DbInputError naming the accepted values.
RunKind parse_run_kind(std::string_view text);
Fate parse_fate(std::string_view text);
Stage parse_stage(std::string_view text);
Decision parse_decision(std::string_view text);

struct RunInfo {
  std::int64_t id = 0;                  // set by the store
  std::string started_at;               // set by the store (UTC, ISO 8601)
  std::optional<std::string> ended_at;  // set by end_run
  std::string host;
  std::optional<std::string> gpu_name;       // "NVIDIA H200"; none for a plan without GPU
  std::optional<std::string> measured_arch;  // "sm_90"; none for a plan without GPU
  std::string budget_arch;                   // "sm_120": the arch whose limits pruned configs
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_version;
  std::optional<std::string> nvrtc_version;
  std::string tuner_version;
  std::string command_line;
  RunKind kind = RunKind::plan;
  std::optional<double> copy_bandwidth_gbs;  // device-to-device copy, GB/s (read + written)
};

// One tuning problem: a family, its shape as canonical text ("k=7168,n=4096": name=value pairs
// sorted by name; the family builds it) and a batch, empty for plan-level problems (stored as 0).
struct ProblemKey {
  std::string family;
  std::string shape;
  std::optional<int> batch;

  bool operator==(const ProblemKey&) const = default;
};

// The resume key of a measured trial.
struct MeasureKey {
  std::int64_t problem_id = 0;
  std::string params_json;  // canonicalized by the store
  std::string source_hash;
  std::string budget_arch;
  std::string measured_arch;
  std::string device_name;
  std::string measure_env;  // NVRTC, driver and measurement protocol versions
};

struct TrialRecord {
  std::int64_t id = 0;  // set by the store
  std::int64_t run_id = 0;
  std::int64_t problem_id = 0;
  std::string source_hash;  // must have been added with Store::add_source
  Stage stage = Stage::plan;
  std::string budget_arch;
  std::optional<std::string> measured_arch;  // required for Stage::measure
  std::optional<std::string> device_name;    // required for Stage::measure
  std::string params_json;                   // canonicalized by the store
  // The NVRTC compile the row's figures come from: set by measurements and by plan rows that
  // compiled, unset for plan rows pruned before any compile.
  std::optional<std::string> compile_key;
  Fate fate = Fate::survivor;
  std::string reason;
  // Budget estimates and compile results.
  std::optional<std::int64_t> est_smem_bytes;
  std::optional<std::int64_t> est_regs;
  std::optional<std::int64_t> ptxas_regs;
  std::optional<std::int64_t> ptxas_spill_bytes;
  std::optional<std::int64_t> blocks_per_sm;
  std::optional<std::string> occupancy_limiter;
  std::optional<double> compile_ms;
  std::optional<bool> cached;
  // Timing and verification (measured trials).
  std::optional<double> median_us;
  std::optional<double> p10_us;
  std::optional<double> p90_us;
  std::optional<std::int64_t> samples;
  std::optional<double> rel_spread;  // (p90 - p10) / median
  std::optional<double> err_out;
  std::optional<double> err_lse;
  std::optional<std::int64_t> bytes_moved;
  std::string created_at;   // set by the store
  std::string measure_env;  // measure stage: "nvrtc 13.0, driver 13000, protocol 2"
  // Launch-to-launch jitter (protocol 2): percentiles of single launches, on median_us's scale.
  // Empty for plan rows, failures and stores written before schema version 3.
  std::optional<double> launch_p10_us;
  std::optional<double> launch_p90_us;
  // A plan row that stands for many members of the cross product: a parameter value the shape rules
  // out alone (params_json holds that one parameter), and how many members it stands for. Unset
  // for a row of one config and in stores written before schema version 4.
  std::optional<std::int64_t> members;

  // The resume key; only meaningful for Stage::measure.
  MeasureKey measure_key() const;
};

// The configuration to use for one (family, budget arch, device, shape, batch). params_json is
// what to run: the tuned config, or the default config itself when decision is default_kept.
struct WinnerRecord {
  std::int64_t id = 0;  // set by the store
  std::string family;
  std::string budget_arch;
  std::string measured_arch;
  std::string device_name;
  std::string shape;  // canonical text, as in ProblemKey
  int batch = 0;
  std::string params_json;
  double median_us = 0.0;
  std::string default_params_json;
  double default_median_us = 0.0;
  double speedup_vs_default = 1.0;  // default_median_us / median_us (1.0 when default kept)
  double noise_rel = 0.0;           // the noise threshold the decision used
  Decision decision = Decision::default_kept;
  std::string reason;
  std::string source_hash;
  std::int64_t run_id = 0;
  std::optional<std::int64_t> bytes_moved;
  std::string updated_at;  // set by the store
};

struct TrialFilter {
  std::optional<std::int64_t> run_id;
  std::optional<std::string> family;
  std::optional<std::int64_t> problem_id;
  std::optional<Fate> fate;
  std::optional<Stage> stage;
};

struct WinnerFilter {
  std::optional<std::string> family;
  std::optional<std::string> budget_arch;
  std::optional<std::string> device_name;
  std::optional<std::int64_t> run_id;
};

}  // namespace tuner::db
