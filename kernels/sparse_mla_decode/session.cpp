// The family's GPU side for the generic worker: inputs per batch (a KV cache of setup.memory_gib,
// one index set per launch of a timing graph, as many as keep the L2 from serving repeats), loaded
// split + combine modules per compile key, the fp32 reference check, the bytes a call must move.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>

#include "core/cubin_cache.hpp"
#include "core/error.hpp"
#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/family.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "kernels/sparse_mla_decode/timing_sets.hpp"
#include "kernels/sparse_mla_decode/traffic.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"

namespace tuner::smla_family {
namespace {

struct State {
  DeviceSetup setup;
  Shape shape;  // batch set by prepare
  CubinCache cache;
  UtilityKernels utility;
  cuda::Stream stream;  // inputs and verification; timing runs on the caller's stream
  std::map<std::string, DecodeKernels> loaded;
  std::unique_ptr<DeviceProblem> problem;
  std::optional<ReferenceAnswer> reference;  // of the prepared batch's current inputs
  double bytes_moved = 0.0;
  int launches = 0;  // per timing graph, for the prepared batch

  explicit State(const DeviceSetup& s)
      : setup(s),
        shape(typed_shape(s.shape)),
        cache(s.cache_dir),
        utility(load_utility_kernels(s.arch_sm, &cache)) {}

  const DecodeKernels& kernels_for(const KernelConfig& config) {
    // One load per compile key: TARGET_CTAS is launch-only.
    const std::string compile_id = compile_key(to_config(config), parameter_space());
    auto found = loaded.find(compile_id);
    if (found != loaded.end()) return found->second;
    const CachedCompile compiled =
        compile_cached(cache, split_program(config, shape.kv_format, setup.arch_sm));
    if (!compiled.compiled) {
      throw NvrtcError("nvrtcCompileProgram", 6, "NVRTC_ERROR_COMPILATION", compile_id,
                       compiled.result.log);
    }
    return loaded.emplace(compile_id, load_decode_kernels(compiled.result, config, shape.kv_format))
        .first->second;
  }

  // The reference for the prepared batch's inputs drawn from `seed`: computed once, then reused
  // by every config verified with the same seed (the sweep uses one seed per batch).
  const ReferenceAnswer& reference_for(std::uint64_t seed) {
    if (!reference || reference->seed != seed) {
      reference.reset();  // the inputs are redrawn: a stale answer must not survive a failure
      reference = run_reference(utility, current(), seed, stream);
    }
    return *reference;
  }

  void prepare(int batch) {
    if (problem && problem->spec.shape.batch == batch) return;
    reference.reset();
    problem.reset();
    shape.batch = batch;
    char option[64];
    std::snprintf(option, sizeof option, "--memory-gib %g", setup.memory_gib);
    const TimingSets sets =
        timing_sets(shape, setup.memory_gib, setup.l2_bytes, setup.min_launches, option);
    // Enough partial space for any TARGET_CTAS of the space: at most ceil(topk / 16) splits.
    const int max_splits = (shape.topk + 15) / 16;
    problem = std::make_unique<DeviceProblem>(
        make_device_problem(utility,
                            InputSpec{shape, sets.kv_rows, sets.launches, kInvalidPerMille,
                                      7u + static_cast<unsigned>(batch)},
                            max_splits, stream.get()));
    launches = sets.launches;
    stream.synchronize("sweep inputs");
    std::vector<std::int32_t> indices(problem->index_set_bytes() / 4);
    problem->indices.download(indices.data(), problem->index_set_bytes());
    bytes_moved = bytes_must_move(shape, indices);
  }

  DeviceProblem& current() const {
    if (!problem) throw std::logic_error("sparse_mla_decode session: prepare(batch) first");
    return *problem;
  }
};

}  // namespace

DeviceSession open_device(const DeviceSetup& setup) {
  auto state = std::make_shared<State>(setup);
  DeviceSession session;
  session.prepare = [state](int batch) { state->prepare(batch); };
  session.load = [state](const Config& config) -> LaunchFn {
    DecodeKernels kernels = state->kernels_for(from_config(config));
    kernels.config = from_config(config);
    const LaunchGeometry geometry =
        launch_geometry(kernels.config, state->current().spec.shape, kernels.clusters);
    return [state, kernels, geometry](int rotation, CUstream stream) {
      const DeviceProblem& problem = state->current();
      launch_decode(kernels, geometry, problem, rotation % problem.spec.index_sets, stream);
    };
  };
  session.verify = [state](const Config& config, const LaunchFn&, std::uint64_t seed) {
    DecodeKernels kernels = state->kernels_for(from_config(config));
    kernels.config = from_config(config);
    const Agreement agreement =
        check_candidate(kernels, state->current(), state->reference_for(seed), state->stream);
    return Verdict{agreement.passes(kOutTolerance, kLseTolerance), agreement.out_rel_error,
                   agreement.lse_rel_error, describe(agreement)};
  };
  session.bytes_moved = [state] { return state->bytes_moved; };
  session.flops = [] { return 0.0; };
  session.launches_per_graph = [state] {
    state->current();  // throws when no batch is prepared
    return state->launches;
  };
  return session;
}

}  // namespace tuner::smla_family
