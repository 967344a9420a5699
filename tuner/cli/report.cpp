// `tuner report` (report.md and PNG plots from a tuning DB) and `tuner diff` (two runs side by
// side per batch; exit 1 when a winner got slower beyond the noise and the threshold).
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/worker_process.hpp"
#include "db/store/shards.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/report.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace tuner::cli {

namespace {

constexpr int kPlotScriptNoMatplotlib = 3;  // scripts/plot_report.py's exit code for that case

// Opens an existing store; a missing or unusable file is the user's input error (exit 2).
db::Store open_existing(const std::string& path) {
  if (path.empty()) throw InputError("--db is empty: pass the tuning DB that `tuner sweep` wrote");
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    throw InputError("--db " + path +
                     ": no such file; pass the tuning DB that `tuner sweep --db` wrote");
  }
  try {
    return db::Store::open_read_only(path);  // a report never writes the DB it reads
  } catch (const db::DbInputError& failure) {
    throw InputError(std::string("--db ") + path + ": " + failure.what());
  } catch (const db::DbError& failure) {
    throw InputError(std::string("--db ") + path + ": " + failure.what());
  }
}

std::int64_t parse_run_id(const std::string& text, const std::string& option) {
  return parse_positive_int(text, option);
}

// --plot-script, else $TUNER_PLOT_SCRIPT, else scripts/plot_report.py in the source tree found
// from the executable: an ancestor that holds it, or the CMakeCache.txt of the build tree.
std::optional<fs::path> find_plot_script(const std::string& given) {
  if (!given.empty()) return fs::path(given);
  if (const char* env = std::getenv("TUNER_PLOT_SCRIPT"); env != nullptr && *env != '\0') {
    return fs::path(env);
  }
  const fs::path relative = fs::path("scripts") / "plot_report.py";
  std::error_code error;
  for (fs::path dir = fs::path(self_executable()).parent_path(); !dir.empty();
       dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / relative, error)) return dir / relative;
    std::ifstream cache(dir / "CMakeCache.txt");
    const std::string key = "CMAKE_HOME_DIRECTORY:INTERNAL=";
    for (std::string line; std::getline(cache, line);) {
      if (line.rfind(key, 0) == 0 &&
          fs::is_regular_file(fs::path(line.substr(key.size())) / relative, error)) {
        return fs::path(line.substr(key.size())) / relative;
      }
    }
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

