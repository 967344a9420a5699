#include "kernels/sparse_mla_decode/deploy.hpp"

#include <algorithm>

#include "core/device_pointer.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/schedule.h"

namespace tuner::smla_family {

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

constexpr std::size_t kAlignment = 256;  // partial_lse and the row tickets: 256-byte boundaries
std::size_t align_up(std::size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// The row tickets of merges 3 and 5: one per (batch item, head group).
int ticket_count(const DecodeDims& dims, const SplitPlan& plan) {
  return dims.batch * plan.head_groups;
}
constexpr float kLog2e = 1.4426950408889634f;

// Balanced: N CTAs over every row's tiles; whole rows: W = floor(R / N) rows a CTA whole, the Rt
// rows left over divided by tiles. num_splits is the most CTAs any row spans.
bool plan_balanced(const DecodeDims& dims, const GeometryParams& params,
                   const ClusterCapacity& capacity, SplitPlan& plan) {
  if (!smla::divides_tiles(params.schedule)) return false;
  const long long rows = static_cast<long long>(dims.batch) * plan.head_groups;
  const long long total_tiles = rows * plan.tiles_per_row;
  if (total_tiles >= (1LL << 31)) {  // the kernel counts tiles in int: no grid, no launch
    plan.num_splits = 0;
    return true;
  }
  const int resident = capacity.at(1) > 0 ? capacity.at(1) : params.target_ctas;
  plan.balanced_ctas = static_cast<int>(
      std::min<long long>(total_tiles, std::clamp(resident, 1, smla::kMaxBalancedCtas)));
  const smla::WholeRows whole = params.schedule == smla::kScheduleWholeRows
                                    ? smla::whole_rows_of(rows, plan.balanced_ctas)
                                    : smla::WholeRows{0, static_cast<int>(rows)};
  plan.whole_rows = whole.per_cta;
  plan.tail_rows = whole.tail_rows;
  plan.num_splits = whole.tail_rows > 0
                        ? max_row_parts(smla::tail_balance(whole.tail_rows, plan.tiles_per_row,
                                                           plan.balanced_ctas))
                        : 1;
  plan.requested_splits = plan.num_splits;
  plan.tokens_per_split = 0;
  return true;
}

// The tile-dividing schedules' division, whose divisors the kernels take (params.h): the tail
// rows' tiles over the balanced CTAs (every row under the balanced schedule), with its divisor of
// tiles_per_row even where no tail row is left (the whole rows still find their rows by it);
// zero under per-row splits.
smla::Balance division_of(const SplitPlan& plan) {
  if (plan.balanced_ctas == 0) return {};
  return smla::tail_balance(plan.tail_rows, plan.tiles_per_row, plan.balanced_ctas);
}

}  // namespace

int max_parts_by_cta_starts(const smla::Balance& balance) {
  const long long step = balance.total_tiles / balance.ctas;   // a CTA's tiles, rounded down
  const long long extra = balance.total_tiles % balance.ctas;  // c G mod N grows by this
  const long long step_rows = step / balance.tiles_per_row;
  const int step_pos = static_cast<int>(step % balance.tiles_per_row);
  long long remainder = 0;  // c G mod N
  long long row = 0;        // CTA c's first row, and its first tile in that row
  int pos = 0;
  int parts = 1;  // the CTAs holding tiles of `row`, up to CTA c
  int most = 1;
  for (int cta = 1; cta < balance.ctas; ++cta) {
    int advance = step_pos;
    remainder += extra;
    if (remainder >= balance.ctas) {
      remainder -= balance.ctas;
      ++advance;
    }
    long long next_row = row + step_rows;
    pos += advance;
    if (pos >= balance.tiles_per_row) {
      pos -= balance.tiles_per_row;
      ++next_row;
    }
    // In the same row: one more part. In a later row: this CTA is its first part when it starts
    // on the row's first tile, else its second (CTA c - 1 holds the row's first tiles).
    parts = next_row == row ? parts + 1 : (pos == 0 ? 1 : 2);
    row = next_row;
    most = std::max(most, parts);
  }
  return most;
}

int max_row_parts(const smla::Balance& balance) {
  const long long rows = balance.total_tiles / balance.tiles_per_row;
  if (rows * 3 >= balance.ctas) return max_parts_by_cta_starts(balance);
  int most = 1;
  for (long long row = 0; row < rows; ++row)
    most = std::max(most, smla::row_parts(balance, row).count);
  return most;
}

SplitPlan split_plan(const DecodeDims& dims, const GeometryParams& params,
                     const ClusterCapacity& capacity) {
  SplitPlan plan;
  plan.block_h = params.block_h;
  plan.head_groups = ceil_div(dims.local_heads, params.block_h);
  const int tiles = plan.tiles_per_row = ceil_div(dims.topk, params.block_t);
  plan.bf16_partials = params.merge == smla::kMergeCombineBf16 ||  // either schedule
                       params.merge == smla::kMergeRowSlices;
  if (plan_balanced(dims, params, capacity, plan)) return plan;
  // Rounded down, so that the grid never exceeds TARGET_CTAS (unless one split already does): a
  // config tuned at one batch keeps its number of waves at the smaller batches the bucket rule
  // hands it (rounded up, the batch-32 winner made 140 CTAs on 132 SMs at batch 28: BENCHMARKS §9).
  plan.cluster = params.merge == smla::kMergeCluster;
  plan.last_cta = params.merge == smla::kMergeLastCta;
  plan.row_slices = params.merge == smla::kMergeRowSlices;
  const int most_splits = plan.cluster      ? std::min(tiles, smla::kMaxClusterSplits)
                          : plan.row_slices ? std::min(tiles, smla::kMaxRowSliceSplits)
                                            : tiles;
  const int target_ctas =
      params.target_ctas == kTargetOneWave ? capacity.at(1) : params.target_ctas;
  plan.requested_splits = std::clamp(target_ctas / (dims.batch * plan.head_groups), 1, most_splits);
  int tiles_per_split = ceil_div(tiles, plan.requested_splits);
  plan.num_splits = ceil_div(tiles, tiles_per_split);
  const int rows = dims.batch * plan.head_groups;
  const auto one_split_fewer = [&] {
    plan.requested_splits = plan.num_splits - 1;
    tiles_per_split = ceil_div(tiles, plan.requested_splits);
    plan.num_splits = ceil_div(tiles, tiles_per_split);
  };
  // The cluster merge's grid in one wave of clusters (the size is the final split count).
  while (plan.cluster && plan.num_splits > 1 && capacity.at(plan.num_splits) > 0 &&
         rows > capacity.at(plan.num_splits)) {
    one_split_fewer();
  }
  // merge 5's splits wait for each other: the whole grid in one wave of resident CTAs.
  while (plan.row_slices && plan.num_splits > 1 && capacity.at(1) > 0 &&
         rows * plan.num_splits > capacity.at(1)) {
    one_split_fewer();
  }
  plan.tokens_per_split = tiles_per_split * params.block_t;
  return plan;
}

int combine_dim_chunks(int num_splits) {
  constexpr int kMaxChunks = 8;
  int chunks = 1;
  while (chunks < kMaxChunks && chunks * smla::kCombineInFlight < num_splits) chunks *= 2;
  return chunks;
}

bool combine_whole_row(const SplitPlan& plan) { return plan.num_splits <= smla::kCombineInFlight; }

std::array<unsigned, 3> split_grid(const DecodeDims& dims, const SplitPlan& plan) {
  if (plan.balanced_ctas > 0) return {static_cast<unsigned>(plan.balanced_ctas), 1u, 1u};
  return {static_cast<unsigned>(plan.num_splits), static_cast<unsigned>(plan.head_groups),
          static_cast<unsigned>(dims.batch)};
}

std::array<unsigned, 3> combine_grid(const DecodeDims& dims, const SplitPlan& plan) {
  // The tile-dividing schedules cut only rows below tail_rows (all of them when balanced).
  const int batch_items =
      plan.balanced_ctas > 0 ? ceil_div(plan.tail_rows, plan.head_groups) : dims.batch;
  return {static_cast<unsigned>(dims.local_heads), static_cast<unsigned>(batch_items),
          static_cast<unsigned>(combine_dim_chunks(plan.num_splits))};
}

smla::SplitParams pack_split(const DecodeBuffers& buffers, const DecodeDims& dims,
                             const SplitPlan& plan, float softmax_scale) {
  smla::SplitParams split{};
  split.q = device_pointer<const unsigned short>(buffers.q);
  split.kv = device_pointer<const unsigned char>(buffers.kv);
  split.indices = device_pointer<const int>(buffers.indices);
  split.out = device_pointer<unsigned short>(buffers.out);
  split.lse = device_pointer<float>(buffers.lse);
  split.partial_out = device_pointer<float>(buffers.partial_out);
  split.partial_lse = device_pointer<float>(buffers.partial_lse);
  split.batch = dims.batch;
  split.n_local_heads = dims.local_heads;
  split.topk = dims.topk;
  split.num_splits = plan.num_splits;
  split.tokens_per_split = plan.tokens_per_split;
  split.scale_log2 = softmax_scale * kLog2e;
  // A row one CTA runs whole writes no partials: the field then says fp32, as under merge 1.
  split.partials = plan.merges_in_cluster()                      ? smla::kPartialsCluster
                   : plan.bf16_partials && plan.keeps_partials() ? smla::kPartialsBf16
                                                                 : smla::kPartialsFp32;
  split.balanced_ctas = plan.balanced_ctas;
  split.head_groups = plan.head_groups;
  split.tiles_per_row = plan.tiles_per_row;
  split.row_tickets =
      plan.merges_last_cta() ? device_pointer<unsigned>(buffers.row_tickets) : nullptr;
  split.row_arrivals =
      plan.merges_row_slices() ? device_pointer<unsigned>(buffers.row_tickets) : nullptr;
  split.whole_rows = plan.whole_rows;
  const smla::Balance division = division_of(plan);
  split.ctas_multiplier = division.by_ctas.multiplier;
  split.row_multiplier = division.by_row.multiplier;
  split.head_group_multiplier = smla::fast_divisor(plan.head_groups).multiplier;
  return split;
}

smla::CombineParams pack_combine(const DecodeBuffers& buffers, const DecodeDims& dims,
                                 const SplitPlan& plan) {
  smla::CombineParams combine{};
  combine.partial_out = device_pointer<const float>(buffers.partial_out);
  combine.partial_lse = device_pointer<const float>(buffers.partial_lse);
  combine.out = device_pointer<unsigned short>(buffers.out);
  combine.lse = device_pointer<float>(buffers.lse);
  combine.batch = dims.batch;
  combine.n_local_heads = dims.local_heads;
  combine.num_splits = plan.num_splits;
  combine.dim_chunks = combine_dim_chunks(plan.num_splits);
  combine.balanced_ctas = plan.balanced_ctas;
  combine.block_h = plan.block_h;
  combine.tiles_per_row = plan.tiles_per_row;
  combine.bf16_partials = plan.bf16_partials ? 1 : 0;
  combine.head_groups = plan.head_groups;
  combine.whole_rows = plan.whole_rows;
  combine.tail_rows = plan.tail_rows;
  const smla::Balance division = division_of(plan);
  combine.ctas_multiplier = division.by_ctas.multiplier;
  combine.row_multiplier = division.by_row.multiplier;
  return combine;
}

smla::CombineParams pack_reset(const DecodeBuffers& buffers, const DecodeDims& dims,
                               const SplitPlan& plan) {
  smla::CombineParams reset{};
  reset.reset_tickets = device_pointer<unsigned>(buffers.row_tickets);
  reset.reset_count = ticket_count(dims, plan);
  return reset;
}

std::array<unsigned, 3> reset_grid(const DecodeDims& dims, const SplitPlan& plan) {
  return {
      static_cast<unsigned>(ceil_div(ticket_count(dims, plan), static_cast<int>(kCombineThreads))),
      1u, 1u};
}

LaunchOrder split_order(const SplitPlan& plan) {
  return plan.takes_tickets() ? LaunchOrder::programmatic : LaunchOrder::stream;
}

LaunchOrder combine_order(int merge) {
  return merge == smla::kMergeCombinePdl || merge == smla::kMergeCombineBf16
             ? LaunchOrder::programmatic
             : LaunchOrder::stream;
}

WorkspaceLayout workspace_layout(const DecodeDims& dims, const SplitPlan& plan) {
  WorkspaceLayout layout;
  if (!plan.keeps_partials()) return layout;
  const std::size_t rows = static_cast<std::size_t>(dims.batch) *
                           static_cast<std::size_t>(dims.local_heads) *
                           static_cast<std::size_t>(plan.num_splits);
  const std::size_t element_bytes = plan.bf16_partials ? 2 : sizeof(float);
  const std::size_t out_bytes = rows * static_cast<std::size_t>(smla::kLatentDim) * element_bytes;
  layout.partial_lse_offset = align_up(out_bytes);
  layout.bytes = layout.partial_lse_offset + rows * sizeof(float);
  if (plan.takes_tickets()) {
    layout.tickets_offset = align_up(layout.bytes);
    layout.bytes = layout.tickets_offset +
                   static_cast<std::size_t>(ticket_count(dims, plan)) * sizeof(unsigned);
  }
  return layout;
}

DecodeBuffers place_partials(DecodeBuffers buffers, std::uint64_t workspace,
                             const WorkspaceLayout& layout) {
  buffers.partial_out = workspace;
  buffers.partial_lse = workspace + layout.partial_lse_offset;
  buffers.row_tickets = layout.tickets_offset > 0 ? workspace + layout.tickets_offset : 0;
  return buffers;
}

std::vector<int> wave_edge_batches(int local_heads, const std::vector<int>& block_h_values,
                                   int sm_count, int max_batch) {
  std::vector<int> batches;
  for (const int block_h : block_h_values) {
    if (block_h > local_heads || sm_count < 1) continue;
    const int head_groups = ceil_div(local_heads, block_h);
    for (int waves = 1;; ++waves) {
      const int batch = waves * sm_count / head_groups;
      if (batch > max_batch) break;
      if (batch >= 1) batches.push_back(batch);
    }
  }
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  return batches;
}

}  // namespace tuner::smla_family
