#include "tuner/plan.hpp"

#include <algorithm>
#include <future>
#include <map>
#include <stdexcept>

#include "core/cuda_driver.hpp"
#include "core/parallel.hpp"

namespace tuner {

namespace {

std::string bytes(long long value) { return std::to_string(value) + " B"; }

// One NVRTC compile shared by every row with the same compile key.
struct CompileJob {
  Config config;
  CachedCompile outcome;
};

// The main kernel's ptxas report inside a compile of `config`.
PtxasReport main_report(const CompileResult& result, const PlanRequest& request,
                        const Config& config) {
  const std::string expression = request.family->main_kernel(config, request.shape);
  const auto lowered = result.lowered_names.find(expression);
  if (lowered == result.lowered_names.end()) {
    throw std::runtime_error("compile of " + expression + " has no lowered name for it");
  }
  const auto report = result.ptxas.find(lowered->second);
  if (report == result.ptxas.end()) {
    throw std::runtime_error("NVRTC's log has no ptxas report for " + lowered->second + " (" +
                             expression + ")");
  }
  return report->second;
}

CompiledFigures figures_of(const CompileJob& job, const StaticBudget& budget,
                           const PlanRequest& request) {
  const Arch& arch = request.arch;
  CompiledFigures figures;
  figures.succeeded = true;
  figures.ptxas = main_report(job.outcome.result, request, job.config);
  figures.occupancy = compute_occupancy(
      arch, BlockResources{budget.threads_per_block, figures.ptxas.registers,
                           figures.ptxas.static_smem_bytes + budget.smem_bytes_per_block});
  figures.compile_ms = job.outcome.result.compile_ms;
  figures.cached = job.outcome.from_cache;
  return figures;
}

std::string occupancy_words(const Occupancy& occupancy) {
  return std::to_string(occupancy.blocks_per_sm) + " blocks/SM, bound by " +
         to_string(occupancy.limiter);
}

// Runs every job's compile (through the cache) on `jobs` threads.
void run_compiles(std::vector<CompileJob>& compile_jobs, const PlanRequest& request,
                  const CubinCache& cache) {
  parallel_for(compile_jobs.size(), request.jobs, [&](std::size_t i) {
    compile_jobs[i].outcome = compile_cached(
        cache, request.family->program(compile_jobs[i].config, request.shape, request.arch.sm));
  });
}

// Decides the fate of a row that reached the compile stage (or is audited after a budget prune).
// Returns the after-compile reason, empty when the compiled kernel fits.
std::string judge_compiled(PlanRow& row, const CompileJob& job, const PlanRequest& request,
                           bool* compile_failed) {
  *compile_failed = !job.outcome.compiled;
  if (*compile_failed) {
    row.compile_log = job.outcome.result.log;
    CompiledFigures figures;
    figures.compile_ms = job.outcome.result.compile_ms;
    figures.cached = job.outcome.from_cache;
    row.compiled = figures;
    return {};
  }
  row.compiled = figures_of(job, *row.budget, request);
  return after_compile_prune_reason(*row.compiled, *row.budget, request.arch, request.allow_spills);
}

// The rules (pruned_shape) and the budget (pruned_budget) stages of one config.
PlanRow judge_statically(const Config& config, const PlanRequest& request) {
  PlanRow row;
  row.config = config;
  row.reason = request.family->rules(config, request.shape);
  if (row.reason.empty() && request.family->trims != nullptr && !request.keep_trimmed) {
    row.reason = request.family->trims(config);
  }
  if (!row.reason.empty()) {
    row.fate = Fate::pruned_shape;
    return row;
  }
  if (request.family->arch_rules != nullptr) {
    row.reason = request.family->arch_rules(config, request.arch.sm);
    if (!row.reason.empty()) {
      row.fate = Fate::pruned_budget;  // the arch lacks what the config is for
      return row;
    }
  }
  row.budget = request.family->budget(config, request.shape);
  if (row.budget->min_blocks_per_sm > 0) {
    // ptxas holds registers to what the launch bound's blocks allow (it spills if it must).
    row.budget->registers_per_thread =
        std::min(row.budget->registers_per_thread,
                 registers_for_blocks(request.arch, row.budget->threads_per_block,
                                      row.budget->min_blocks_per_sm));
  }
  Occupancy occupancy;
  row.reason = budget_prune_reason(*row.budget, request.arch, &occupancy);
  row.budget_occupancy = occupancy;
  row.fate = row.reason.empty() ? Fate::survivor : Fate::pruned_budget;
  return row;
}

std::string first_log_line(const std::string& log);

// The fate of a row that reached the compile stage (or was audited after a budget prune).
void judge_after_compile(PlanRow& row, const CompileJob& job, const PlanRequest& request,
                         PlanResult& result) {
  bool compile_failed = false;
  const std::string after = judge_compiled(row, job, request, &compile_failed);
  if (row.fate == Fate::pruned_budget) {
    if (!compile_failed && after.empty()) {
      row.audit = AuditVerdict::false_prune;
      row.audit_note = "compiled: " + std::to_string(row.compiled->ptxas.registers) +
                       " registers, no spills, " + occupancy_words(row.compiled->occupancy);
      ++result.false_prunes;
    }
    return;
  }
  if (compile_failed) {
    row.fate = Fate::compile_failed;
    row.reason = "NVRTC: " + first_log_line(row.compile_log);
  } else if (!after.empty()) {
    row.fate = Fate::pruned_after_compile;
    row.reason = after;
    if (request.audit) {
      row.audit = AuditVerdict::false_keep;
      row.audit_note = after;
      ++result.false_keeps;
    }
  } else {
    row.reason = occupancy_words(row.compiled->occupancy);
  }
}

std::string first_log_line(const std::string& log) {
  for (std::size_t start = 0; start < log.size();) {
    const std::size_t end = log.find('\n', start);
    std::string line = log.substr(start, end == std::string::npos ? end : end - start);
    if (line.find("error") != std::string::npos) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return log.substr(0, log.find('\n'));
}

}  // namespace

std::string_view to_string(Fate fate) {
  switch (fate) {
    case Fate::pruned_shape:
      return "pruned_shape";
    case Fate::pruned_budget:
      return "pruned_budget";
    case Fate::compile_failed:
      return "compile_failed";
    case Fate::pruned_after_compile:
      return "pruned_after_compile";
    case Fate::survivor:
      return "survivor";
  }
  return "unknown";
}

const Occupancy* PlanRow::shown_occupancy() const {
  if (compiled && compiled->succeeded) return &compiled->occupancy;
  return budget_occupancy ? &*budget_occupancy : nullptr;
}

int PlanResult::count(Fate fate) const {
  int total = fate == Fate::pruned_shape ? static_cast<int>(narrowed_members()) : 0;
  for (const PlanRow& row : rows) total += row.fate == fate ? 1 : 0;
  return total;
}

long long PlanResult::narrowed_members() const {
  long long total = 0;
  for (const NarrowedValue& value : narrowed) total += value.members;
  return total;
}

namespace {
// A launch bound that promises more resident blocks than the other resources allow only costs
// registers: the config is pruned with the limit that breaks the promise.
std::string launch_bound_reason(const StaticBudget& budget, const Occupancy& occupancy,
                                const Arch& arch) {
  if (budget.min_blocks_per_sm <= 0 || occupancy.blocks_per_sm >= budget.min_blocks_per_sm) {
    return {};
  }
  return "launch bound asks for " + std::to_string(budget.min_blocks_per_sm) + " blocks per SM; " +
         to_string(occupancy.limiter) + " allow " + std::to_string(occupancy.blocks_per_sm) +
         " on " + arch.name;
}
}  // namespace

std::string budget_prune_reason(const StaticBudget& budget, const Arch& arch,
                                Occupancy* occupancy) {
  *occupancy =
      compute_occupancy(arch, BlockResources{budget.threads_per_block, budget.registers_per_thread,
                                             budget.smem_bytes_per_block});
  if (budget.smem_bytes_per_block > arch.max_smem_per_block_optin_bytes) {
    return "shared memory " + bytes(budget.smem_bytes_per_block) + " > " +
           bytes(arch.max_smem_per_block_optin_bytes) + " per block on " + arch.name;
  }
  if (budget.registers_per_thread > arch.max_regs_per_thread) {
    return "estimated " + std::to_string(budget.registers_per_thread) + " registers/thread > " +
           std::to_string(arch.max_regs_per_thread);
  }
  if (budget.threads_per_block > arch.max_threads_per_block) {
    return std::to_string(budget.threads_per_block) + " threads/block > " +
           std::to_string(arch.max_threads_per_block) + " on " + arch.name;
  }
  if (occupancy->blocks_per_sm == 0) {
    return "0 resident blocks per SM: " + to_string(occupancy->limiter) + " (" +
           occupancy->launch_failure + ")";
  }
  return launch_bound_reason(budget, *occupancy, arch);
}

std::string after_compile_prune_reason(const CompiledFigures& figures, const StaticBudget& budget,
                                       const Arch& arch, bool allow_spills) {
  const PtxasReport& ptxas = figures.ptxas;
  if (ptxas.spill_bytes() > 0 && !allow_spills) {
    return "ptxas spills " + bytes(ptxas.spill_bytes()) + " (stores " +
           bytes(ptxas.spill_store_bytes) + ", loads " + bytes(ptxas.spill_load_bytes) +
           "; --allow-spills keeps it)";
  }
  const long long registers = 1LL * ptxas.registers * budget.threads_per_block;
  if (registers > arch.regs_per_sm) {
    return "ptxas " + std::to_string(ptxas.registers) + " registers x " +
           std::to_string(budget.threads_per_block) + " threads = " + std::to_string(registers) +
           " > " + std::to_string(arch.regs_per_sm) + " registers per SM on " + arch.name;
  }
  const long long smem = 1LL * ptxas.static_smem_bytes + budget.smem_bytes_per_block;
  if (smem > arch.max_smem_per_block_optin_bytes) {
    return "shared memory " + bytes(smem) + " (static " + bytes(ptxas.static_smem_bytes) +
           " + dynamic " + bytes(budget.smem_bytes_per_block) + ") > " +
           bytes(arch.max_smem_per_block_optin_bytes) + " per block on " + arch.name;
  }
  if (figures.occupancy.blocks_per_sm == 0) {
    return "0 resident blocks per SM after compile: " + to_string(figures.occupancy.limiter) +
           " (" + figures.occupancy.launch_failure + ")";
  }
  return launch_bound_reason(budget, figures.occupancy, arch);
}

PlanResult plan(const PlanRequest& request, const CubinCache& cache) {
  const Family& family = *request.family;
  const std::vector<Parameter>& space = family.space();
  PlanResult result;
  result.family = family.name;
  result.shape = request.shape;
  result.arch = request.arch;
  result.audited = request.audit;

  // Shape and budget stages: no compile yet. Values the shape rules out alone are one fate each.
  NarrowedSpace narrowed = narrow_space(family, request.shape);
  result.narrowed = std::move(narrowed.narrowed);
  std::vector<std::string> keys;
  for (const Config& config : cross_product(narrowed.kept)) {
    std::string key = compile_key(config, space);
    if (request.keep && !request.keep(key)) continue;
    keys.push_back(std::move(key));
    result.rows.push_back(judge_statically(config, request));
  }

  // One compile per compile key among the rows that need one.
  std::vector<CompileJob> jobs;
  std::map<std::string, std::size_t> job_of_key;
  std::vector<std::optional<std::size_t>> row_job(result.rows.size());
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    const PlanRow& row = result.rows[i];
    const bool needs_compile =
        row.fate == Fate::survivor ||
        (request.audit && row.fate == Fate::pruned_budget && row.budget.has_value());
    if (!needs_compile) continue;
    const auto [entry, inserted] = job_of_key.emplace(keys[i], jobs.size());
    if (inserted) jobs.push_back(CompileJob{row.config, {}});
    row_job[i] = entry->second;
  }
  std::future<void> meanwhile;  // its destructor waits for it, should the compiles throw
  if (request.while_compiling) {
    std::vector<bool> decided(result.rows.size());
    for (std::size_t i = 0; i < decided.size(); ++i) decided[i] = !row_job[i].has_value();
    meanwhile = std::async(std::launch::async, [&request, &result, decided = std::move(decided)] {
      request.while_compiling(result, decided);
    });
  }
  run_compiles(jobs, request, cache);  // reads the rows' configs only: `result` stays as it is
  if (meanwhile.valid()) meanwhile.get();
  result.compile_keys = static_cast<int>(jobs.size());
  for (const CompileJob& job : jobs) result.compiles_done += job.outcome.from_cache ? 0 : 1;

  // Compile stages, and the audit's verdicts.
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    if (row_job[i]) judge_after_compile(result.rows[i], jobs[*row_job[i]], request, result);
  }
  return result;
}

Arch plan_arch(std::string_view name, std::vector<ArchDisagreement>* disagreements) {
  Arch arch = arch_by_name(name);
  if (!cuda::gpu_available()) return arch;
  const cuda::DeviceInfo device = cuda::device_info(0);
  if (device.arch_sm() != arch.sm) return arch;
  return arch_from_device(0, disagreements);
}

}  // namespace tuner
