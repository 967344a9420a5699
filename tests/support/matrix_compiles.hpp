#pragma once
// The compiles of gpu_sparse_mla_decode's correctness matrix, without a GPU: the compile keys a
// matrix part allows for a device's shared memory, compiled in parallel, through a cubin cache
// when TUNER_GPU_CUBIN_CACHE names one. A part's compiles took most of a device call (the fp8
// 32-head part: over 150 s of a 16-core H200 machine before its first row); tuner_matrix_cubins
// (matrix_cubins.cpp) compiles them on the CPU machine into a cache that the call carries, so the
// GPU only loads them.
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cubin_cache.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "templates/sparse_mla_decode/schedule.h"
#include "tests/support/winners_structure.hpp"

namespace tuner::test {

using namespace tuner::smla_family;

// Every compile key of the family's space (TARGET_CTAS and merge are launch-only; run_shape sets
// both per launch) that this shape allows and the device's shared memory holds.
inline std::vector<KernelConfig> compile_keys_for(const Shape& shape, int smem_optin) {
  std::vector<KernelConfig> keys;
  for (const Config& config : cross_product(parameter_space())) {
    const KernelConfig typed = from_config(config);
    if (typed.target_ctas != default_config().target_ctas || typed.merge != 0) continue;
    // A launch bound of 2-3 CTAs per SM changes only the register allocation of the same source:
    // checked at 2 stages (the measured ones), not tripling the matrix.
    if (typed.ctas_per_sm != 1 && typed.num_stages != 2) continue;
    // Schedule 2 is schedule 1 but for its division (schedule.h; checked on the CPU by
    // test_sparse_mla_whole_rows, on the GPU where it differs by gpu_sparse_mla_whole_rows): the
    // matrix runs it on the structures the sweep times it on, 4 consumer + 2 producer warps.
    if (typed.schedule == smla::kScheduleWholeRows &&
        (typed.num_warps != 4 || typed.producers != 2)) {
      continue;
    }
    // Four producer warps on the sweep's structure only, every stage, bound and path there.
    if (four_producers_off_structure(typed)) continue;
    if (!shape_mismatch(typed, shape).empty()) continue;
    if (static_budget(typed, shape.kv_format).smem_bytes_per_block > smem_optin) continue;
    keys.push_back(typed);
  }
  return keys;
}

// The cache that TUNER_GPU_CUBIN_CACHE names (created when missing), or none: then every key is
// compiled, as before the cache.
inline std::optional<CubinCache> matrix_cubin_cache() {
  const char* dir = std::getenv("TUNER_GPU_CUBIN_CACHE");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  return CubinCache(dir);
}

struct CompiledKeys {
  std::vector<KernelConfig> configs;
  std::vector<std::unique_ptr<CompileResult>> results;
  std::vector<std::string> failures;
  int from_cache = 0;  // keys whose cubin (or NVRTC's rejection) the cache held
};

inline CompiledKeys compile_all(const std::vector<KernelConfig>& configs, KvFormat kv, int arch_sm,
                                const std::optional<CubinCache>& cache = std::nullopt) {
  CompiledKeys compiled;
  compiled.configs = configs;
  compiled.results.resize(configs.size());
  compiled.failures.resize(configs.size());
  std::vector<char> cached(configs.size(), 0);
  parallel_for(configs.size(), 0, [&](std::size_t i) {
    const CompileRequest request = split_program(configs[i], kv, arch_sm);
    if (!cache) {
      try {
        compiled.results[i] = std::make_unique<CompileResult>(compile(request));
      } catch (const NvrtcError& error) {
        compiled.failures[i] = error.what();
      }
      return;
    }
    CachedCompile entry = compile_cached(*cache, request);
    cached[i] = entry.from_cache ? 1 : 0;
    if (entry.compiled) {
      compiled.results[i] = std::make_unique<CompileResult>(std::move(entry.result));
    } else {
      compiled.failures[i] = describe(to_config(configs[i])) + ": " + entry.result.log;
    }
  });
  for (char hit : cached) compiled.from_cache += hit;
  return compiled;
}

}  // namespace tuner::test
