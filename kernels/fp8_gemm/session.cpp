// The fp8 GEMM family's GPU side: rotations of (A, scales, B, scales) within setup.memory_gib, as
// many as make one timing replay read >= kL2Factor x the L2 (operand_sets), so that timed launches
// do not find the weight in the L2; the candidate's modules per compile key, the fp32 reference
// check, bytes moved and flops.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/cubin_cache.hpp"
#include "core/error.hpp"
#include "kernels/fp8_gemm/deploy.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/fp8_gemm/operand_sets.hpp"
#include "kernels/fp8_gemm/reference.hpp"
#include "templates/fp8_gemm/layout.h"
#include "templates/fp8_gemm/params.h"

namespace tuner::fp8_gemm {
namespace {

constexpr int kMaxSplitK = 8;

struct Loaded {
  std::shared_ptr<const cuda::Module> module;
  CUfunction gemm = nullptr;
  CUfunction reduce = nullptr;
};

struct Utility {
  cuda::Module module;
  CUfunction reference = nullptr;
  CUfunction fill_e4m3 = nullptr;
  CUfunction fill_scale = nullptr;
};

Utility load_utility(int arch_sm) {
  const CompileResult compiled = compile(utility_program(arch_sm));
  Utility utility{cuda::Module(compiled.cubin, "fp8_gemm utility program"), {}, {}, {}};
  const auto function = [&](const char* name) {
    return utility.module.function(compiled.lowered_names.at(name));
  };
  utility.reference = function("fp8_gemm_reference");
  utility.fill_e4m3 = function("fp8_gemm_fill_e4m3");
  utility.fill_scale = function("fp8_gemm_fill_scale");
  return utility;
}

// One rotation's operands; A and its scales for the prepared batch.
struct Operands {
  cuda::DeviceBuffer a, a_scale, b, b_scale;
};

struct State {
  DeviceSetup setup;
  GemmShape shape;
  CubinCache cache;
  Utility utility;
  cuda::Stream stream;
  std::map<std::string, Loaded> loaded;
  std::vector<Operands> sets;
  cuda::DeviceBuffer c, partial, ref;
  int launches = 0;  // per timing graph, for the prepared batch

  explicit State(const DeviceSetup& s)
      : setup(s),
        shape(typed_shape(s.shape)),
        cache(s.cache_dir),
        utility(load_utility(s.arch_sm)) {}

  std::size_t groups() const { return static_cast<std::size_t>(shape.k) / 128; }

  void fill(CUfunction function, CUdeviceptr pointer, long long count,
            unsigned long long seed) const {
    void* args[] = {&pointer, &count, &seed};
    const auto blocks = static_cast<unsigned>(std::clamp((count + 255) / 256, 1LL, 4096LL));
    cuda::launch(function, {blocks, 1, 1}, {256, 1, 1}, 0, stream.get(), args, "fp8_gemm fill");
  }

  void draw(Operands& set, unsigned long long seed) const {
    fill(utility.fill_e4m3, set.a.get(), static_cast<long long>(set.a.size()), seed * 4 + 1);
    fill(utility.fill_scale, set.a_scale.get(), static_cast<long long>(set.a_scale.size() / 4),
         seed * 4 + 2);
    fill(utility.fill_e4m3, set.b.get(), static_cast<long long>(set.b.size()), seed * 4 + 3);
    fill(utility.fill_scale, set.b_scale.get(), static_cast<long long>(set.b_scale.size() / 4),
         seed * 4 + 4);
  }

  void prepare(int m) {
    if (!sets.empty() && shape.m == m) return;
    sets.clear();
    shape.m = m;
    const std::size_t mk = static_cast<std::size_t>(m) * shape.k;
    const std::size_t nk = static_cast<std::size_t>(shape.n) * shape.k;
    const std::size_t set_bytes = mk + nk + (m + shape.n / 128) * groups() * 4;
    char option[64];
    std::snprintf(option, sizeof option, "--memory-gib %g", setup.memory_gib);
    const OperandSets plan = operand_sets(static_cast<double>(set_bytes), setup.memory_gib,
                                          setup.l2_bytes, setup.min_launches, option);
    launches = plan.launches;
    for (int i = 0; i < plan.sets; ++i) {
      Operands set{cuda::DeviceBuffer(mk, "fp8_gemm A"),
                   cuda::DeviceBuffer(m * groups() * 4, "fp8_gemm A scales"),
                   cuda::DeviceBuffer(nk, "fp8_gemm B"),
                   cuda::DeviceBuffer(shape.n / 128 * groups() * 4, "fp8_gemm B scales")};
      draw(set, 100u + static_cast<unsigned>(i));
      sets.push_back(std::move(set));
    }
    const std::size_t mn = static_cast<std::size_t>(m) * shape.n;
    c = cuda::DeviceBuffer(mn * 2, "fp8_gemm C");
    partial = cuda::DeviceBuffer(mn * 4 * kMaxSplitK, "fp8_gemm split-K partials");
    ref = cuda::DeviceBuffer(mn * 4, "fp8_gemm reference C");
    stream.synchronize("fp8_gemm inputs");
  }

