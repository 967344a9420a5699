// Four producer warps (producers 4): where the sparse MLA space sweeps them and why not elsewhere
// (space.cpp's four_producers_trim), and the resources their kernel asks for. The expected
// survivors are written out here from the rule's statement, not computed by the rule's code; the
// kernels' rows per warp are test_producer_rows', their compiles test_sparse_mla_compile's.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <tuple>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/winners_structure.hpp"

using namespace tuner::smla_family;

namespace {

// (mma_path, num_stages, target_ctas) of each producers-4 config of the 16-head fp8 shape that
// passes the shape rules and the measured trims.
std::set<std::tuple<int, int, int>> swept_four_producer_configs(
    std::set<std::string>& trim_reasons) {
  const Shape shape;
  std::set<std::tuple<int, int, int>> swept;
  for (const tuner::Config& config : tuner::cross_product(parameter_space())) {
    const KernelConfig typed = from_config(config);
    if (typed.producers != 4 || !shape_mismatch(typed, shape).empty()) continue;
    const std::string trim = measured_trim(typed);
    if (!trim.empty()) {
      trim_reasons.insert(trim.substr(0, trim.find(':')));
      continue;
    }
    CAPTURE(tuner::describe(config));
    CHECK(typed.block_t == 64);
    CHECK(typed.block_h == 16);
    CHECK(typed.num_warps == 4);
    CHECK(typed.kv_unpack == 0);
    CHECK(typed.ctas_per_sm == 1);
    CHECK(typed.merge == 4);
    CHECK(typed.schedule == 0);
    swept.emplace(typed.mma_path, typed.num_stages, typed.target_ctas);
  }
  return swept;
}

}  // namespace

TEST_CASE("four producer warps are swept on 64-token tiles of 4 consumer warps, one CTA an SM") {
  std::set<std::string> trim_reasons;
  const std::set<std::tuple<int, int, int>> swept = swept_four_producer_configs(trim_reasons);
  // Both pipelined MMA paths (mma_path 2 is planned for sm_120 budgets) with rings of 2 and 3
  // stages at every TARGET_CTAS but one wave: two compile keys a path, four launches each.
  std::set<std::tuple<int, int, int>> expected;
  for (int mma_path : {1, 2}) {
    for (int stages : {2, 3}) {
      for (int target_ctas : {128, 256, 512, 1024}) expected.emplace(mma_path, stages, target_ctas);
    }
  }
  CHECK(swept == expected);
  // The rest is trimmed as measured or left out for sweep time, never silently.
  CHECK(trim_reasons == std::set<std::string>{"left out for sweep time", "measured to lose"});
}

TEST_CASE("four producer warps: what each trim says, and the 8-warp kernel's resources") {
  // The winners' structure (4 consumer warps, 64-token tiles, 2 stages, merge 4) with four
  // producer warps.
  KernelConfig config = tuner::test::winners_structure(smla::kMergeCombineBf16);
  config.producers = 4;
  CHECK(measured_trim(config).empty());
  // A 32-token tile, schedule 2, merge 1 and 8 consumer warps each take it out of the sweep with
  // the rule's own reason; two CTAs an SM and one wave with the rules that name them.
  for (const auto& change :
       {+[](KernelConfig& c) {
          c.block_t = 32;
          c.num_stages = 4;
        },
        +[](KernelConfig& c) { c.schedule = 2; }, +[](KernelConfig& c) { c.merge = 1; },
        +[](KernelConfig& c) { c.num_warps = 8; }}) {
    KernelConfig changed = config;
    change(changed);
    CAPTURE(tuner::describe(to_config(changed)));
    CHECK(measured_trim(changed).find("four producer warps") != std::string::npos);
  }
  KernelConfig two_ctas = config;
  two_ctas.ctas_per_sm = 2;
  CHECK(measured_trim(two_ctas).find("launch bounds of 2-3 CTAs") != std::string::npos);
  KernelConfig one_wave = config;
  one_wave.target_ctas = 0;
  CHECK(measured_trim(one_wave).find("TARGET_CTAS 0 (one wave)") != std::string::npos);
  // The deeper ring: 3 stages of 64 tokens are swept with four producer warps only, 4 with none.
  KernelConfig deep = config;
  deep.num_stages = 3;
  CHECK(measured_trim(deep).empty());
  deep.num_stages = 4;
  CHECK(measured_trim(deep).find("BLOCK_T x NUM_STAGES = 256") != std::string::npos);
  deep.num_stages = 3;
  deep.producers = 2;
  CHECK(measured_trim(deep).find("BLOCK_T x NUM_STAGES = 192") != std::string::npos);
  // 4 consumer + 4 producer warps: 256 threads, launch bound one CTA an SM; the ring, the ids and
  // the barriers do not grow with the producer warps (a stage's full barrier counts arrivals,
  // not slots), so shared memory is two producer warps' to the byte.
  const tuner::StaticBudget four = static_budget(config, KvFormat::fp8_ds_mla);
  KernelConfig two_producers = config;
  two_producers.producers = 2;
  const tuner::StaticBudget two = static_budget(two_producers, KvFormat::fp8_ds_mla);
  CHECK(four.threads_per_block == 256);
  CHECK(two.threads_per_block == 192);
  CHECK(four.min_blocks_per_sm == 1);
  CHECK(four.smem_bytes_per_block == two.smem_bytes_per_block);
  CHECK(split_kernel_name(config, KvFormat::fp8_ds_mla) ==
        "sparse_mla_decode_split_pipelined<64, 16, 4, 2, 0, 1, 4, 0, 1, 0>");
}
