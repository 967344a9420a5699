#include "tuner/sweep_worker.hpp"

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/cuda_driver.hpp"
#include "core/error.hpp"
#include "core/measure.hpp"
#include "core/templates.hpp"
#include "kernels/registry.hpp"
#include "tuner/shape_text.hpp"

namespace tuner {

namespace {

using nlohmann::json;

double milliseconds(std::chrono::steady_clock::time_point from,
                    std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

class Worker {
 public:
  explicit Worker(const WorkerSetup& setup)
      : setup_(setup),
        family_(family_by_name(setup.family)),
        info_(cuda::device_info(setup.device)),
        context_(setup.device),
        session_(family_.open_device(DeviceSetup{setup.shape, info_.arch_sm(), setup.cache_dir,
                                                 setup.memory_gib, info_.l2_cache_bytes,
                                                 setup.min_launches})) {}

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
    const auto began = std::chrono::steady_clock::now();
    session_.prepare(request.at("batch").get<int>());
    const LaunchFn launch = session_.load(config);
    const auto loaded = std::chrono::steady_clock::now();
    json answer{{"status", "ok"}, {"load_ms", milliseconds(began, loaded)}};
    if (request.value("verify", true)) {
      const Verdict verdict =
          session_.verify(config, launch, request.at("seed").get<std::uint64_t>());
      answer["verify_ms"] = milliseconds(loaded, std::chrono::steady_clock::now());
      answer["out_err"] = verdict.out_error;
      answer["lse_err"] = verdict.aux_error;
      if (!verdict.passed) {
        answer["status"] = "wrong_result";
        answer["reason"] = verdict.reason;
        return answer;
      }
    }
    const auto timing_began = std::chrono::steady_clock::now();
    MeasureOptions options;
    // The family sized the graph for this batch and this device's L2 (protocol 2).
    options.launches_per_graph = session_.launches_per_graph();
    const int screen_replays = request.value("screen_replays", 0);
    if (screen_replays > 0) options = screen_options(options, screen_replays);
    std::vector<double> samples;
    const Timing timing = time_graph(launch, stream_, options, &samples);
    answer["time_ms"] = milliseconds(timing_began, std::chrono::steady_clock::now());
    answer["protocol"] = screen_replays > 0 ? "screen" : "full";
    answer["median_us"] = timing.median_us;
    answer["p10_us"] = timing.p10_us;
    answer["p90_us"] = timing.p90_us;
    answer["samples"] = timing.samples;
    answer["launches"] = options.launches_per_graph;
    answer["launch_p10_us"] = timing.launch_p10_us;
    answer["launch_p90_us"] = timing.launch_p90_us;
    answer["samples_us"] = samples;
    answer["bytes_moved"] = session_.bytes_moved();
    answer["flops"] = session_.flops();
    return answer;
  }

 private:
  json inject_fault() {
    CompileRequest request{"fault.cu",
                           "#include \"common/fault.cuh\"\n",
                           template_files({"common/"}),
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
  const Family& family_;
  cuda::DeviceInfo info_;
  cuda::Context context_;
  DeviceSession session_;
  cuda::Stream stream_;
};

}  // namespace

json to_json(const WorkerSetup& setup) {
  return json{{"op", "setup"},
              {"family", setup.family},
              {"shape", setup.shape.canonical()},
              {"device", setup.device},
              {"cache_dir", setup.cache_dir},
              {"memory_gib", setup.memory_gib},
              {"min_launches", setup.min_launches}};
}

WorkerSetup worker_setup_from_json(const json& message) {
  if (!message.is_object() || message.value("op", "") != "setup") {
    throw InputError(R"(the sweep worker's first message must be {"op":"setup",...}, got )" +
                     message.dump());
  }
  try {
    WorkerSetup setup;
    setup.family = message.at("family").get<std::string>();
    setup.shape = parse_canonical_shape(message.at("shape").get<std::string>());
    setup.device = message.at("device").get<int>();
    setup.cache_dir = message.at("cache_dir").get<std::string>();
    setup.memory_gib = message.at("memory_gib").get<double>();
    setup.min_launches = message.at("min_launches").get<int>();
    return setup;
  } catch (const json::exception& error) {
    throw InputError("sweep worker setup message " + message.dump() + ": " + error.what());
  }
}

int run_sweep_worker(std::istream& in, std::ostream& out) {
  std::unique_ptr<Worker> worker;
  std::optional<WorkerSetup> setup;
  std::string line;
  while (std::getline(in, line)) {
    json answer;
    bool poisoned = false;
    try {
      const json request = json::parse(line);
      if (!setup) {
        setup = worker_setup_from_json(request);
        out << json{{"status", "ok"}}.dump() << std::endl;
        continue;
      }
      if (!worker) worker = std::make_unique<Worker>(*setup);
      const std::string op = request.at("op").get<std::string>();
      answer = op == "info" ? worker->info() : worker->measure(request);
    } catch (const CudaError& error) {
      answer = json{{"status", "fault"}, {"reason", error.what()}};
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
