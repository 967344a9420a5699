// `tuner bench`: verify and time the default config (or, with --all, every survivor of the plan
// for this GPU) at a few batch sizes, with the bytes a call must move and the fraction of the
// device's copy bandwidth (and, for families that count flops, the TFLOP/s). --l2 picks how the
// L2 is kept from serving repeats: more input sets per graph replay (the sweep's way) or a flush
// between replays, so that the two can be compared on one GPU.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "core/arch.hpp"
#include "core/cubin_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/l2_flush.hpp"
#include "core/measure.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/plan.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

struct BenchOptions {
  std::vector<int> batches;
  double memory_gib = 1.0;
  bool all = false;
  bool no_default = false;  // leave the default config out (a profiler sees one config's kernels)
  bool trimmed = false;     // plan without the family's measured trims
  std::string where;        // "mma_path=1|2,producers=0": only survivors with these values
  int top = 1;              // the N fastest per batch
  std::string best_per;     // "mma_path,producers": the fastest of each value combination
  int replays = 0;          // timed replays per config; 0: the measurement's own stopping rule
  std::string samples;      // a CSV file: every timed replay's per-launch time, in replay order
  std::string l2 = "sets";  // "sets": L2-safe input sets per replay; "flush": flush between replays
  MeasureOptions measure;
};

// --l2: how the L2 is kept from serving repeats. "sets": the family sizes each graph for the L2;
// "flush": an untimed flush before every replay; "none": neither (the protocol before issue 11:
// launches_per_graph launches on their own index sets, which at small batch fit in the L2), only
// so that a before/after comparison can be taken in one run; sweeps never use it.
enum class L2Mode { sets, flush, none };

L2Mode parse_l2_mode(const std::string& mode) {
  if (mode == "sets") return L2Mode::sets;
  if (mode == "flush") return L2Mode::flush;
  if (mode == "none") return L2Mode::none;
  throw InputError("--l2 " + mode +
                   ": not a way to treat the L2; pass 'sets' (each replay reads >= 4x the L2 "
                   "of distinct inputs), 'flush' (an L2 flush between replays) or 'none' (the "
                   "old, L2-unsafe protocol, for before/after comparisons only)");
}

// Whether `config` takes one of the listed values for every parameter named in `where`.
bool selected(const Config& config, const std::string& where) {
  std::stringstream terms(where);
  for (std::string term; std::getline(terms, term, ',');) {
    const std::size_t equals = term.find('=');
    if (equals == std::string::npos) {
      throw InputError("--where: '" + term + "' is not NAME=VALUE[|VALUE...]; e.g. mma_path=1|2");
    }
    const std::string name = term.substr(0, equals);
    int actual = 0;
    try {
      actual = config.at(name);
    } catch (const std::out_of_range&) {
      throw InputError("--where: unknown parameter '" + name + "'; the parameters are " +
                       describe(config));
    }
    bool any = false;
    std::stringstream values(term.substr(equals + 1));
    for (std::string value; std::getline(values, value, '|');) {
      char* end = nullptr;
      const long parsed = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0') {
        std::string message = "--where ";
        message.append(name).append(": '").append(value).append("' is not an integer");
        throw InputError(message);
      }
      any = any || parsed == actual;
    }
    if (!any) return false;
  }
  return true;
}

// "mma_path=1 producers=2" for the parameters named in `names` (comma-separated).
std::string group_of(const Config& config, const std::string& names) {
  std::string group;
  std::stringstream list(names);
  for (std::string name; std::getline(list, name, ',');) {
    try {
      group += (group.empty() ? "" : " ") + name + "=" + std::to_string(config.at(name));
    } catch (const std::out_of_range&) {
      throw InputError("--best-per: unknown parameter '" + name + "'; the parameters are " +
                       describe(config));
    }
  }
  return group;
}

std::vector<Config> candidates_for(const Problem& problem, const Arch& arch, bool all,
                                   const std::string& where, bool with_default, bool trimmed) {
  const Config default_config = problem.family->default_config();
  if (!all && where.empty()) return {default_config};
  PlanRequest request;
  request.family = problem.family;
  request.shape = problem.shape;
  request.arch = arch;
  request.keep_trimmed = trimmed;
  std::vector<Config> configs;
  for (const PlanRow& row : plan(request, CubinCache(default_cache_dir())).rows) {
    if (row.fate == Fate::survivor && (where.empty() || selected(row.config, where))) {
      configs.push_back(row.config);
    }
  }
  if (with_default && std::find(configs.begin(), configs.end(), default_config) == configs.end()) {
    configs.insert(configs.begin(), default_config);
  }
  if (configs.empty()) {
    throw InputError("--where '" + where + "' selects no survivor of the plan and --no-default " +
                     "leaves nothing to time: widen --where (`tuner plan` lists the survivors)");
  }
  return configs;
}

