// The batch search replayed over an oracle sweep's screens, on this machine: no GPU. An oracle
// (`tuner sweep --search-margin 1000 --search-keep 100000`, every config screened at every batch)
// stands in for the GPU: the search (tuner/batch_search.hpp) runs over the oracle's batches with
// the policy given, each pick "measured" by looking up the oracle's screen medians, and each
// batch's searched best is compared with the oracle's best screen there. It shows what a policy
// change buys and costs (regret, screens) before a device call; the device's regret check
// (scripts/regret.py) stays the verdict. Configs the oracle measured once as another config's
// launch (skipped_by_search: "the same launch as ...") take that config's median.
//
// Usage: tuner_search_replay ORACLE_DB [VALUE_MARGIN_PCT]   (default: the policy's; 0: off)
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "db/sqlite/sqlite.hpp"
#include "tuner/batch_search.hpp"

namespace {

using tuner::db::Connection;
using tuner::db::OpenMode;

struct Oracle {
  std::map<int, std::map<std::string, double>> median_us;  // batch -> params -> screen median
  tuner::ConfigGroups groups;                              // params -> compile key
};

// "the same launch as a=1 b=2 at this batch ..." -> {"a":1,"b":2} (canonical: sorted keys).
std::string twin_params(const std::string& reason) {
  const std::string lead = "the same launch as ";
  if (reason.rfind(lead, 0) != 0) return {};
  std::istringstream words(reason.substr(lead.size()));
  tuner::Config config;
  for (std::string word; words >> word && word != "at";) {
    const auto equals = word.find('=');
    if (equals == std::string::npos) return {};
    config.values.emplace_back(word.substr(0, equals), std::stoi(word.substr(equals + 1)));
  }
  return tuner::to_json(config);  // the store's canonical params text
}

Oracle read_oracle(const char* path) {
  const Connection db = Connection::open(path, OpenMode::read_only);
  auto rows = db.prepare(
      "SELECT p.batch, t.params_json, t.compile_key, t.fate, t.median_us, t.reason FROM trials t "
      "JOIN problems p ON p.id = t.problem_id WHERE t.stage = 'measure' ORDER BY t.id");
  Oracle oracle;
  std::vector<std::tuple<int, std::string, std::string>> twins;  // batch, params, twin
  while (rows.step()) {
    const int batch = static_cast<int>(rows.column_int64(0));
    const std::string params = rows.column_text(1);
    if (!rows.is_null(2)) oracle.groups[params] = rows.column_text(2);
    const std::string fate = rows.column_text(3);
    if (fate == "measured") oracle.median_us[batch][params] = rows.column_double(4);
    if (fate == "skipped_by_search")
      twins.emplace_back(batch, params, twin_params(rows.column_text(5)));
  }
  for (const auto& [batch, params, twin] : twins) {
    const auto& at = oracle.median_us[batch];
    if (const auto found = at.find(twin); found != at.end()) {
      oracle.median_us[batch][params] = found->second;
    }
  }
  return oracle;
}

double best_of(const std::map<std::string, double>& medians) {
  double best = 1e30;
  for (const auto& [params, median] : medians) best = std::min(best, median);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tuner_search_replay ORACLE_DB [VALUE_MARGIN_PCT]\n");
    return 2;
  }
  const Oracle oracle = read_oracle(argv[1]);
  if (oracle.median_us.size() < 3) {
    std::fprintf(stderr, "%s: %zu batches with screens; an oracle needs at least 3\n", argv[1],
                 oracle.median_us.size());
    return 2;
  }
  tuner::SearchPolicy policy;
  if (argc > 2) policy.value_margin = std::atof(argv[2]) / 100.0;
  std::set<std::string> every;
  std::vector<int> batches;
  for (const auto& [batch, medians] : oracle.median_us) {
    batches.push_back(batch);
    for (const auto& [params, median] : medians) every.insert(params);
  }
  const std::vector<std::string> configs(every.begin(), every.end());
  std::map<int, std::pair<double, std::size_t>> searched;  // batch -> best median, measured
  const auto measure = [&](int batch, const tuner::BatchPick& pick, bool) {
    tuner::BatchOutcome outcome;
    const auto& at = oracle.median_us.at(batch);
    for (const std::string& params : pick.measure) {
      if (const auto found = at.find(params); found != at.end()) {
        outcome.timings.median_us[params] = found->second;
      }
    }
    searched[batch] = {best_of(outcome.timings.median_us), pick.measure.size()};
    return outcome;
  };
  const tuner::SearchRun run =
      tuner::run_batch_search(batches, configs, "", policy, false, measure, oracle.groups);
  std::printf("value margin %.0f %%; anchors:", 100.0 * policy.value_margin);
  for (const int anchor : run.anchors) std::printf(" %d", anchor);
  std::printf("\n batch  picked  oracle  searched_us  oracle_us  regret\n");
  double worst = 0.0;
  std::size_t picked_off_anchor = 0;
  for (const auto& [batch, result] : searched) {
    const auto& at = oracle.median_us.at(batch);
    const double regret = 100.0 * (result.first / best_of(at) - 1.0);
    worst = std::max(worst, regret);
    const bool anchor = std::binary_search(run.anchors.begin(), run.anchors.end(), batch);
    if (!anchor) picked_off_anchor += result.second;
    std::printf("%6d %7zu %7zu %12.2f %10.2f %6.2f%%%s\n", batch, result.second, at.size(),
                result.first, best_of(at), regret, anchor ? "  anchor" : "");
  }
  std::printf("worst regret %.2f %%; %zu configs picked off the anchors\n", worst,
              picked_off_anchor);
  return 0;
}
