// `tuner diff`: two sets of per-batch results compared against the noise and a threshold.
#include <algorithm>
#include <cstdio>
#include <map>

#include "tuner/report.hpp"
#include "tuner/report_format.hpp"

namespace tuner::report {

const char* to_string(DiffVerdict verdict) noexcept {
  switch (verdict) {
    case DiffVerdict::slower_beyond_threshold:
      return "SLOWER (regression)";
    case DiffVerdict::slower_within_threshold:
      return "slower, within threshold";
    case DiffVerdict::faster:
      return "faster";
    case DiffVerdict::unchanged:
      return "unchanged (within noise)";
    case DiffVerdict::only_old:
      return "only in old run";
    case DiffVerdict::only_new:
      return "only in new run";
  }
  return "?";
}

Diff diff_results(const std::vector<BatchResult>& old_results,
                  const std::vector<BatchResult>& new_results, double threshold_rel) {
  std::map<std::pair<SeriesKey, int>, DiffRow> rows;
  for (const BatchResult& result : old_results) {
    DiffRow& row = rows[{result.key, result.batch}];
    row.key = result.key;
    row.batch = result.batch;
    row.old_result = result;
  }
  for (const BatchResult& result : new_results) {
    DiffRow& row = rows[{result.key, result.batch}];
    row.key = result.key;
    row.batch = result.batch;
    row.new_result = result;
  }
  Diff diff;
  diff.threshold_rel = threshold_rel;
  for (auto& [where, row] : rows) {
    if (!row.new_result) {
      row.verdict = DiffVerdict::only_old;
    } else if (!row.old_result) {
      row.verdict = DiffVerdict::only_new;
    } else {
      ++diff.common;
      row.change_rel = row.new_result->median_us / row.old_result->median_us - 1.0;
      row.noise_rel =
          std::max({row.old_result->noise_rel, row.new_result->noise_rel, db::kNoiseFloorRel});
      row.winner_changed = row.old_result->params_json != row.new_result->params_json;
      if (row.change_rel > row.noise_rel) {
        row.verdict = row.change_rel > threshold_rel ? DiffVerdict::slower_beyond_threshold
                                                     : DiffVerdict::slower_within_threshold;
      } else if (row.change_rel < -row.noise_rel) {
        row.verdict = DiffVerdict::faster;
      } else {
        row.verdict = DiffVerdict::unchanged;
      }
    }
    diff.regression = diff.regression || row.verdict == DiffVerdict::slower_beyond_threshold;
    diff.rows.push_back(std::move(row));
  }
  return diff;
}

std::string render_diff_table(const Diff& diff) {
  std::string text;
  const SeriesKey* current = nullptr;
  for (const DiffRow& row : diff.rows) {
    if (current == nullptr || !(*current == row.key)) {
      current = &row.key;
      text += describe(row.key) + "\n";
      char header[256];
      std::snprintf(header, sizeof header, "  %6s  %-28s %-28s %9s %9s %8s %6s  %s\n", "batch",
                    "old winner", "new winner", "old_us", "new_us", "change", "noise", "verdict");
      text += header;
    }
    const auto params = [](const std::optional<BatchResult>& result) {
      return result ? compact_params(result->params_json) : std::string("-");
    };
    const auto time = [](const std::optional<BatchResult>& result) {
      return result ? fixed(result->median_us, 2) : std::string("-");
    };
    const bool both = row.old_result && row.new_result;
    char line[512];
    std::snprintf(line, sizeof line, "  %6d  %-28s %-28s %9s %9s %8s %6s  %s%s\n", row.batch,
                  params(row.old_result).c_str(), params(row.new_result).c_str(),
                  time(row.old_result).c_str(), time(row.new_result).c_str(),
                  (both ? (row.change_rel >= 0 ? "+" : "") + fixed(row.change_rel * 100.0, 1) + "%"
                        : std::string("-"))
                      .c_str(),
                  both ? percent(row.noise_rel).c_str() : "-", to_string(row.verdict),
                  row.winner_changed ? "; winner changed" : "");
    text += line;
  }
  return text;
}

}  // namespace tuner::report