// Runs `python3 args...`; returns its exit status, 127 when python3 could not be started.
int run_python(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::vector<std::string> all{"python3"};
  all.insert(all.end(), args.begin(), args.end());
  argv.reserve(all.size() + 1);
  for (std::string& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork for python3 failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::execvp("python3", argv.data());
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw std::runtime_error(std::string("waitpid(python3) failed: ") + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Returns the exit code's contribution: 0 when plotted or when plotting is impossible here
// (python3/matplotlib/script missing: a warning), 1 when the script failed.
int make_plots(const std::string& script_option, const std::string& db_path, const fs::path& out,
               const report::ReportScope& scope) {
  const std::optional<fs::path> script = find_plot_script(script_option);
  if (!script || !fs::is_regular_file(*script)) {
    std::fprintf(stderr,
                 "tuner report: warning: no plots: scripts/plot_report.py not found%s; pass "
                 "--plot-script PATH or set TUNER_PLOT_SCRIPT (report.md is written)\n",
                 script ? (" at " + script->string()).c_str() : "");
    return 0;
  }
  std::vector<std::string> args{script->string(), "--db", db_path, "--out", out.string()};
  if (scope.run_id) args.insert(args.end(), {"--run", std::to_string(*scope.run_id)});
  if (scope.family) args.insert(args.end(), {"--family", *scope.family});
  const int status = run_python(args);
  if (status == 127) {
    std::fprintf(stderr,
                 "tuner report: warning: no plots: python3 was not found on PATH; install python3 "
                 "and python3-matplotlib (report.md is written)\n");
    return 0;
  }
  if (status == kPlotScriptNoMatplotlib) {
    std::fprintf(stderr,
                 "tuner report: warning: no plots: python3 has no matplotlib; install "
                 "python3-matplotlib (report.md is written)\n");
    return 0;
  }
  if (status != 0) {
    std::fprintf(stderr, "tuner report: error: %s exited with status %d (report.md is written)\n",
                 script->c_str(), status);
    return 1;
  }
  return 0;
}

// "3%", "3" (percent) or "0.5%" -> 0.03 / 0.005.
double parse_threshold(const std::string& text) {
  std::string number = text;
  if (!number.empty() && number.back() == '%') number.pop_back();
  char* end = nullptr;
  errno = 0;
  const double value = number.empty() ? -1.0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end == nullptr || *end != '\0' || errno != 0 || !(value >= 0.0) ||
      value > 1000.0) {
    throw InputError("--threshold '" + text + "' is not a percentage: pass e.g. 3% (0 to 1000)");
  }
  return value / 100.0;
}

struct RunRef {
  const db::Store* store;
  std::int64_t run_id;
};

std::vector<db::RunInfo> sweep_runs(const db::Store& store) {
  std::vector<db::RunInfo> sweeps;
  for (const db::RunInfo& run : store.runs()) {
    if (run.kind == db::RunKind::sweep) sweeps.push_back(run);
  }
  return sweeps;
}

std::int64_t latest_sweep(const db::Store& store) {
  const std::vector<db::RunInfo> sweeps = sweep_runs(store);
  if (sweeps.empty()) {
    throw InputError("tuning DB " + store.path() +
                     " holds no sweep run: diff compares sweeps (`tuner sweep --db " +
                     store.path() + "`)");
  }
  return sweeps.back().id;
}

std::vector<report::BatchResult> results_of(const RunRef& ref,
                                            const std::optional<std::string>& family) {
  std::vector<report::BatchResult> results = report::run_results(*ref.store, ref.run_id, family);
  if (results.empty()) {
    throw InputError("run " + std::to_string(ref.run_id) + " of " + ref.store->path() +
                     " has no winners and no measured trials" +
                     (family ? " of family " + *family : std::string()) +
                     " (a plan run, an empty resumed sweep, or trials replaced by a later --force "
                     "sweep): pick another run with --runs");
  }
  return results;
}

// The store's input errors (unknown run, newer file) become the CLI's: exit 2.
template <class Body>
int mapping_db_input_errors(Body body) {
  try {
    return body();
  } catch (const db::DbInputError& error) {
    throw InputError(error.what());
  }
}

int report_command(const Args& args) {
  std::string db_path;
  std::string family;
  std::string run_text;
  std::string out_dir = "report";
  std::string plot_script;
  po::options_description options("report options");
  options.add_options()("db", po::value(&db_path)->required(), "the tuning DB (SQLite)")(
      "family", po::value(&family), "only this kernel family")(
      "run", po::value(&run_text), "only this run's winners and trials (default: the whole DB)")(
      "out", po::value(&out_dir)->default_value(out_dir), "directory for report.md and the PNGs")(
      "plot-script", po::value(&plot_script),
      "scripts/plot_report.py (default: $TUNER_PLOT_SCRIPT, else found from the executable)");
  if (!parse_or_help("report", "--db FILE [--family F] [--run ID] [--out DIR]", options, args)) {
    return 0;
  }
  report::ReportScope scope;
  if (!family.empty()) scope.family = family;
  if (!run_text.empty()) scope.run_id = parse_run_id(run_text, "run");
  const db::Store store = open_existing(db_path);
  const report::Report report = report::build_report(store, scope);
  const fs::path out(out_dir);
  std::error_code error;
  fs::create_directories(out, error);
  if (error || !fs::is_directory(out)) {
    throw InputError("--out " + out_dir + ": cannot create the directory (" + error.message() +
                     "); pass a writable path");
  }
  const fs::path markdown = out / "report.md";
  {
    std::ofstream file(markdown);
    file << report::render_markdown(report);
    if (!file.flush()) throw InputError("--out " + out_dir + ": cannot write " + markdown.string());
  }
  std::printf("%s", report::render_summary(report).c_str());
  std::printf("wrote %s\n", markdown.c_str());
  return make_plots(plot_script, db_path, out, scope);
}

// The two runs diff compares: --runs OLD,NEW, else the latest sweep of each of two DBs, else the
// last two sweeps of one.
std::pair<RunRef, RunRef> runs_to_compare(const db::Store& old_store, const db::Store& new_store,
                                          bool two_dbs, const std::string& runs_text) {
  RunRef old_ref{&old_store, 0};
  RunRef new_ref{&new_store, 0};
  if (!runs_text.empty()) {
    const std::vector<int> ids = parse_int_list(runs_text, "runs");
    if (ids.size() != 2) throw InputError("--runs '" + runs_text + "' needs two run ids: OLD,NEW");
    old_ref.run_id = ids[0];
    new_ref.run_id = ids[1];
  } else if (two_dbs) {
    old_ref.run_id = latest_sweep(old_store);
    new_ref.run_id = latest_sweep(new_store);
  } else {
    const std::vector<db::RunInfo> sweeps = sweep_runs(old_store);
    if (sweeps.size() < 2) {
      throw InputError("tuning DB " + old_store.path() + " holds " + std::to_string(sweeps.size()) +
                       " sweep run(s); diff needs two: pass a second --db, or --runs OLD,NEW");
    }
    old_ref.run_id = sweeps[sweeps.size() - 2].id;
    new_ref.run_id = sweeps.back().id;
  }
  return {old_ref, new_ref};
}

int diff_command(const Args& args) {
  std::vector<std::string> db_paths;
  std::string runs_text;
  std::string threshold_text = "3%";
  std::string family;
  po::options_description options("diff options");
  options.add_options()("db", po::value(&db_paths)->required()->composing(),
                        "the tuning DB; give it twice to compare the latest sweep of each")(
      "runs", po::value(&runs_text),
      "OLD,NEW run ids (default: the last two sweeps of one DB; with two DBs OLD is in the first)")(
      "threshold", po::value(&threshold_text)->default_value(threshold_text),
      "a winner slower by more than this (and the noise) is a regression: exit 1")(
      "family", po::value(&family), "only this kernel family");
  if (!parse_or_help("diff", "--db A [--db B] [--runs OLD,NEW] [--threshold 3%]", options, args)) {
    return 0;
  }
  if (db_paths.size() > 2)
    throw InputError("--db given " + std::to_string(db_paths.size()) +
                     " times: diff compares one or two DBs");
  const double threshold = parse_threshold(threshold_text);
  const std::optional<std::string> family_filter =
      family.empty() ? std::nullopt : std::optional<std::string>(family);
  const db::Store old_store = open_existing(db_paths.front());
  std::optional<db::Store> second;
  if (db_paths.size() == 2) second.emplace(open_existing(db_paths.back()));
  const db::Store& new_store = second ? *second : old_store;

  const auto [old_ref, new_ref] =
      runs_to_compare(old_store, new_store, second.has_value(), runs_text);
  // A merged store (it holds shard runs) is compared by its winners: its runs each hold a slice.
  auto results_for = [&](const RunRef& ref) {
    if (second && runs_text.empty() && !db::shard_records(*ref.store).empty()) {
      return report::winner_results(*ref.store, family_filter);
    }
    return results_of(ref, family_filter);
  };
  const report::Diff diff =
      report::diff_results(results_for(old_ref), results_for(new_ref), threshold);
  std::printf("diff: run %lld of %s -> run %lld of %s; threshold %.1f%%\n",
              static_cast<long long>(old_ref.run_id), old_store.path().c_str(),
              static_cast<long long>(new_ref.run_id), new_store.path().c_str(), threshold * 100.0);
  std::printf("%s", report::render_diff_table(diff).c_str());
  if (diff.common == 0) {
    throw InputError(
        "the two runs share no (shape, budget arch, device, batch): nothing to compare");
  }
  int regressions = 0;
  for (const report::DiffRow& row : diff.rows) {
    regressions += row.verdict == report::DiffVerdict::slower_beyond_threshold ? 1 : 0;
  }
  std::printf("%d of %d batches slower beyond the noise and the %.1f%% threshold\n", regressions,
              diff.common, threshold * 100.0);
  return diff.regression ? 1 : 0;
}

}  // namespace

int run_report(const Args& args) {
  return mapping_db_input_errors([&] { return report_command(args); });
}

int run_diff(const Args& args) {
  return mapping_db_input_errors([&] { return diff_command(args); });
}

}  // namespace tuner::cli
