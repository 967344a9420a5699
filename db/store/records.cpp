#include "db/store/records.hpp"

#include <array>
#include <utility>

#include "db/sqlite/error.hpp"

namespace tuner::db {
namespace {

template <class Enum, std::size_t N>
Enum parse(std::string_view text, const std::array<std::pair<Enum, const char*>, N>& names,
           const char* what) {
  std::string accepted;
  for (const auto& [value, name] : names) {
    if (text == name) return value;
    accepted += (accepted.empty() ? "" : ", ") + std::string(name);
  }
  throw DbInputError("unknown " + std::string(what) + " '" + std::string(text) + "': use one of " +
                     accepted);
}

template <class Enum, std::size_t N>
const char* name_of(Enum value, const std::array<std::pair<Enum, const char*>, N>& names) {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "unknown";
}

constexpr std::array kRunKinds = {std::pair{RunKind::plan, "plan"},
                                  std::pair{RunKind::sweep, "sweep"}};

constexpr std::array kFates = {
    std::pair{Fate::pruned_shape, "pruned_shape"},
    std::pair{Fate::pruned_budget, "pruned_budget"},
    std::pair{Fate::compile_failed, "compile_failed"},
    std::pair{Fate::pruned_after_compile, "pruned_after_compile"},
    std::pair{Fate::survivor, "survivor"},
    std::pair{Fate::wrong_result, "wrong_result"},
    std::pair{Fate::fault, "fault"},
    std::pair{Fate::transient, "transient"},
    std::pair{Fate::measured, "measured"},
    std::pair{Fate::skipped_by_search, "skipped_by_search"},
};

constexpr std::array kStages = {std::pair{Stage::plan, "plan"},
                                std::pair{Stage::measure, "measure"},
                                std::pair{Stage::retime, "retime"}};

constexpr std::array kDecisions = {std::pair{Decision::tuned, "tuned"},
                                   std::pair{Decision::default_kept, "default_kept"}};

}  // namespace

const char* to_string(RunKind kind) noexcept { return name_of(kind, kRunKinds); }
const char* to_string(Fate fate) noexcept { return name_of(fate, kFates); }
const char* to_string(Stage stage) noexcept { return name_of(stage, kStages); }
const char* to_string(Decision decision) noexcept { return name_of(decision, kDecisions); }

RunKind parse_run_kind(std::string_view text) { return parse(text, kRunKinds, "run kind"); }
Fate parse_fate(std::string_view text) { return parse(text, kFates, "fate"); }
Stage parse_stage(std::string_view text) { return parse(text, kStages, "stage"); }
Decision parse_decision(std::string_view text) { return parse(text, kDecisions, "decision"); }

MeasureKey TrialRecord::measure_key() const {
  return MeasureKey{problem_id,
                    params_json,
                    source_hash,
                    budget_arch,
                    measured_arch.value_or(""),
                    device_name.value_or(""),
                    measure_env};
}

}  // namespace tuner::db