// --samples: the file, opened for appending (created if missing); refuses a path it cannot write.
std::ofstream open_samples(const std::string& path) {
  std::ofstream file(path, std::ios::app);
  if (!file) {
    throw InputError("--samples " + path + ": cannot open it for appending; pass a writable path");
  }
  return file;
}

// --samples: one CSV row per timed replay (batch, config, replay index, µs a launch), appended in
// replay order, so that a drift or two modes over a run can be seen (the summary's quantiles hide
// when the slow replays came).
void append_samples(const std::string& path, int batch, const Config& config,
                    const std::vector<double>& samples_us) {
  if (path.empty()) return;
  std::ofstream file = open_samples(path);
  const std::string name = describe(config);
  for (std::size_t i = 0; i < samples_us.size(); ++i) {
    file << batch << ",\"" << name << "\"," << i << ',' << std::fixed << std::setprecision(3)
         << samples_us[i] << '\n';
  }
}

struct Measured {
  Config config;
  Timing timing;
};

int bench_batch(DeviceSession& session, const std::vector<Config>& candidates, int batch,
                const BenchOptions& options, double copy_gbs, cuda::Stream& stream,
                const Config& default_config) {
  session.prepare(batch);
  const double bytes = session.bytes_moved();
  const double flops = session.flops();
  MeasureOptions measure = options.measure;
  measure.launches_per_graph = session.launches_per_graph();
  int failures = 0;
  std::vector<Measured> measured;
  for (const Config& config : candidates) {
    const LaunchFn launch = session.load(config);
    const Verdict verdict = session.verify(config, launch, 7u + static_cast<unsigned>(batch));
    if (!verdict.passed) {
      std::printf("%6d %-62s WRONG RESULT: %s\n", batch, describe(config).c_str(),
                  verdict.reason.c_str());
      ++failures;
      continue;
    }
    std::vector<double> samples_us;
    measured.push_back(Measured{config, time_graph(launch, stream, measure, &samples_us)});
    append_samples(options.samples, batch, config, samples_us);
  }
  std::sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
    return a.timing.median_us < b.timing.median_us;
  });
  const auto print = [&](const Measured& m, const char* tag) {
    const double seconds = m.timing.median_us * 1e-6;
    std::printf("%6d %-62s %9.2f %9.2f %9.2f %9.2f %9.2f %6d %9.2f %6.1f%% %8.1f %s\n", batch,
                describe(m.config).c_str(), m.timing.median_us, m.timing.p10_us, m.timing.p90_us,
                m.timing.launch_p10_us, m.timing.launch_p90_us, measure.launches_per_graph,
                bytes / 1e6, 100.0 * bytes / seconds / (copy_gbs * 1e9), flops / seconds / 1e12,
                tag);
  };
  for (const Measured& m : measured) {
    if (m.config == default_config) print(m, "(default)");
  }
  if (options.all || !options.where.empty()) {
    for (std::size_t i = 0; i < measured.size() && i < static_cast<std::size_t>(options.top); ++i) {
      print(measured[i], i == 0 ? "(fastest)" : "");
    }
  }
  if (!options.best_per.empty()) {
    std::map<std::string, const Measured*> best;
    for (const Measured& m : measured) best.try_emplace(group_of(m.config, options.best_per), &m);
    for (const auto& [group, m] : best) print(*m, ("(best of " + group + ")").c_str());
  }
  std::fflush(stdout);
  return failures;
}

// The options of `tuner bench` beyond the problem's: the batches as text (--batches), the rest
// into `bench`.
void add_bench_options(po::options_description& options, BenchOptions& bench,
                       std::string& batches_text) {
  options.add_options()("batches", po::value(&batches_text)->default_value(batches_text),
                        "batch sizes")(
      "memory-gib", po::value(&bench.memory_gib)->default_value(bench.memory_gib),
      "input footprint in GiB (the KV cache, the GEMM operand rotations); at least 4x the GPU's "
      "L2, else refused")(
      "l2", po::value(&bench.l2)->default_value(bench.l2),
      "how the L2 is kept from serving repeats: 'sets' (each graph replay "
      "reads >= 4x the L2 of distinct inputs, as the sweep does) or 'flush' "
      "(an untimed L2 flush before every replay); 'none' is the L2-unsafe protocol before "
      "issue 11, for before/after comparisons only")(
      "all", po::bool_switch(&bench.all),
      "time every config that survives the plan for this GPU, not only the default")(
      "where", po::value(&bench.where),
      "time the plan's survivors whose parameters take these values (and the default), e.g. "
      "'mma_path=1|2,producers=2'")(
      "no-default", po::bool_switch(&bench.no_default),
      "leave the default config out of --where / --all (e.g. so that a profiler sees only the "
      "selected config's kernels)")(
      "trimmed", po::bool_switch(&bench.trimmed),
      "also the configs the family's measured trims leave out of the sweep (`tuner plan` gives "
      "them as 'measured to lose'), so that a trim can be measured again")(
      "top", po::value(&bench.top)->default_value(bench.top),
      "print the N fastest configs per batch")(
      "best-per", po::value(&bench.best_per),
      "also print the fastest config of each value combination of these parameters, e.g. "
      "'mma_path,producers' (one row per structural variant)")(
      "samples", po::value(&bench.samples),
      "append every timed replay's per-launch time to this CSV file (batch, config, replay, "
      "us), in replay order")(
      "replays", po::value(&bench.replays)->default_value(bench.replays),
      "time exactly this many replays per config (0: until the spread settles, as the sweep "
      "does); with --samples, a long run shows the card's sustained speed")(
      "launches",
      po::value(&bench.measure.launches_per_graph)->default_value(bench.measure.launches_per_graph),
      "launches per CUDA graph at least, each with its own inputs (with --l2 sets the family "
      "adds more where a replay would not read 4x the L2)");
}

