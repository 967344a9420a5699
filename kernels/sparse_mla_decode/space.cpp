#include "kernels/sparse_mla_decode/space.hpp"

#include <algorithm>

#include "kernels/sparse_mla_decode/deploy.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/schedule.h"

namespace tuner::smla_family {

const std::vector<Parameter>& parameter_space() {
  static const std::vector<Parameter> space = {
      {"block_t", {16, 32, 64}, false},
      {"block_h", {16, 32, 64}, false},
      {"num_warps", {2, 4, 8}, false},
      {"num_stages", {1, 2, 3, 4, 6, 8}, false},
      {"mma_path", {0, 1, 2}, false},
      {"producers", {0, 1, 2, 4}, false},
      {"kv_unpack", {0, 1, 2}, false},
      {"ctas_per_sm", {1, 2, 3}, false},
      {"target_ctas", {0, 128, 256, 512, 1024}, true},  // 0: one wave (deploy.hpp)
      {"merge", {0, 1, 2, 3, 4, 5}, true},
      {"schedule", {0, 1, 2}, false},
  };
  return space;
}

KernelConfig default_config() { return KernelConfig{}; }

namespace {
int value_or(const Config& config, std::string_view name, int fallback) {
  for (const auto& [key, value] : config.values) {
    if (key == name) return value;
  }
  return fallback;
}
}  // namespace

KernelConfig from_config(const Config& config) {
  return KernelConfig{config.at("block_t"),
                      config.at("block_h"),
                      config.at("num_warps"),
                      config.at("num_stages"),
                      value_or(config, "mma_path", 0),
                      value_or(config, "producers", 0),
                      value_or(config, "kv_unpack", 0),
                      value_or(config, "ctas_per_sm", 1),
                      config.at("target_ctas"),
                      value_or(config, "merge", value_or(config, "pdl", 0)),
                      value_or(config, "schedule", 0)};
}

Config to_config(const KernelConfig& config) {
  return Config{{{"block_t", config.block_t},
                 {"block_h", config.block_h},
                 {"num_warps", config.num_warps},
                 {"num_stages", config.num_stages},
                 {"mma_path", config.mma_path},
                 {"producers", config.producers},
                 {"kv_unpack", config.kv_unpack},
                 {"ctas_per_sm", config.ctas_per_sm},
                 {"target_ctas", config.target_ctas},
                 {"merge", config.merge},
                 {"schedule", config.schedule}}};
}

std::string split_kernel_name(const KernelConfig& config, KvFormat kv_format) {
  if (config.mma_path != 0) {
    return "sparse_mla_decode_split_pipelined<" + std::to_string(config.block_t) + ", " +
           std::to_string(config.block_h) + ", " + std::to_string(config.num_warps) + ", " +
           std::to_string(config.num_stages) + ", " + std::to_string(static_cast<int>(kv_format)) +
           ", " + std::to_string(config.mma_path) + ", " + std::to_string(config.producers) + ", " +
           std::to_string(config.kv_unpack) + ", " + std::to_string(config.ctas_per_sm) + ", " +
           std::to_string(config.schedule) + ">";
  }
  return "sparse_mla_decode_split<" + std::to_string(config.block_t) + ", " +
         std::to_string(config.block_h) + ", " + std::to_string(config.num_warps) + ", " +
         std::to_string(config.num_stages) + ", " + std::to_string(static_cast<int>(kv_format)) +
         ">";
}

std::string combine_kernel_name() { return "sparse_mla_decode_combine<128>"; }
std::string combine_whole_row_kernel_name() { return "sparse_mla_decode_combine_whole_row<128>"; }

namespace {

bool is_seeds_default(const KernelConfig& config) {
  KernelConfig structure = config;
  structure.target_ctas = default_config().target_ctas;
  structure.merge = default_config().merge;
  return structure == default_config();
}

// The tile-dividing schedules (1 and 2) run on producer warps and merge through the combine.
std::string tile_division_mismatch(const KernelConfig& config) {
  if (!smla::divides_tiles(config.schedule)) return {};
  const std::string schedule =
      "schedule " + std::to_string(config.schedule) +
      (config.schedule == smla::kScheduleWholeRows ? " (whole rows)" : " (balanced)");
  if (config.producers == 0) {
    return schedule + " runs on producer-warp kernels (producers 1 or 2)";
  }
  if (config.merge == smla::kMergeCluster) {
    return "the cluster merge (merge 2) merges one row's splits in a cluster: schedule 0, not " +
           schedule;
  }
  if (config.merge == smla::kMergeLastCta) {
    return "the last-CTA merge (merge 3) counts a row's splits: per-row splits (schedule 0), "
           "not " +
           schedule;
  }
  if (config.merge == smla::kMergeRowSlices) {
    return "the row-slice merge (merge 5) waits on a row's splits: per-row splits (schedule 0), "
           "not " +
           schedule;
  }
  return {};
}

// Two reasons structure_mismatch and value_mismatch share.
constexpr const char* kFp8MmaOnBf16 =
    "e4m3 MMA (mma_path 2) needs the fp8_ds_mla cache; bf16 KV runs bf16 MMA";
std::string kv_unpack_mismatch(int kv_unpack) {
  return "kv_unpack " + std::to_string(kv_unpack) +
         " (bitwise e4m3 unpack) makes f16 fragments of the fp8_ds_mla cache on mma_path 1";
}

// What the kernels cannot do.
std::string structure_mismatch(const KernelConfig& config, KvFormat kv_format) {
  const std::string path = "mma_path " + std::to_string(config.mma_path);
  if (config.kv_unpack != 0 && (config.mma_path != 1 || kv_format != KvFormat::fp8_ds_mla)) {
    return kv_unpack_mismatch(config.kv_unpack);
  }
  if (std::string reason = tile_division_mismatch(config); !reason.empty()) return reason;
  if (config.mma_path == 0) {
    if (config.producers > 0) return "producer warps need a pipelined path (mma_path 1 or 2)";
    if (config.merge == smla::kMergeCluster) {
      return "the cluster merge (merge 2) is built into the pipelined kernels (mma_path 1 or 2)";
    }
    if (config.merge == smla::kMergeLastCta) {
      return "the last-CTA merge (merge 3) is built into the pipelined kernels (mma_path 1 or 2)";
    }
    if (config.merge == smla::kMergeCombineBf16) {
      return "bf16 partials (merge 4) are built into the pipelined kernels (mma_path 1 or 2)";
    }
    if (config.merge == smla::kMergeRowSlices) {
      return "the row-slice merge (merge 5) is built into the pipelined kernels (mma_path 1 or 2)";
    }
    if (config.ctas_per_sm > 1) return "the seeds' kernel (mma_path 0) keeps its launch bound of 1";
    return {};
  }
  if (config.mma_path == 2 && kv_format == KvFormat::bf16) {
    return kFp8MmaOnBf16;
  }
  if (config.mma_path == 2 && config.block_t < 32) {
    return "e4m3 MMA takes 32 tokens per k-step: BLOCK_T >= 32";
  }
  if (config.num_warps < 4) {
    return path + " gives each warp at most one 128-dim scale group: NUM_WARPS >= 4";
  }
  if (config.num_stages < 2) return path + " overlaps copies with compute: NUM_STAGES >= 2";
  return {};
}

}  // namespace

namespace {
// Head groups are padded to the 16-row mma tile, so a CTA may be wider than the local heads only
// up to that padding.
std::string block_h_mismatch(int block_h, const Shape& shape) {
  const int widest_useful = std::max(16, (shape.n_local_heads() + 15) / 16 * 16);
  if (block_h <= widest_useful) return {};
  return "BLOCK_H " + std::to_string(block_h) + " > " + std::to_string(shape.n_local_heads()) +
         " local heads";
}
}  // namespace

std::string shape_mismatch(const KernelConfig& config, const Shape& shape) {
  if (std::string reason = block_h_mismatch(config.block_h, shape); !reason.empty()) return reason;
  return structure_mismatch(config, shape.kv_format);
}

std::string value_mismatch(std::string_view param, int value, const Shape& shape) {
  if (param == "block_h") return block_h_mismatch(value, shape);
  if (shape.kv_format != KvFormat::bf16) return {};
  // The bf16 cache rules out two values whatever the rest of the config (structure_mismatch).
  if (param == "mma_path" && value == 2) {
    return kFp8MmaOnBf16;
  }
  if (param == "kv_unpack" && value != 0) {
    return kv_unpack_mismatch(value);
  }
  return {};
}

std::string arch_mismatch(const KernelConfig& config, int arch_sm) {
  if (config.merge == smla::kMergeCombinePdl && arch_sm < 90) {
    return "programmatic dependent launch (merge 1) needs sm_90 or newer";
  }
  if (config.merge == smla::kMergeCombineBf16 && arch_sm < 90) {
    return "the bf16-partials combine (merge 4) is a programmatic dependent launch: sm_90 or newer";
  }
  if (config.merge == smla::kMergeCluster && arch_sm < 90) {
    return "thread-block clusters (merge 2) need sm_90 or newer";
  }
  if (config.merge == smla::kMergeLastCta && arch_sm < 90) {
    return "the last-CTA merge (merge 3) launches the split as a programmatic dependent: sm_90 or "
           "newer";
  }
  if (config.merge == smla::kMergeRowSlices && arch_sm < 90) {
    return "the row-slice merge (merge 5) launches the split as a programmatic dependent: sm_90 "
           "or newer";
  }
  if (config.mma_path != 2) return {};
  if (arch_sm < 89) return "e4m3 mma.sync needs sm_89 or newer (mma_path 2)";
  if (arch_sm == 89 || arch_sm >= 120) return {};
  return "e4m3 mma.sync is emulated on sm_" + std::to_string(arch_sm) +
         " (f16 unpack + 2 HMMA); mma_path 2 is planned for sm_89 / sm_120 budgets";
}

namespace {

// The merge values' trims, on the pipelined kernels that pass the structural ones.
std::string merge_trim(const KernelConfig& config) {
  if (config.merge == smla::kMergeCluster && (config.num_warps != 4 || config.producers != 2)) {
    // On every pipelined kernel the default sweep took 133 s on the H200 before a launch was
    // measured once (2026-12-02; target < 120 s); every winner from batch 2 up runs 4 consumer +
    // 2 producer warps. Kept at every ring depth of those, so that sm_120 budgets, where the
    // winners' 2 x 64-token ring does not fit, can pick the cluster merge too.
    return "measured to lose: the cluster merge (merge 2) is swept on the 4 consumer + 2 producer "
           "warp kernels (every winner from batch 2 up runs them)";
  }
  if (config.merge == smla::kMergeCluster && config.target_ctas == kTargetOneWave) {
    // Both start at or above the most splits whose clusters fit one wave (a cluster of s takes s
    // of the resident CTAs' slots, so no more than floor(resident / rows) splits fit) and step
    // down through the same split counts to the first that fits (deploy.cpp's split_plan).
    return "left out as one launch: under the cluster merge (merge 2) TARGET_CTAS 0 (one wave) "
           "and 1024 both give the most splits (up to 8) whose clusters fit one wave";
  }
  if (config.merge == smla::kMergeCombineBf16 &&
      (config.num_warps != 4 || (config.producers != 2 && config.producers != 4))) {
    // Not measured to lose: each merge value is one more timed launch per config and batch, and
    // the structure every winner from batch 2 up runs gets it first (as the cluster merge).
    return "left out for sweep time: bf16 partials (merge 4) are swept on the 4 consumer + 2 "
           "producer warp kernels (every winner from batch 2 up runs them) and on 4 + 4";
  }
  if (config.merge == smla::kMergeRowSlices) {
    // H200, 2026-12-04 (BENCHMARKS.md section 7, twentieth session): on the winners' 4 + 2 warp
    // structure, the fastest merge-5 launch trailed the best of merges 1 / 2 / 4 by 1.8x / 1.36x /
    // 1.04x / 1.00x / 1.05x at batch 1 / 8 / 32 / 64 / 128 (merge 4 at 1-64, merge 2 at 128); at
    // 256 and 512 one wave holds one split a row, merge 0's launch. At most 8 splits a row and
    // one wave cost the small batches their CTAs; at 64 the wait and the merge through L2 cost
    // what the combine did.
    return "measured to lose: the row-slice merge (merge 5) trailed merges 2 and 4 at batch 1-128 "
           "(1.00-1.8x; at 64 it tied merge 4)";
  }
  if (config.merge == smla::kMergeLastCta) {
    // H200, 2026-12-03 (BENCHMARKS.md section 7, fifteenth session): on the winners' 4 + 2 warp
    // structure, the fastest merge-3 launch trailed merges 1 / 2 by 5.4x / 2.7x / 1.65x / 1.33x /
    // 1.19x at batch 1 / 8 / 32 / 64 / 128 and 1.02x at 256; at 512 (one split per row) it is
    // merge 0's launch. The last CTA merges its row alone, a warp per head, each head a chain of
    // loads from L2.
    return "measured to lose: the last-CTA merge (merge 3) trailed merges 1 and 2 at batch "
           "1-256 (1.02-5.4x); one CTA's merge of a row is bound by its loads' latency";
  }
  return {};
}

// Four producer warps issue a 64-token tile's bulk copies 16 a warp (producer_rows.h), twice the
// issue rate of two. H100, 2026-12-07 (BENCHMARKS.md section 7, forty-first session): 3-5 %
// faster at batch 92 and 100 where each CTA runs alone on its SM (one CTA an SM, TARGET_CTAS
// 128, merge 4), level at 64 and 256, 1-12 % slower where two CTAs share an SM (128 registers
// under that bound; 69, 72, 88, 136, 416). Swept where it won: two kernels (2 and 3 stages, see
// deep_four_producer_ring) and four launches each a shape, so that the sweep picks it per batch.
std::string four_producers_trim(const KernelConfig& config) {
  if (config.producers != 4) return {};
  if (config.block_t != 64 || config.num_warps != 4 || config.ctas_per_sm != 1 ||
      config.schedule != smla::kScheduleSplits) {
    return "left out for sweep time: four producer warps are swept on 64-token tiles of 4 "
           "consumer warps, one CTA an SM, schedule 0 (where they won: batch 92-100 on sm_90)";
  }
  if (config.merge != smla::kMergeCombineBf16 || config.target_ctas == kTargetOneWave) {
    return "left out for sweep time: four producer warps are swept with bf16 partials (merge 4) "
           "at TARGET_CTAS 128-1024 (where they won)";
  }
  return {};
}

// A lone CTA on its SM streams with more bytes in flight: H100, 2026-12-07 (BENCHMARKS.md
// section 7, forty-third session), four producer warps with 3 stages of 64 tokens, one CTA an SM,
// one split a row (batch 92-112 of 16 heads: one wave) ran 1.8-4.1 % faster than the best 2-stage
// kernel of two or four producer warps (and 2.9 % at 48), slower at 56-88 and 116-128; 4 stages
// never beat 3 by more than 0.2 %, two producer warps' 3-4 stages never beat the 2-stage winners
// by more than 1 %. So the 192-token ring is swept on that kernel only.
bool deep_four_producer_ring(const KernelConfig& config) {
  return config.producers == 4 && config.block_t == 64 && config.num_stages == 3;
}

// The tile-dividing schedules' kernels take the token softmax only under a launch bound of two
// CTAs an SM (split_pipelined.cuh's kTokenSoftmax: one CTA an SM without it), so that bound is
// swept for them where the fp8 token softmax applies (bf16 caches compile the same kernel under
// either bound: a few launches timed twice).
bool token_softmax_bound(const KernelConfig& config) {
  return smla::divides_tiles(config.schedule) && config.ctas_per_sm == 2 &&
         smla::token_softmax(config.block_t, config.block_h, config.num_warps, config.mma_path,
                             smla::kFp8DsMla);
}

}  // namespace

std::string measured_trim(const KernelConfig& config) {
  if (config.kv_unpack != 0) {
    return "measured to lose: the bitwise e4m3 unpack trailed cvt by 1-26 % at batch 1-128 "
           "(the integer pipe is the busier one on sm_90)";
  }
  if (config.ctas_per_sm != 1 && !token_softmax_bound(config)) {
    return "measured to lose: launch bounds of 2-3 CTAs per SM (8 warps at 96 registers, "
           "4 + 1 warps at 128) trailed the 1-CTA bound's winners at batch 1-128";
  }
  if (config.target_ctas == kTargetOneWave && (config.num_warps != 4 || config.producers != 2)) {
    // Not measured to lose: every launch of it is one more screen at every anchor (the identity
    // cannot tell it from the counts it equals), so it goes first to the structure that wins.
    return "left out for sweep time: TARGET_CTAS 0 (one wave) is swept on the 4 consumer + 2 "
           "producer warp kernels (every winner from batch 2 up runs them)";
  }
  if (config.mma_path == 0) {
    if (is_seeds_default(config) || (config.num_warps == 8 && config.num_stages <= 2)) return {};
    return "measured to lose: mma_path 0 is swept at 8 warps x 1-2 stages (all its winners) "
           "and at its default";
  }
  const int ring_tokens = config.block_t * config.num_stages;
  if ((ring_tokens < 64 || ring_tokens > 128) && !deep_four_producer_ring(config)) {
    return "measured to lose: pipelined rings hold 64-128 tokens, or 3 x 64 with four producer "
           "warps (BLOCK_T x NUM_STAGES = " +
           std::to_string(ring_tokens) + ")";
  }
  if (config.producers == 1) {
    return "measured to lose: one producer warp trailed two by 1-4 % at every batch";
  }
  if (std::string reason = four_producers_trim(config); !reason.empty()) return reason;
  if (config.block_t == 16 && config.num_warps == 8) {
    return "measured to lose: 16-token tiles run with 4 consumer warps";
  }
  if (std::string reason = merge_trim(config); !reason.empty()) return reason;
  if (config.schedule == smla::kScheduleBalanced) {
    // H200, 2026-12-05 (BENCHMARKS.md section 7, twenty-fifth session): below one wave of rows
    // schedule 2 divides the tiles as schedule 1 does (the reference sweep's schedule table:
    // within +-2 % at batch 1-256); above it, it keeps rows whole and was 2-7 % faster at 272-400
    // and level or faster at 432-512 (0.96-1.00x). Its compiles and screens cost the cold sweep
    // ~15 s for nothing.
    return "measured to lose: schedule 2 (whole rows) divides as schedule 1 below one wave of "
           "rows and was 0-7 % faster above it (batch 256-512)";
  }
  if (smla::divides_tiles(config.schedule) && (config.num_warps != 4 || config.producers != 2)) {
    // Not measured to lose: a second compiled kernel per structure would add its compile time to
    // every cold sweep; the structure every winner from batch 2 up runs gets it first.
    return "left out for compile time: the tile-dividing schedules (1 and 2) are swept on the 4 "
           "consumer + 2 producer warp kernels (every winner from batch 2 up runs them)";
  }
  if (smla::divides_tiles(config.schedule) && config.target_ctas != 128) {
    // geometry.cpp's launch identity already made these one launch, measured once; left out here
    // they also leave the plan's survivors and the batch search's candidates.
    return "left out as one launch: the tile-dividing schedules' grid is one wave of the kernel's "
           "resident CTAs whatever TARGET_CTAS says (swept at TARGET_CTAS 128)";
  }
  return {};
}

}  // namespace tuner::smla_family
