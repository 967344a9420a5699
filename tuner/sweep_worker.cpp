#include "tuner/sweep_worker.hpp"

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/traffic.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "tuner/cubin_cache.hpp"
#include "tuner/cuda_driver.hpp"
#include "tuner/error.hpp"
#include "tuner/measure.hpp"

namespace tuner {

namespace {

using nlohmann::json;
using namespace smla_family;

constexpr int kInvalidPerMille = 30;  // share of -1 entries in the drawn index sets

double milliseconds(std::chrono::steady_clock::time_point from,
                    std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

class Worker {
 public:
  explicit Worker(const WorkerSetup& setup)
      : setup_(setup),
        info_(cuda::device_info(setup.device)),
        context_(setup.device),
        cache_(setup.cache_dir),
        utility_(load_utility_kernels(info_.arch_sm())) {}

  json info() {
    const double copy_gbs = copy_bandwidth_gbs(std::size_t{1} << 30, stream_);
    return json{{"status", "ok"},
                {"device_name", info_.name},
                {"arch_sm", info_.arch_sm()},
                {"sm_count", info_.sm_count},
                {"driver_version", info_.driver_version},
                {"l2_bytes", info_.l2_cache_bytes},
                {"copy_gbs", copy_gbs}};
  }

  json measure(const json& request) {
    const Config config = config_from_json(request.at("params").dump());
    if (request.value("inject_fault", false)) return inject_fault();
    const KernelConfig kernel = from_config(config);
    Shape shape = setup_.shape;
    shape.batch = request.at("batch").get<int>();
    const auto began = std::chrono::steady_clock::now();
    const DecodeKernels& kernels = kernels_for(kernel);
    const auto loaded = std::chrono::steady_clock::now();
    DecodeKernels candidate = kernels;
    candidate.config = kernel;
    DeviceProblem& problem = problem_for(shape);
    json answer{{"status", "ok"}, {"load_ms", milliseconds(began, loaded)}};
    if (request.value("verify", true)) {
      const Agreement agreement = verify_candidate(
          utility_, candidate, problem, request.at("seed").get<std::uint64_t>(), stream_);
      answer["verify_ms"] = milliseconds(loaded, std::chrono::steady_clock::now());
      answer["out_err"] = agreement.out_rel_error;
      answer["lse_err"] = agreement.lse_rel_error;
      if (!agreement.passes(kOutTolerance, kLseTolerance)) {
        answer["status"] = "wrong_result";
        answer["reason"] = describe(agreement);
        return answer;
      }
    }
    const auto timing_began = std::chrono::steady_clock::now();
    const LaunchGeometry geometry = launch_geometry(kernel, shape);
    MeasureOptions options;
    options.launches_per_graph = launches_;
    std::vector<double> samples;
    const Timing timing = time_graph(
        [&](int launch, CUstream stream) {
          launch_decode(candidate, geometry, problem, launch, stream);
        },
        stream_, options, &samples);
    answer["time_ms"] = milliseconds(timing_began, std::chrono::steady_clock::now());
    answer["median_us"] = timing.median_us;
    answer["p10_us"] = timing.p10_us;
    answer["p90_us"] = timing.p90_us;
    answer["samples"] = timing.samples;
    answer["samples_us"] = samples;
    answer["splits"] = geometry.num_splits;
    answer["launches"] = launches_;
    answer["bytes_moved"] = bytes_moved_;
    return answer;
  }

 private:
  const DecodeKernels& kernels_for(const KernelConfig& config) {
    KernelConfig key = config;
    key.target_ctas = 0;  // launch-only: one load serves every TARGET_CTAS
    const std::string compile_id = describe(to_config(key));
    auto found = loaded_.find(compile_id);
    if (found != loaded_.end()) return found->second;
    const CachedCompile compiled =
        compile_cached(cache_, split_program(config, setup_.shape.kv_format, info_.arch_sm()));
    if (!compiled.compiled) {
      throw NvrtcError("nvrtcCompileProgram", 6, "NVRTC_ERROR_COMPILATION", compile_id,
                       compiled.result.log);
    }
    return loaded_
        .emplace(compile_id, load_decode_kernels(compiled.result, config, setup_.shape.kv_format))
        .first->second;
  }

  DeviceProblem& problem_for(const Shape& shape) {
    if (!problem_ || problem_->spec.shape.batch != shape.batch) {
      problem_.reset();
      const long long tokens = kv_tokens(shape, setup_.kv_gib);
      launches_ =
          timing_launches(shape, setup_.kv_gib, info_.l2_cache_bytes, setup_.launches_per_graph);
      // Enough partial space for any TARGET_CTAS of the space: at most ceil(topk / 16) splits.
      const int max_splits = (shape.topk + 15) / 16;
      problem_ = std::make_unique<DeviceProblem>(
          make_device_problem(utility_,
                              InputSpec{shape, tokens, launches_, kInvalidPerMille,
                                        7u + static_cast<unsigned>(shape.batch)},
                              max_splits, stream_.get()));
      stream_.synchronize("sweep inputs");
      std::vector<std::int32_t> indices(problem_->index_set_bytes() / 4);
      problem_->indices.download(indices.data(), problem_->index_set_bytes());
      bytes_moved_ = bytes_must_move(shape, indices);
    }
    return *problem_;
  }

  json inject_fault() {
    CompileRequest request{"fault.cu",
                           "#include \"common/fault.cuh\"\n",
                           template_headers(),
                           {"tuner_test_out_of_bounds_write"},
                           info_.arch_sm(),
                           {},
                           "test-only fault candidate"};
    const CompileResult compiled = compile(request);
    const cuda::Module module(compiled.cubin, "test-only fault candidate");
    const CUfunction function =
        module.function(compiled.lowered_names.at("tuner_test_out_of_bounds_write"));
    float* base = nullptr;
    void* args[] = {&base};
    cuda::launch(function, {1, 1, 1}, {32, 1, 1}, 0, stream_.get(), args,
                 "test-only fault candidate");
    stream_.synchronize("test-only fault candidate");
    return json{{"status", "ok"}, {"reason", "the out-of-bounds write did not fault"}};
  }

  WorkerSetup setup_;
  cuda::DeviceInfo info_;
  cuda::Context context_;
  CubinCache cache_;
  UtilityKernels utility_;
  cuda::Stream stream_;
  std::map<std::string, DecodeKernels> loaded_;
  std::unique_ptr<DeviceProblem> problem_;
  double bytes_moved_ = 0.0;
  int launches_ = 0;  // per timing graph, for the current problem
};

}  // namespace

long long kv_tokens(const smla_family::Shape& shape, double kv_gib) {
  return static_cast<long long>(kv_gib * static_cast<double>(1LL << 30)) /
             smla_family::kv_row_bytes(shape.kv_format) +
         1;
}

int timing_launches(const smla_family::Shape& shape, double kv_gib, long long l2_bytes,
                    int minimum) {
  const std::string option = "--kv-gib " + std::to_string(kv_gib);
  check_kv_covers_l2(kv_gib * static_cast<double>(1LL << 30), l2_bytes, option);
  const double rows_per_launch =
      static_cast<double>(shape.batch) * shape.topk * (1.0 - kInvalidPerMille / 1000.0);
  return l2_safe_launches(l2_bytes, kv_tokens(shape, kv_gib), rows_per_launch,
                          smla_family::kv_row_bytes(shape.kv_format), minimum, option);
}

int run_sweep_worker(const WorkerSetup& setup, std::istream& in, std::ostream& out) {
  std::unique_ptr<Worker> worker;
  std::string line;
  while (std::getline(in, line)) {
    json answer;
    bool poisoned = false;
    try {
      if (!worker) worker = std::make_unique<Worker>(setup);
      const json request = json::parse(line);
      const std::string op = request.at("op").get<std::string>();
      answer = op == "info" ? worker->info() : worker->measure(request);
    } catch (const CudaError& error) {
      answer = json{{"status", "fault"}, {"reason", error.what()}, {"code", error.code_name()}};
      poisoned = error.is_sticky();
    } catch (const NvrtcError& error) {
      answer = json{{"status", "compile_failed"}, {"reason", error.what()}};
    } catch (const std::exception& error) {
      answer = json{{"status", "error"}, {"reason", error.what()}};
    }
    out << answer.dump() << std::endl;
    if (poisoned) return 3;  // the context is unusable: the parent starts a new worker
  }
  return 0;
}

}  // namespace tuner
