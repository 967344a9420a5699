#include "kernels/sparse_mla_decode/space.hpp"

#include <algorithm>

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
      {"fill", {0, 1}, true},  // 1: per-row splits of two sizes filling TARGET_CTAS (deploy.hpp)
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
                      value_or(config, "schedule", 0),
                      value_or(config, "fill", 0)};
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
                 {"schedule", config.schedule},
                 {"fill", config.fill}}};
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

// Per-row splits of two sizes: the pipelined kernels' per-row splits find a row's split size
// (pipelined_work.cuh); merges 2, 3 and 5 count every row's splits as the grid's.
std::string fill_mismatch(const KernelConfig& config) {
  if (config.fill == 0) return {};
  if (config.schedule != smla::kScheduleSplits) {
    return "fill 1 gives per-row splits (schedule 0) two sizes; schedule " +
           std::to_string(config.schedule) + " divides the tiles itself";
  }
  if (config.mma_path == 0) {
    return "fill 1 (per-row splits of two sizes) is built into the pipelined kernels (mma_path 1 "
           "or 2)";
  }
  if (config.merge == smla::kMergeCluster || config.merge == smla::kMergeLastCta ||
      config.merge == smla::kMergeRowSlices) {
    return "merge " + std::to_string(config.merge) +
           " counts a row's splits as the grid's: fill 1 (rows of two split counts) merges "
           "through the combine (merges 0, 1, 4)";
  }
  return {};
}

// What the kernels cannot do.
std::string structure_mismatch(const KernelConfig& config, KvFormat kv_format) {
  const std::string path = "mma_path " + std::to_string(config.mma_path);
  if (std::string reason = fill_mismatch(config); !reason.empty()) return reason;
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

}  // namespace tuner::smla_family