  const Loaded& load(const KernelConfig& config) {
    // One load per compile key: SPLIT_K is launch-only.
    const std::string id = compile_key(to_config(config), parameter_space());
    const auto found = loaded.find(id);
    if (found != loaded.end()) return found->second;
    const CachedCompile compiled = compile_cached(cache, gemm_program(config, setup.arch_sm));
    if (!compiled.compiled) {
      throw NvrtcError("nvrtcCompileProgram", 6, "NVRTC_ERROR_COMPILATION", id,
                       compiled.result.log);
    }
    Loaded kernels{std::make_shared<const cuda::Module>(compiled.result.cubin, id), {}, {}};
    kernels.gemm =
        kernels.module->function(compiled.result.lowered_names.at(gemm_kernel_name(config)));
    kernels.reduce =
        kernels.module->function(compiled.result.lowered_names.at(reduce_kernel_name()));
    cuda::set_max_dynamic_smem(kernels.gemm, static_budget(config).smem_bytes_per_block, id);
    return loaded.emplace(id, kernels).first->second;
  }

  // deploy.hpp's geometry and packing, as the serving launcher runs them.
  void launch(const Loaded& kernels, const KernelConfig& config, int rotation, CUstream on) const {
    const Operands& set = sets[static_cast<std::size_t>(rotation) % sets.size()];
    const GemmBuffers buffers{set.a.get(),       set.a_scale.get(), set.b.get(),
                              set.b_scale.get(), c.get(),           partial.get()};
    const GemmDims dims{shape.m, shape.n, shape.k};
    fp8gemm::GemmParams p = pack_gemm(buffers, dims, config.split_k);
    void* args[] = {&p};
    const StaticBudget budget = static_budget(config);
    const Grid grid = gemm_grid(dims, {config.block_m, config.block_n, config.split_k});
    cuda::launch(kernels.gemm, {grid.x, grid.y, grid.z},
                 {static_cast<unsigned>(budget.threads_per_block), 1, 1},
                 static_cast<unsigned>(budget.smem_bytes_per_block), on, args, "fp8_gemm");
    if (config.split_k == 1) return;
    fp8gemm::ReduceParams r = pack_reduce(buffers, dims, config.split_k);
    void* reduce_args[] = {&r};
    cuda::launch(kernels.reduce, {reduce_blocks(dims), 1, 1}, {kReduceThreads, 1, 1}, 0, on,
                 reduce_args, "fp8_gemm split-K reduce");
  }

  Verdict verify(const KernelConfig& config, std::uint64_t seed) {
    draw(sets[0], seed);
    const Operands& set = sets[0];
    fp8gemm::ReferenceParams r{reinterpret_cast<const unsigned char*>(set.a.get()),
                               reinterpret_cast<const float*>(set.a_scale.get()),
                               reinterpret_cast<const unsigned char*>(set.b.get()),
                               reinterpret_cast<const float*>(set.b_scale.get()),
                               reinterpret_cast<float*>(ref.get()),
                               shape.m,
                               shape.n,
                               shape.k};
    void* args[] = {&r};
    const long long outputs = static_cast<long long>(shape.m) * shape.n;
    cuda::launch(utility.reference, {static_cast<unsigned>((outputs + 255) / 256), 1, 1},
                 {256, 1, 1}, 0, stream.get(), args, "fp8_gemm reference");
    c.fill_u16(0x7fc1, stream.get());  // bf16 NaN: an element the candidate skips fails
    launch(load(config), config, 0, stream.get());
    stream.synchronize("verify fp8_gemm " + describe(to_config(config)));
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(outputs));
    c.download(bits.data(), bits.size() * 2);
    std::vector<float> got(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) got[i] = bf16_value(bits[i]);
    std::vector<float> reference(bits.size());
    ref.download(reference.data(), reference.size() * 4);
    const GemmAgreement agreement =
        compare(got, std::vector<double>(reference.begin(), reference.end()));
    return Verdict{agreement.passes(), agreement.rel_error, agreement.max_rel_error,
                   describe(agreement)};
  }

  double bytes_moved() const {
    const auto groups_d = static_cast<double>(groups());
    return static_cast<double>(shape.m) * shape.k + static_cast<double>(shape.n) * shape.k +
           (shape.m + shape.n / 128.0) * groups_d * 4 + static_cast<double>(shape.m) * shape.n * 2;
  }
};

}  // namespace

DeviceSession open_device(const DeviceSetup& setup) {
  auto state = std::make_shared<State>(setup);
  DeviceSession session;
  session.prepare = [state](int batch) { state->prepare(batch); };
  session.load = [state](const Config& params) -> LaunchFn {
    const KernelConfig config = from_config(params);
    const Loaded kernels = state->load(config);
    return [state, kernels, config](int rotation, CUstream stream) {
      state->launch(kernels, config, rotation, stream);
    };
  };
  session.verify = [state](const Config& params, const LaunchFn&, std::uint64_t seed) {
    return state->verify(from_config(params), seed);
  };
  session.bytes_moved = [state] { return state->bytes_moved(); };
  session.flops = [state] {
    return 2.0 * state->shape.m * static_cast<double>(state->shape.n) * state->shape.k;
  };
  session.launches_per_graph = [state] {
    if (state->sets.empty()) throw std::logic_error("fp8_gemm session: prepare(batch) first");
    return state->launches;
  };
  return session;
}

}  // namespace tuner::fp8_gemm
