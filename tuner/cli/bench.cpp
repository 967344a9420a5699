// `tuner bench`: times configs of the sparse MLA decode family on the GPU with the measurement
// protocol (tuner/measure.hpp), after checking each against the reference, and reports bytes moved
// and the achieved fraction of the device-to-device copy bandwidth measured in the same run.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/traffic.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/cuda_driver.hpp"
#include "tuner/error.hpp"
#include "tuner/measure.hpp"
#include "tuner/parallel.hpp"
#include "tuner/sweep_worker.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

using namespace smla_family;

using Candidate = DecodeKernels;

std::vector<Candidate> load_candidates(const Shape& shape, bool all, int arch_sm, int smem_optin) {
  std::vector<KernelConfig> keys;
  if (all) {
    for (const Config& config : cross_product(parameter_space())) {
      const KernelConfig typed = from_config(config);
      if (typed.target_ctas != default_config().target_ctas) continue;
      if (!shape_mismatch(typed, shape).empty()) continue;
      if (static_budget(typed, shape.kv_format).smem_bytes_per_block > smem_optin) continue;
      keys.push_back(typed);
    }
  } else {
    keys.push_back(default_config());
  }
  std::vector<std::unique_ptr<CompileResult>> compiled(keys.size());
  parallel_for(keys.size(), 0, [&](std::size_t i) {
    compiled[i] =
        std::make_unique<CompileResult>(compile(split_program(keys[i], shape.kv_format, arch_sm)));
  });
  std::vector<Candidate> candidates;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const DecodeKernels kernels = load_decode_kernels(*compiled[i], keys[i], shape.kv_format);
    for (int target :
         all ? std::vector<int>{128, 256, 512, 1024} : std::vector<int>{keys[i].target_ctas}) {
      candidates.push_back(kernels);
      candidates.back().config.target_ctas = target;
    }
  }
  return candidates;
}

struct Measured {
  KernelConfig config;
  Timing timing;
  int splits = 0;
};

}  // namespace

int run_bench(const Args& args) {
  ProblemOptions problem_options;
  std::string batches_text = "1,8,32,64,128";
  double kv_gib = 1.0;
  bool all = false;
  MeasureOptions measure;
  po::options_description options("bench options");
  add_problem_options(options, problem_options);
  options.add_options()("batches", po::value(&batches_text)->default_value(batches_text),
                        "batch sizes")("kv-gib", po::value(&kv_gib)->default_value(kv_gib),
                                       "KV cache size in GiB (>= 1 keeps the L2 out)")(
      "all", po::bool_switch(&all), "time every config that fits the device, not only the default")(
      "launches", po::value(&measure.launches_per_graph)->default_value(measure.launches_per_graph),
      "launches per CUDA graph, each with its own index set");
  if (!parse_or_help("bench", "[options]", options, args)) return 0;
  Shape shape = parse_problem(problem_options);
  const std::vector<int> batches = parse_int_list(batches_text, "batches");
  std::string why_not;
  if (!cuda::gpu_available(&why_not)) {
    throw NoGpuError("tuner bench needs a GPU: " + why_not +
                     "; without one, run `tuner check` or `tuner plan`");
  }
  const cuda::DeviceInfo info = cuda::device_info(0);
  const cuda::Context context(0);
  cuda::Stream stream;
  const int smem_optin =
      cuda::device_attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0);
  const double copy_gbs = copy_bandwidth_gbs(std::size_t{1} << 30, stream);
  std::printf("device %s (sm_%d, %d SMs), device-to-device copy %.0f GB/s (read + write)\n",
              info.name.c_str(), info.arch_sm(), info.sm_count, copy_gbs);
  const UtilityKernels utility = load_utility_kernels(info.arch_sm());
  const std::vector<Candidate> candidates = load_candidates(shape, all, info.arch_sm(), smem_optin);
  const long long num_tokens = kv_tokens(shape, kv_gib);
  std::printf(
      "%zu candidates; KV cache %lld tokens (%.2f GiB), at least %d launches per graph (more "
      "where needed to touch 4x the %d MB L2 per replay), each its own index set\n",
      candidates.size(), num_tokens, kv_gib, measure.launches_per_graph, info.l2_cache_bytes >> 20);
  std::printf("%6s %-62s %9s %9s %9s %7s %9s %7s\n", "batch", "config", "median_us", "p10_us",
              "p90_us", "splits", "MB_moved", "%copyBW");
  int failures = 0;
  for (int batch : batches) {
    shape.batch = batch;
    MeasureOptions batch_measure = measure;
    batch_measure.launches_per_graph =
        timing_launches(shape, kv_gib, info.l2_cache_bytes, measure.launches_per_graph);
    int max_splits = 1;
    for (const Candidate& candidate : candidates) {
      max_splits = std::max(max_splits, launch_geometry(candidate.config, shape).num_splits);
    }
    DeviceProblem problem =
        make_device_problem(utility,
                            InputSpec{shape, num_tokens, batch_measure.launches_per_graph, 30,
                                      1000u + static_cast<unsigned>(batch)},
                            max_splits, stream.get());
    stream.synchronize("bench inputs");
    std::vector<std::int32_t> indices(problem.index_set_bytes() / 4);
    problem.indices.download(indices.data(), problem.index_set_bytes());
    const double bytes = bytes_must_move(shape, indices);
    std::vector<Measured> measured;
    unsigned checks = 0;
    for (const Candidate& candidate : candidates) {
      const DecodeKernels& view = candidate;
      // Fresh inputs for every check, as the sweep draws them: a kernel cannot pass by matching
      // one fixed input.
      const Agreement agreement = verify_candidate(
          utility, view, problem, 1000003u * static_cast<unsigned>(batch) + checks++, stream);
      if (!agreement.passes(kOutTolerance, kLseTolerance)) {
        std::printf("%6d %-62s WRONG RESULT: %s\n", batch,
                    describe(to_config(candidate.config)).c_str(), describe(agreement).c_str());
        ++failures;
        continue;
      }
      // verify_candidate redrew index set 0; the timing below uses all sets as drawn.
      const LaunchGeometry geometry = launch_geometry(candidate.config, shape);
      const Timing timing = time_graph(
          [&](int launch, CUstream s) { launch_decode(view, geometry, problem, launch, s); },
          stream, batch_measure);
      measured.push_back(Measured{candidate.config, timing, geometry.num_splits});
    }
    std::sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
      return a.timing.median_us < b.timing.median_us;
    });
    const auto print = [&](const Measured& m, const char* tag) {
      std::printf("%6d %-62s %9.2f %9.2f %9.2f %7d %9.2f %6.1f%% %s\n", batch,
                  describe(to_config(m.config)).c_str(), m.timing.median_us, m.timing.p10_us,
                  m.timing.p90_us, m.splits, bytes / 1e6,
                  100.0 * bytes / (m.timing.median_us * 1e-6) / (copy_gbs * 1e9), tag);
    };
    for (const Measured& m : measured) {
      if (m.config == default_config()) print(m, "(default)");
    }
    if (!measured.empty() && all) print(measured.front(), "(fastest)");
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace tuner::cli
