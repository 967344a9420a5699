#pragma once
// The family's launch geometry and parameter packing as a function of (shape, batch, config), with
// no NVRTC, no tuner and no allocation: the one source of truth for the tuner's host launch code
// (launch.cpp, geometry.cpp) and for the serving launcher (serve.cpp in libtunedb_cuda).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cluster_capacity.hpp"
#include "core/launch_order.hpp"
#include "templates/sparse_mla_decode/params.h"
#include "templates/sparse_mla_decode/schedule.h"

namespace tuner::smla_family {

// The dimensions a launch needs (the canonical shape's local_heads and topk) and the batch.
struct DecodeDims {
  int batch = 1;
  int local_heads = 16;
  int topk = 2048;
};

// TARGET_CTAS 0: as many CTAs as one wave of the split kernel's resident CTAs on the launching
// device (capacity.at(1)), so that the split count follows the device's wave instead of a count
// tuned elsewhere. On the H200's 264 (2 CTAs x 132 SMs) batch 66 gets 4 splits, 264 CTAs of 8
// tiles, where 256 gives 3 (198 CTAs of 11 tiles) and 512 gives 7 (1.75 waves). Without a
// capacity (no device: plans, the launch identity) one split a row.
inline constexpr int kTargetOneWave = 0;

// The config values the geometry reads (the rest of a config is baked into the cubin).
struct GeometryParams {
  int block_t = 16;
  int block_h = 16;
  int target_ctas = 512;  // kTargetOneWave: capacity.at(1)
  int merge = 0;  // smla::Merge (layout.h); the cluster merge caps the splits at a cluster's size
  int schedule = 0;  // smla::Schedule (schedule.h)
};

// head_groups = ceil(local_heads / BLOCK_H); requested = clamp(floor(TARGET_CTAS / (batch x
// head_groups)), 1, tiles) (TARGET_CTAS kTargetOneWave: the resident CTAs, capacity.at(1)) with
// tiles = ceil(topk / BLOCK_T), and at most smla::kMaxClusterSplits
// with the cluster merge; each split owns ceil(tiles / requested) whole tiles, and splits that
// would own none are not launched (an idle CTA is not free: on an H100 at batch 60, plans whose
// grids held idle CTAs returning at once ran 26 % slower than the uniform plan, the same plans
// without them 1 %; BENCHMARKS.md section 7, forty-fourth session).
struct SplitPlan {
  int head_groups = 0;
  int requested_splits = 0;
  int num_splits = 0;        // <= requested_splits
  int tokens_per_split = 0;  // a multiple of BLOCK_T
  bool cluster = false;      // merge 2: the splits of a (head group, batch item) are one cluster
  int block_h = 0;
  int tiles_per_row = 0;  // ceil(topk / BLOCK_T)
  // The balanced schedule's CTA count N (schedule.h; 0: per-row splits): one wave of the kernel's
  // resident CTAs (capacity.at(1)), or TARGET_CTAS where that is not known, at most the tiles; then
  // num_splits is the most parts of any row (the partials' stride).
  int balanced_ctas = 0;
  // The tile-dividing schedules' rows (schedule.h): the whole rows each CTA owns (W, only under
  // kScheduleWholeRows) and the rows below them divided by tiles (Rt; batch x head_groups when
  // balanced). 0 and 0 with per-row splits.
  int whole_rows = 0;
  int tail_rows = 0;
  // merge 3: the CTA that finishes a row last merges it (per-row splits only, last_cta_merge.cuh).
  bool last_cta = false;
  // merge 5: the splits of a row wait for each other and merge a slice each (row_slice_merge.cuh;
  // per-row splits only, at most smla::kMaxRowSliceSplits, the grid in one wave).
  bool row_slices = false;
  // merges 4 and 5: the partials are stored as bf16 (half the workspace's partial bytes).
  bool bf16_partials = false;
  bool merges_in_cluster() const { return cluster && num_splits > 1; }
  bool merges_last_cta() const { return last_cta && num_splits > 1; }
  bool merges_row_slices() const { return row_slices && num_splits > 1; }
  // merges 3 and 5 count a row's splits: the row tickets, zeroed by the combine kernel's reset
  // mode before the split, which runs as its programmatic dependent.
  bool takes_tickets() const { return merges_last_cta() || merges_row_slices(); }
  // The split's partials (fp32, or bf16 under merges 4 and 5) go through global memory (the
  // workspace).
  bool keeps_partials() const { return num_splits > 1 && !cluster; }
  // The combine kernel merges them after the split; under merges 3 and 5 it runs before the
  // split, only to zero the row tickets (pack_reset).
  bool runs_combine() const { return keeps_partials() && !takes_tickets(); }
  // The split grid's cluster size along x (1: an ordinary launch).
  unsigned cluster_x() const {
    return merges_in_cluster() ? static_cast<unsigned>(num_splits) : 1u;
  }
};

// The balanced schedule's widest row: the most CTAs that hold tiles of one row, the plan's
// num_splits (the partials' stride per row); the kernels and the combine find each row's parts
// with schedule.h's row_parts. This one walks the N - 1 CTA starts floor(c G / N) in order with
// additions only: a row's parts are the CTA that holds its first tile plus every CTA that starts
// inside it.
int max_parts_by_cta_starts(const smla::Balance& balance);

// The same figure by the shorter walk: over the rows (row_parts, two cta_of_tile each: ~4 ns per
// row on a 2.6 GHz x86 core when they were 64-bit divisions) when they are under a third of the
// CTAs, else over the CTA starts (~1.5 ns each; bench/split_plan.cpp). The serving launcher plans
// on every launch.
int max_row_parts(const smla::Balance& balance);

// The balanced schedule (schedule.h) ignores TARGET_CTAS on a device (its grid is one wave of the
// resident CTAs); at 2^31 tiles or more (the kernel counts in int) it plans no grid (the driver
// refuses the launch).
// With the cluster merge and a known `capacity` (the split kernel's, on the launching device), the
// splits are the most, up to that count, whose batch x head_groups clusters the device holds at
// once (one wave of clusters; a cluster stays inside one GPC, so fewer fit than CTAs do), and one
// split (no cluster) when none fits. Without a capacity (no device: plans, tests) no cap.
SplitPlan split_plan(const DecodeDims& dims, const GeometryParams& params,
                     const ClusterCapacity& capacity = {});

// The caller's device buffers, as addresses. `partial_out` / `partial_lse` are the split partials
// (the workspace); unused when the plan runs no combine kernel.
struct DecodeBuffers {
  std::uint64_t q = 0;        // [batch][local_heads][576] bf16
  std::uint64_t kv = 0;       // [tokens][row bytes]
  std::uint64_t indices = 0;  // [batch][topk] int32 flat token ids, -1 = invalid
  std::uint64_t out = 0;      // [batch][local_heads][512] bf16
  std::uint64_t lse = 0;      // [batch][local_heads] fp32
  std::uint64_t partial_out = 0;
  std::uint64_t partial_lse = 0;
  std::uint64_t row_tickets = 0;  // merges 3 and 5: the row counters, [batch][head_groups] u32
};

// The split grid (x, y, z): (num_splits, head_groups, batch), or (balanced_ctas, 1, 1).
std::array<unsigned, 3> split_grid(const DecodeDims& dims, const SplitPlan& plan);

smla::SplitParams pack_split(const DecodeBuffers& buffers, const DecodeDims& dims,
                             const SplitPlan& plan, float softmax_scale);
smla::CombineParams pack_combine(const DecodeBuffers& buffers, const DecodeDims& dims,
                                 const SplitPlan& plan);
// merges 3 and 5: the combine kernel's parameters in its ticket-reset mode, and its grid (x, 1, 1).
// The reset runs first, stream-ordered; the split follows as its programmatic dependent.
smla::CombineParams pack_reset(const DecodeBuffers& buffers, const DecodeDims& dims,
                               const SplitPlan& plan);
std::array<unsigned, 3> reset_grid(const DecodeDims& dims, const SplitPlan& plan);
// How the split and the combine order on the stream (the tuner's and the serving launches): the
// split after the ticket reset of merges 3 and 5 as its programmatic dependent, the combine after
// the split as its programmatic dependent under merge 1; stream-ordered otherwise.
LaunchOrder split_order(const SplitPlan& plan);
LaunchOrder combine_order(int merge);

// The combine kernel's block size (combine.cuh is written for it).
inline constexpr unsigned kCombineThreads = 128;

// The combine's grid is (local_heads, batch, combine_dim_chunks): the latent dims cut into 1, 2,
// 4 or 8 chunks, the fewest that leave each thread at most 8 splits (combine.cuh keeps 8 loads in
// flight per thread), so small batches with many splits still spread over many CTAs.
int combine_dim_chunks(int num_splits);

// The combine's grid (x, y, z) = (local_heads, batch, combine_dim_chunks(num_splits)); under
// kScheduleWholeRows y covers only the batch items of the tail rows (the others were written out).
std::array<unsigned, 3> combine_grid(const DecodeDims& dims, const SplitPlan& plan);

// Which combine kernel merges the plan's partials (combine.cuh): the whole-row one when every row
// has at most smla::kCombineInFlight parts (one dim chunk), else the general one. The general one
// merges any plan's rows (older frozen DBs hold only it); the whole-row one is faster where it
// applies.
bool combine_whole_row(const SplitPlan& plan);

// Workspace layout: partial_out (fp32, under merge 4 bf16, [batch][heads][splits][512]) at offset
// 0, then partial_lse (fp32 [batch][heads][splits]) at the next 256-byte boundary, then under
// merges 3 and 5 the row tickets (u32 [batch][head_groups]) at the next. 0 bytes when the plan
// keeps no partials. Each launch zeroes the tickets itself: a workspace needs no initialising.
struct WorkspaceLayout {
  std::size_t partial_lse_offset = 0;
  std::size_t tickets_offset = 0;  // 0: no tickets
  std::size_t bytes = 0;
};
WorkspaceLayout workspace_layout(const DecodeDims& dims, const SplitPlan& plan);

// `buffers` with its partials placed in the workspace at address `workspace` by `layout`. The
// serving launcher and the tuner's timed launches (launch.cpp) both place them here, so that a DB
// median times the memory layout a deployment launches.
DecodeBuffers place_partials(DecodeBuffers buffers, std::uint64_t workspace,
                             const WorkspaceLayout& layout);

// The batches where a one-split grid (batch x head_groups CTAs) fills the last of its waves on
// `sm_count` SMs: for each head-group count that a BLOCK_H in `block_h_values` gives
// `local_heads` (BLOCK_H <= local_heads), floor(k x sm_count / head_groups) for k = 1, 2, ...,
// up to `max_batch`; sorted, without repeats. The bucket rule hands an untuned batch the winner of
// the next tuned batch, and just below a wave edge that winner was picked for a grid one wave
// larger (on the H200's 132 SMs: 20 % slower than the best at batch 130, 33 % at 260, BENCHMARKS
// section 9), so the sweep tunes these batches as well.
std::vector<int> wave_edge_batches(int local_heads, const std::vector<int>& block_h_values,
                                   int sm_count, int max_batch);

}  // namespace tuner::smla_family
