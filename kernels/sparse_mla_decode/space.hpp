#pragma once
// The parameter space of the sparse MLA decode family and its typed view of a config.
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner::smla_family {

inline constexpr const char* kFamilyName = "sparse_mla_decode";

struct KernelConfig {
  int block_t = 16;  // tokens per tile
  int block_h = 16;  // heads per CTA
  int num_warps = 4;
  int num_stages = 2;     // KV ring depth
  int mma_path = 0;       // smla::MmaPath: 0 f16 via shared memory, 1 f16 in registers, 2 e4m3
  int producers = 0;      // producer warps (bulk copies + mbarriers); 0: consumers copy
  int kv_unpack = 0;      // smla::KvUnpack: e4m3 -> f16 by cvt (0), bits (1), bits for V only (2)
  int ctas_per_sm = 1;    // the launch bound's minimum of resident CTAs (registers follow)
  int target_ctas = 512;  // launch-only: drives the split count (0: one wave, deploy.hpp)
  int merge = 0;          // launch-only smla::Merge: combine kernel (0), the same as a programmatic
                  // dependent (1, was `pdl`), the splits as a cluster merging in shared memory (2),
                  // the last CTA of a row (3), merge 1 over bf16 partials (4)
  int schedule =
      0;  // smla::Schedule (schedule.h): per-row splits (0), balanced tiles (1), whole rows (2)
  bool operator==(const KernelConfig& other) const = default;
};

// BLOCK_T {16,32,64}, BLOCK_H {16,32,64}, NUM_WARPS {2,4,8}, NUM_STAGES {1,2,3,4,6,8},
// MMA_PATH {0,1,2}, PRODUCERS {0,1,2}, KV_UNPACK {0,1,2}, CTAS_PER_SM {1,2,3},
// TARGET_CTAS {0 (one wave of resident CTAs),128,256,512,1024} and MERGE {0-5} (launch-only),
// SCHEDULE {0,1,2}.
const std::vector<Parameter>& parameter_space();

// The seeds' baseline: BLOCK_T 16, BLOCK_H 16, 4 warps, 2 stages, mma_path 0 (dequantize through
// shared memory), no producer warps, TARGET_CTAS 512.
KernelConfig default_config();

// Configs stored before mma_path/producers/kv_unpack/ctas_per_sm/schedule existed read as
// 0/0/0/1/0: the kernel they measured; one stored with `pdl` (before `merge` replaced it) reads
// merge = pdl.
KernelConfig from_config(const Config& config);
Config to_config(const KernelConfig& config);

// The template instantiations a compile of this config must produce.
std::string split_kernel_name(const KernelConfig& config, KvFormat kv_format);
std::string combine_kernel_name();            // the general combine (and merge 3's ticket reset)
std::string combine_whole_row_kernel_name();  // rows of at most 8 parts (deploy.hpp)

// Empty when the config can run this shape; otherwise why not ("BLOCK_H 32 > 16 local heads", or a
// structural rule of the chosen mma_path).
std::string shape_mismatch(const KernelConfig& config, const Shape& shape);
// The values of one parameter that shape_mismatch rules out for every config of `shape` (BLOCK_H
// past the padded local heads; e4m3 MMA and the e4m3 unpacks on the bf16 cache): why, else empty.
std::string value_mismatch(std::string_view param, int value, const Shape& shape);

// Empty when the config is inside the region the sweep measures; otherwise which measurement put
// it outside ("measured to lose: ..."). These trims keep the default 11-batch sweep within its
// time (BENCHMARKS.md, "what the sweep leaves out"); shape_mismatch() says what cannot run at all.
std::string measured_trim(const KernelConfig& config);

// Empty when the budget arch has the instructions the config's path is for; otherwise why not.
// e4m3 mma.sync is native on sm_89 and sm_120, missing before sm_89, and emulated by ptxas on
// sm_90 (unpack to f16 + two HMMA per MMA: 1.9x slower than mma_path 1 on the H200 at batch 128,
// BENCHMARKS.md), so mma_path 2 is planned for sm_89 / sm_120 budgets only.
std::string arch_mismatch(const KernelConfig& config, int arch_sm);

}  // namespace tuner::smla_family
