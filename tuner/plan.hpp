#pragma once
// The planning engine: every member of a family's cross product gets exactly one fate and one
// reason a person can read (a parameter value the shape rules out alone once for all its members,
// tuner/narrowed_space.hpp), decided in order pruned_shape -> pruned_budget (static budgets against
// the Arch, before any compile) -> compile_failed -> pruned_after_compile (ptxas's real figures)
// -> survivor. Configs that differ only in launch-only parameters share one compile; compiles run
// on a thread pool through the on-disk cubin cache.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch.hpp"
#include "core/config.hpp"
#include "core/cubin_cache.hpp"
#include "core/family.hpp"
#include "core/nvrtc.hpp"
#include "core/occupancy.hpp"
#include "core/shape.hpp"
#include "tuner/narrowed_space.hpp"

namespace tuner {

enum class Fate { pruned_shape, pruned_budget, compile_failed, pruned_after_compile, survivor };

inline constexpr Fate kAllFates[] = {Fate::pruned_shape, Fate::pruned_budget, Fate::compile_failed,
                                     Fate::pruned_after_compile, Fate::survivor};

// "pruned_shape", "pruned_budget", "compile_failed", "pruned_after_compile", "survivor"
std::string_view to_string(Fate fate);

struct PlanResult;

struct PlanRequest {
  const Family* family = nullptr;
  Shape shape;                // canonical (Family::canonicalize)
  Arch arch;                  // the limits budgets are checked against
  bool allow_spills = false;  // keep configs whose ptxas report shows spills
  bool audit = false;         // also compile what the budget pruned and judge the static model
  bool keep_trimmed = false;  // leave the family's measured trims (Family::trims) out
  unsigned jobs = 0;          // compile threads; 0: all cores
  // A shard's slice (tuner/shard.hpp): configs whose compile key this rejects are left out of the
  // result. Empty: every config.
  std::function<bool(std::string_view compile_key)> keep;
  // Called once, on a thread of its own, while the compiles run: `partial` holds every row judged
  // statically, and decided[i] says that row i's fate is final (no compile will touch it). A
  // caller records those rows (and the narrowed values) meanwhile: a cold sweep's 1.2 M plan
  // rows took about as long to write as its compiles (BENCHMARKS.md section 7, twenty-eighth
  // session; 0.4 M since the narrowed values are one row each). Its exception
  // reaches plan()'s caller. Optional.
  std::function<void(const PlanResult& partial, const std::vector<bool>& decided)> while_compiling;
};

// The main kernel's figures after a compile.
struct CompiledFigures {
  bool succeeded = false;  // false: NVRTC rejected the source (ptxas and occupancy unset)
  PtxasReport ptxas;
  Occupancy occupancy;  // with ptxas's registers and static + dynamic shared memory
  double compile_ms = 0.0;
  bool cached = false;
};

// What an audit compile says about a budget decision.
enum class AuditVerdict {
  none,         // not audited, or the static model agreed with the compile
  false_prune,  // pruned_budget, but the compiled kernel fits every limit
  false_keep,   // kept by the budget, but over a limit after compile (pruned_after_compile)
};

struct PlanRow {
  Config config;
  Fate fate = Fate::survivor;
  std::string reason;  // why this fate; for survivors, their occupancy in words
  // Set from the budget stage on (absent for pruned_shape).
  std::optional<StaticBudget> budget;
  std::optional<Occupancy> budget_occupancy;  // with the estimated registers
  // Set when a compile ran for this row (always for compile_failed and later, and for audited
  // pruned_budget rows).
  std::optional<CompiledFigures> compiled;
  std::string compile_log;  // NVRTC's log, kept for compile_failed
  AuditVerdict audit = AuditVerdict::none;
  std::string audit_note;  // why the verdict, for the audit list

  // The occupancy to show: after compile when a compile ran, else the budget's.
  const Occupancy* shown_occupancy() const;
};

struct PlanResult {
  std::string family;
  Shape shape;
  Arch arch;
  // The values the family's value_rule rules out for the shape (fate pruned_shape), each standing
  // for its members; `rows` holds every other member.
  std::vector<NarrowedValue> narrowed;
  std::vector<PlanRow> rows;  // in cross-product order, one per member not narrowed
  int compile_keys = 0;       // distinct compiles the plan needed (audit ones included)
  int compiles_done = 0;      // of those, compiled now (not from the cache)
  bool audited = false;
  int false_prunes = 0;
  int false_keeps = 0;

  int count(Fate fate) const;  // members with this fate (narrowed ones are pruned_shape)
  long long narrowed_members() const;
  // The plan rows a store records: one per narrowed value, one per row.
  std::int64_t recorded_rows() const {
    return static_cast<std::int64_t>(narrowed.size() + rows.size());
  }
  long long members() const {  // the family's whole cross product, unless a shard's slice
    return static_cast<long long>(rows.size()) + narrowed_members();
  }
  int pruned_before_compile() const {
    return count(Fate::pruned_shape) + count(Fate::pruned_budget);
  }
};

// The budget stage alone: a reason when the config cannot run on `arch` by the static model,
// empty otherwise. `occupancy` receives the budget occupancy.
std::string budget_prune_reason(const StaticBudget& budget, const Arch& arch, Occupancy* occupancy);

// After compile: a reason when ptxas's figures rule the config out, empty otherwise.
std::string after_compile_prune_reason(const CompiledFigures& figures, const StaticBudget& budget,
                                       const Arch& arch, bool allow_spills);

// Plans request.family for request.shape. The one enumerate -> rules -> budget -> compile path
// (plan, check and bench all use it).
PlanResult plan(const PlanRequest& request, const CubinCache& cache);

}  // namespace tuner

namespace tuner {

// The Arch a plan for `name` checks against: the table entry, or, when GPU 0 has that compute
// capability, the device's own limits (`disagreements` lists where they differ from the table).
// Never requires a GPU. Throws InputError for an unknown arch name.
Arch plan_arch(std::string_view name, std::vector<ArchDisagreement>* disagreements);

}  // namespace tuner
