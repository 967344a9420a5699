#pragma once
// Kernel parameter blocks, shared by the NVRTC-compiled kernels and the host that fills them.
// Pointers are device addresses; the host stores CUdeviceptr values into them.

namespace smla {

struct SplitParams {
  const unsigned short* q;  // [batch][n_local_heads][576] bf16
  const unsigned char* kv;  // [num_tokens][row bytes]; byte offsets are 64-bit
  const int* indices;       // [batch][topk] flat token ids, -1 = invalid
  unsigned short* out;      // [batch][n_local_heads][512] bf16, written when num_splits == 1
  float* lse;               // [batch][n_local_heads], natural log, written when num_splits == 1
  float* partial_out;       // [batch][n_local_heads][num_splits][512] fp32 (bf16 under
                            // kPartialsBf16, at the same address), already normalized
  float* partial_lse;       // [batch][n_local_heads][num_splits]
  int batch;
  int n_local_heads;
  int topk;
  int num_splits;
  int tokens_per_split;  // a multiple of BLOCK_T
  float scale_log2;      // softmax_scale * log2(e)
  // layout.h's Partials: kPartialsCluster when launched as clusters of num_splits CTAs that merge
  // in shared memory (cluster_merge.cuh; partial_out unused), kPartialsBf16 for bf16 partials
  // (pipelined kernels only, like the cluster merge).
  int partials;
  // schedule.h: 0 (kScheduleSplits) or the balanced schedule's CTA count N, then num_splits is the
  // most parts of any row (the partials' stride) and tokens_per_split is unused.
  int balanced_ctas;
  int head_groups;    // ceil(n_local_heads / BLOCK_H)
  int tiles_per_row;  // ceil(topk / BLOCK_T)
  // merge 3 (last_cta_merge.cuh): one ticket counter per row [batch][head_groups], zeroed by this
  // launch's combine kernel in reset mode before any is taken; null otherwise.
  unsigned* row_tickets;
  // merge 5 (row_slice_merge.cuh): the same counters, where every split of a row waits for the
  // row's others and merges a slice; null otherwise (row_tickets is then null).
  unsigned* row_arrivals;
  // schedule.h's kScheduleWholeRows: the whole rows each CTA owns (W); 0 under the balanced
  // schedule and under per-row splits. The rows divided by tiles before them are derived below.
  int whole_rows;
  // The tile-dividing schedules' divisors (schedule.h's fast_divisor multipliers, made by the
  // host): of the division's CTAs min(tail_rows x tiles_per_row, balanced_ctas), of tiles_per_row
  // and of head_groups. The kernels rebuild the division with tail_division; tail_rows =
  // batch x head_groups - whole_rows x balanced_ctas. (In place of a tail_rows field: the block
  // stays at 128 bytes, see schedule.h's divisor_shift.)
  unsigned ctas_multiplier;
  unsigned row_multiplier;
  unsigned head_group_multiplier;
};

// A combine thread's partials in flight: the whole-row combine kernel takes rows of at most this
// many parts (one load each), and the general one cuts the latent dims into the fewest chunks that
// leave each thread at most this many (deploy.cpp's combine_dim_chunks, combine_whole_row).
constexpr int kCombineInFlight = 8;

struct CombineParams {
  const float* partial_out;
  const float* partial_lse;
  unsigned short* out;
  float* lse;
  int batch;
  int n_local_heads;
  int num_splits;
  int dim_chunks;  // gridDim.z: the 512 latent dims cut into 1, 2, 4 or 8 chunks (deploy.hpp)
  // The split's balanced schedule (schedule.h), 0 for per-row splits: a row's parts are counted
  // from it, and a row of one part was written out by the split kernel.
  int balanced_ctas;
  int block_h;
  int tiles_per_row;
  // Reset mode (merge 3): the kernel only zeroes reset_count ticket counters and merges nothing;
  // reset_tickets null otherwise. (The count first: no padding before the pointer.)
  int reset_count;
  unsigned* reset_tickets;
  int bf16_partials;  // 1: partial_out holds bf16 values (layout.h's kMergeCombineBf16)
  int head_groups;    // ceil(n_local_heads / block_h)
  // As SplitParams': under kScheduleWholeRows the rows from tail_rows on were written out whole by
  // the split kernel; the balanced division covers rows below it.
  int whole_rows;
  int tail_rows;
  unsigned ctas_multiplier;  // as SplitParams'
  unsigned row_multiplier;
};

// No inner padding: each block's size is the sum of its fields, so two blocks with equal fields
// have equal bytes (the serving tests compare the bytes the kernel receives).
static_assert(sizeof(SplitParams) == 9 * sizeof(void*) + 14 * sizeof(int), "SplitParams padded");
static_assert(sizeof(SplitParams) <= 128,
              "SplitParams past 128 bytes (schedule.h's divisor_shift)");
static_assert(sizeof(CombineParams) == 5 * sizeof(void*) + 14 * sizeof(int),
              "CombineParams padded");

struct ReferenceParams {
  const unsigned short* q;
  const unsigned char* kv;
  const int* indices;
  float* out;  // [batch][n_local_heads][512] fp32
  float* lse;  // [batch][n_local_heads]
  int batch;
  int n_local_heads;
  int topk;
  float softmax_scale;
};

}  // namespace smla