// What the run times and how (printed once, before the table), and the table's header.
void print_bench_header(std::size_t candidates, const Problem& parsed, const cuda::DeviceInfo& info,
                        L2Mode l2_mode, const BenchOptions& bench) {
  std::printf(
      "%zu candidates; %s %s; L2 %.1f MiB kept out by %s; launches per graph: at least %d, each "
      "its own inputs\n",
      candidates, parsed.family->name.c_str(), parsed.shape.canonical().c_str(),
      info.l2_cache_bytes / 1048576.0,
      l2_mode == L2Mode::flush  ? "an untimed flush before every replay"
      : l2_mode == L2Mode::sets ? ">= 4x L2 of distinct inputs per replay"
                                : "nothing (--l2 none: L2-unsafe, for comparisons only)",
      bench.measure.launches_per_graph);
  std::printf("%6s %-62s %9s %9s %9s %9s %9s %6s %9s %7s %8s\n", "batch", "config", "median_us",
              "p10_us", "p90_us", "launchp10", "launchp90", "graph", "MB_moved", "%copyBW",
              "TFLOP/s");
}

}  // namespace

int run_bench(const Args& args) {
  ProblemOptions problem = problem_options_for(args);
  std::string batches_text = "1,8,32,64,128";
  BenchOptions bench;
  po::options_description options("bench options");
  add_problem_options(options, problem);
  add_bench_options(options, bench, batches_text);
  if (!parse_or_help("bench", "[--family F] [shape options] [options]", options, args)) return 0;
  const Problem parsed = parse_problem(problem);
  bench.batches = parse_int_list(batches_text, "batches");
  if (bench.replays < 0) {
    throw InputError("--replays " + std::to_string(bench.replays) +
                     ": not a replay count; pass 0 (until the spread settles) or more");
  }
  if (bench.replays > 0) bench.measure.min_samples = bench.measure.max_samples = bench.replays;
  if (!bench.samples.empty()) open_samples(bench.samples);  // refused before any timing
  const L2Mode l2_mode = parse_l2_mode(bench.l2);
  const bool flush = l2_mode == L2Mode::flush;
  std::string why_not;
  if (!cuda::gpu_available(&why_not)) {
    throw NoGpuError("tuner bench needs a GPU: " + why_not +
                     "; without one, run `tuner check` or `tuner plan`");
  }
  const cuda::DeviceInfo info = cuda::device_info(0);
  const cuda::Context context(0);
  // Refused before any timing: with less than 4x L2 of inputs no launch count is L2-safe.
  char option[64];
  std::snprintf(option, sizeof option, "--memory-gib %g", bench.memory_gib);
  check_memory_covers_l2(bench.memory_gib * static_cast<double>(1LL << 30), info.l2_cache_bytes,
                         option);
  cuda::Stream stream;
  const double copy_gbs = copy_bandwidth_gbs(std::size_t{1} << 30, stream);
  std::printf("device %s (sm_%d, %d SMs), device-to-device copy %.0f GB/s (read + write)\n",
              info.name.c_str(), info.arch_sm(), info.sm_count, copy_gbs);
  const std::vector<Config> candidates =
      candidates_for(parsed, arch_from_device(0, nullptr), bench.all, bench.where,
                     !bench.no_default, bench.trimmed);
  DeviceSession session = parsed.family->open_device(DeviceSetup{
      parsed.shape, info.arch_sm(), default_cache_dir().string(), bench.memory_gib,
      l2_mode == L2Mode::sets ? info.l2_cache_bytes : 0, bench.measure.launches_per_graph});
  std::optional<L2Flush> l2_flush;
  if (flush) {
    l2_flush.emplace(info.l2_cache_bytes);
    bench.measure.before_replay = [&l2_flush](CUstream on) { l2_flush->enqueue(on); };
  }
  print_bench_header(candidates.size(), parsed, info, l2_mode, bench);
  int failures = 0;
  for (int batch : bench.batches) {
    failures += bench_batch(session, candidates, batch, bench, copy_gbs, stream,
                            parsed.family->default_config());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace tuner::cli
