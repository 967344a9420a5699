// A report as Markdown (`tuner report`'s file) and as a few lines for the terminal.
#include <cstdio>
#include <string>

#include "tuner/report.hpp"
#include "tuner/report_format.hpp"

namespace tuner::report {

namespace {

std::string decision_text(const BatchResult& result) {
  return result.decision ? db::to_string(*result.decision) : "-";
}

std::string runs_section(const Report& report) {
  std::string md =
      "## Runs\n\n| run | kind | started | GPU | measured arch | budget arch | copy GB/s | command "
      "|\n";
  md += "|---:|---|---|---|---|---|---:|---|\n";
  for (const db::RunInfo& run : report.runs) {
    md += "| " + std::to_string(run.id) + " | " + db::to_string(run.kind) + " | " + run.started_at +
          " | " + run.gpu_name.value_or("-") + " | " + run.measured_arch.value_or("-") + " | " +
          run.budget_arch + " | " +
          (run.copy_bandwidth_gbs ? fixed(*run.copy_bandwidth_gbs, 0) : "-") + " | `" +
          run.command_line + "` |\n";
  }
  return md;
}

std::string winners_table(const SeriesReport& series) {
  std::string md =
      "| batch | winner | winner µs | default µs | speedup | decision | run | GB/s | of copy "
      "bandwidth | reason |\n";
  md += "|---:|---|---:|---:|---:|---|---:|---:|---:|---|\n";
  for (const BatchResult& result : series.results) {
    md += "| " + std::to_string(result.batch) + " | `" + compact_params(result.params_json) +
          "` | " + fixed(result.median_us, 2) + " | " + optional_us(result.default_median_us) +
          " | " + (result.speedup_vs_default ? fixed(*result.speedup_vs_default, 2) + "x" : "-") +
          " | " + decision_text(result) + " | " + std::to_string(result.run_id) + " | " +
          (result.achieved_gbs ? fixed(*result.achieved_gbs, 0) : "-") + " | " +
          (result.copy_bandwidth_fraction ? percent(*result.copy_bandwidth_fraction) : "-") +
          " | " + result.reason + " |\n";
  }
  return md;
}

std::string dimension_table(const SeriesReport& series, const DimensionTable& table) {
  std::string md = "\n**" + table.name + "**\n\n| batch | best µs | configs |";
  for (int value : table.values) md += " " + table.name + "=" + std::to_string(value) + " |";
  md += "\n|---:|---:|---:|";
  for (std::size_t v = 0; v < table.values.size(); ++v) md += "---:|";
  md += "\n";
  for (std::size_t b = 0; b < series.batches.size(); ++b) {
    md += "| " + std::to_string(series.batches[b]) + " | " + fixed(series.best_us[b], 2) + " | " +
          std::to_string(series.measured_configs[b]) + " |";
    for (const std::optional<double>& relative : table.relative[b]) {
      md += ' ';
      md += relative ? fixed(*relative, 2) : std::string("-");
      md += " |";
    }
    md += "\n";
  }
  return md;
}

std::string series_section(const SeriesReport& series) {
  const std::string slug = series_slug(series.key);
  std::string md = "\n## " + describe(series.key) + "\n\n### Winners\n\n" + winners_table(series);
  if (!series.results.empty() && series.results.front().default_params_json) {
    md += "\nDefault config: `" + compact_params(*series.results.front().default_params_json) +
          "`.\n";
  }
  md += "\n### Each dimension: best time at each value relative to the best config (1.00 = best)\n";
  for (const DimensionTable& table : series.dimensions) md += dimension_table(series, table);
  md += "\n### Plots\n\n![time vs batch](time_vs_batch_";
  md += slug;
  md += ".png)\n\n![relative time per config and batch](heatmap_";
  md += slug;
  md += ".png)\n";
  return md;
}

std::string pruning_section(const Report& report) {
  std::string md =
      "\n## Pruning and outcomes (" + std::to_string(report.pruning.trials) + " trials)\n\n";
  md += "| stage | fate | count |\n|---|---|---:|\n";
  for (const FateCount& fate : report.pruning.fates) {
    md += std::string("| ") + db::to_string(fate.stage) + " | " + db::to_string(fate.fate) + " | " +
          std::to_string(fate.count) + " |\n";
  }
  md += "\n| stage | fate | reason | count |\n|---|---|---|---:|\n";
  for (const ReasonCount& reason : report.pruning.reasons) {
    md += std::string("| ") + db::to_string(reason.stage) + " | " + db::to_string(reason.fate) +
          " | " + (reason.reason.empty() ? "(none)" : reason.reason) + " | " +
          std::to_string(reason.count) + " |\n";
  }
  return md;
}

}  // namespace

std::string render_markdown(const Report& report) {
  std::string md = "# Tuning report\n\n";
  md += "DB `" + report.db_path + "`; scope: " +
        (report.scope.run_id ? "run " + std::to_string(*report.scope.run_id)
                             : std::string("all runs (current winners, latest trial per config)")) +
        (report.scope.family ? "; family " + *report.scope.family : std::string()) + ".\n\n";
  md += runs_section(report);
  for (const SeriesReport& series : report.series) md += series_section(series);
  md += pruning_section(report);
  return md;
}

std::string render_summary(const Report& report) {
  std::string text =
      "report: " + report.db_path +
      (report.scope.run_id ? ", run " + std::to_string(*report.scope.run_id) : ", all runs") +
      ", " + std::to_string(report.series.size()) + " series, " +
      std::to_string(report.pruning.trials) + " trials\n";
  for (const SeriesReport& series : report.series) {
    text += describe(series.key) + "\n";
    text +=
        "   batch  winner                          winner_us  default_us  speedup  of_copy_bw\n";
    for (const BatchResult& result : series.results) {
      char line[256];
      std::snprintf(
          line, sizeof line, "  %6d  %-30s  %9.2f  %10s  %7s  %10s\n", result.batch,
          compact_params(result.params_json).c_str(), result.median_us,
          optional_us(result.default_median_us).c_str(),
          (result.speedup_vs_default ? fixed(*result.speedup_vs_default, 2) + "x"
                                     : std::string("-"))
              .c_str(),
          result.copy_bandwidth_fraction ? percent(*result.copy_bandwidth_fraction).c_str() : "-");
      text += line;
    }
    // Which value of each dimension is the best, at how many batches: "is 8 warps ever better?"
    for (const DimensionTable& table : series.dimensions) {
      if (table.values.size() < 2) continue;
      text += "  " + table.name + ": best at";
      for (std::size_t v = 0; v < table.values.size(); ++v) {
        int best_at = 0;
        for (const auto& row : table.relative) best_at += row[v] && *row[v] <= 1.0 ? 1 : 0;
        text += ' ';
        text += std::to_string(table.values[v]) + " -> " + std::to_string(best_at) + "/" +
                std::to_string(series.batches.size()) + (v + 1 < table.values.size() ? "," : "");
      }
      text += " batches\n";
    }
  }
  text += "fates:";
  for (const FateCount& fate : report.pruning.fates) {
    text += std::string(" ") + db::to_string(fate.stage) + "/" + db::to_string(fate.fate) + " " +
            std::to_string(fate.count);
  }
  text += "\n";
  return text;
}

}  // namespace tuner::report
