#pragma once
// The one place that decides the split kernel's shared-memory layout and the host's register
// estimate. Included by the NVRTC-compiled kernel (templates/sparse_mla_decode/split.cuh) and by
// the host (kernels/sparse_mla_decode/resources.cpp), so the budget the planner checks and the
// bytes the kernel uses cannot drift apart. Plain C++ only: no standard headers (NVRTC has none).

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SMLA_HD __host__ __device__
#else
#define SMLA_HD
#endif

namespace smla {

enum KvFormat : int { kFp8DsMla = 0, kBf16 = 1 };

// How the split kernel feeds the tensor cores (the `mma_path` parameter):
//  kMmaSmemF16: the seeds' structure: fp8 tiles dequantized to f16 in shared memory, scores, P and
//               softmax statistics through shared memory, five block barriers per tile.
//  kMmaRegF16:  KV stays raw in shared memory; fragments are converted in registers (e4m3 -> f16,
//               one cvt per pair) and fed to f16 MMA; bf16 caches run bf16 MMA. Softmax and P live
//               in registers; one consumer barrier per tile (two without producer warps).
//  kMmaFp8:     as kMmaRegF16, but q is quantized to e4m3 per (head, 128-group) and QK and P.V run
//               as e4m3 m16n8k32 MMA; P is quantized per (head, tile) with the V group scale
//               folded in. fp8_ds_mla caches only.
enum MmaPath : int { kMmaSmemF16 = 0, kMmaRegF16 = 1, kMmaFp8 = 2 };

// How kMmaRegF16 turns fp8 KV fragments into f16 (the `kv_unpack` dimension; fp8_ds_mla only):
//  kUnpackCvt:   cvt.rn.f16x2.e4m3x2 (F2FP in SASS) for K and V; sm_90 runs F2FP at a low rate.
//  kUnpackBits:  shifts and masks on the integer pipe for K and V (ptx::e4m3x4_to_f16x4_bits:
//                values come out / 256, the 256 is applied in fp32 with the group scales).
//  kUnpackBitsV: V by bits, K by cvt, so the two pipes share the work.
enum KvUnpack : int { kUnpackCvt = 0, kUnpackBits = 1, kUnpackBitsV = 2 };
SMLA_HD constexpr bool unpack_k_bits(int unpack) { return unpack == kUnpackBits; }
SMLA_HD constexpr bool unpack_v_bits(int unpack) { return unpack != kUnpackCvt; }
constexpr float kBitsUnpackScale = 256.f;  // 2^(f16 exponent bias 15 - e4m3 bias 7)

constexpr int kHeadDim = 576;    // 512 latent + 64 rope
constexpr int kLatentDim = 512;  // V = the first 512 dims of the K row
constexpr int kRopeDim = 64;
constexpr int kGroupDim = 128;  // fp8_ds_mla: one fp32 scale per 128 latent dims
constexpr int kNumGroups = 4;
constexpr int kFp8ScaleOffset = 512;  // bytes into an fp8_ds_mla row
constexpr int kFp8RopeOffset = 528;
constexpr int kMmaM = 16;  // mma.sync m16n8k16: heads per m-tile
constexpr int kMmaN = 8;   // tokens (scores) or dims (P.V) per n-tile
constexpr int kMmaK = 16;
// Score k-steps are cut into segments of 4 (64 dims): 8 latent segments (two per scale group) and
// one rope segment. A segment never crosses a scale group, so its partial dot product is scaled
// once.
constexpr int kScoreSegments = 9;
constexpr int kKStepsPerSegment = 4;

SMLA_HD constexpr int kv_row_bytes(int kv_format) { return kv_format == kFp8DsMla ? 656 : 1152; }

SMLA_HD constexpr unsigned align_up(unsigned value, unsigned alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Warps split the score tile by (m-tile, n-tile) first; leftover warps split the segments.
SMLA_HD constexpr int score_ksplit(int block_t, int block_h, int num_warps) {
  const int tiles = (block_h / kMmaM) * (block_t / kMmaN);
  const int split = tiles >= num_warps ? 1 : num_warps / tiles;
  return split > kScoreSegments ? kScoreSegments : split;
}

// Token softmax on the pipelined f16 path of fp8 caches (token_softmax.cuh): where every consumer
// warp scores all BLOCK_H (= 16) heads of its own tokens whole (one score item a warp, no segment
// slices), it also runs their softmax: the warps publish their row maxima, each exponentiates its
// own tokens once and stores P (one copy per V scale group), and each reads P back as the A
// fragments of its dims' P.V. Otherwise every warp re-reads and exponentiates the whole tile.
// bf16 caches keep that (measured: -1 % at batch 128, +2.4 % at batch 1; BENCHMARKS.md section 7).
SMLA_HD constexpr bool token_softmax(int block_t, int block_h, int num_warps, int mma_path,
                                     int kv_format) {
  const int n_tiles = block_t / kMmaN;
  return kv_format == kFp8DsMla && mma_path == kMmaRegF16 && block_h == kMmaM &&
         n_tiles % num_warps == 0 && n_tiles / num_warps <= 4 &&
         score_ksplit(block_t, block_h, num_warps) == 1;
}

// bf16 rows read by ldmatrix get 16 extra bytes so that 8 consecutive rows start in different
// banks.
constexpr unsigned kBf16RowStride = kHeadDim * 2 + 16;  // 1168

struct SmemLayout {
  unsigned q_offset;  // [block_h][kBf16RowStride] bf16 q, rows past n_local_heads zeroed
  unsigned q_row_stride;
  unsigned ring_offset;  // [num_stages][block_t][ring_row_stride] raw KV rows (cp.async ring)
  unsigned ring_row_stride;
  unsigned ring_stage_bytes;
  unsigned token_offset;       // [num_stages][block_t] int token ids (-1: masked)
  unsigned staged_ids_offset;  // producers: [2][block_t] int ids loaded ahead (cp.async)
  unsigned dequant_offset;     // fp8 only: [block_t][kBf16RowStride] unscaled bf16 K/V tile
  unsigned dequant_bytes;
  unsigned scores_offset;  // [ksplit][block_h][block_t] fp32 partial scores
  unsigned ksplit;
  unsigned probs_offset;  // [prob_copies][block_h][probs_row_stride] 16-bit P (x group scale)
  unsigned probs_row_stride;
  unsigned prob_copies;   // fp8: one per scale group; bf16: one
  unsigned stats_offset;  // [3][block_h] fp32: running max (log2 units), running sum, rescale;
                          // token softmax: [2][block_h][num_warps] row maxima, row sums
  // Pipelined paths (mma_path 1, 2) only:
  unsigned q_scale_offset;     // kMmaFp8: [block_h][4] fp32 q scale per (head, group)
  unsigned scores_row_stride;  // floats per score row (block_t + 8: conflict-free fragment I/O)
  unsigned score_buffers;      // 2 with producer warps (consumers run a tile apart), else 1
  unsigned barrier_offset;     // producers: [2][num_stages] mbarriers (full, then empty), then
                               // q_free and q_full (q_handoff.cuh)
  unsigned total_bytes;        // dynamic shared memory per block
};

// q rows on the pipelined paths, kBf16RowStride bytes each (+16 B so that 8 consecutive rows start
// in different banks): kMmaRegF16 keeps 576 16-bit values; kMmaFp8 keeps 512 e4m3 values, then
// their 512 e4m3 residuals (q = scale * (hi + lo)), then the 64 bf16 rope values.
constexpr unsigned kPipelinedQResidualOffset = 512;
constexpr unsigned kPipelinedQRopeOffset = 1024;

// mbarriers of a producer-warp kernel: full and empty per ring stage, then q_free and q_full
// (q_handoff.cuh).
SMLA_HD constexpr int producer_barriers(int num_stages) { return 2 * num_stages + 2; }

SMLA_HD constexpr SmemLayout pipelined_layout(int block_t, int block_h, int num_warps,
                                              int num_stages, int kv_format, int mma_path,
                                              int producers) {
  SmemLayout layout{};
  const bool fp8 = kv_format == kFp8DsMla;
  unsigned offset = 0;
  layout.q_offset = offset;
  layout.q_row_stride = kBf16RowStride;
  offset = align_up(offset + unsigned(block_h) * layout.q_row_stride, 128);
  layout.q_scale_offset = offset;
  offset = align_up(offset + (mma_path == kMmaFp8 ? unsigned(block_h) * kNumGroups * 4u : 0u), 128);
  layout.ring_offset = offset;
  layout.ring_row_stride = fp8 ? unsigned(kv_row_bytes(kv_format)) : kBf16RowStride;
  layout.ring_stage_bytes = unsigned(block_t) * layout.ring_row_stride;
  offset = align_up(offset + unsigned(num_stages) * layout.ring_stage_bytes, 128);
  layout.token_offset = offset;
  layout.staged_ids_offset = offset + unsigned(num_stages) * unsigned(block_t) * 4u;
  offset =
      align_up(layout.staged_ids_offset + (producers > 0 ? 2u * unsigned(block_t) * 4u : 0u), 128);
  layout.scores_offset = offset;
  layout.ksplit = unsigned(score_ksplit(block_t, block_h, num_warps));
  layout.scores_row_stride = unsigned(block_t) + 8u;
  layout.score_buffers = producers > 0 ? 2u : 1u;
  unsigned scores_bytes =
      layout.score_buffers * layout.ksplit * unsigned(block_h) * layout.scores_row_stride * 4u;
  if (token_softmax(block_t, block_h, num_warps, mma_path, kv_format)) {
    // In the score buffer's place: P [prob_copies][block_h][probs_row_stride] (16-bit, +16 B a row
    // so that ldmatrix's 8 rows start in different banks), then the warps' row maxima and, at a
    // row's end, their row sums ([2][block_h][num_warps] fp32). At least the score buffer's bytes:
    // the merges after the token loop reuse them (merge 3's flag, merge 5's weights).
    layout.probs_offset = offset;
    layout.probs_row_stride = unsigned(block_t) * 2u + 16u;
    layout.prob_copies = unsigned(kNumGroups);  // fp8 caches only: one per V scale group
    layout.stats_offset = offset + layout.prob_copies * unsigned(block_h) * layout.probs_row_stride;
    const unsigned token_bytes =
        layout.stats_offset - offset + 2u * unsigned(block_h * num_warps) * 4u;
    scores_bytes = token_bytes > scores_bytes ? token_bytes : scores_bytes;
  }
  offset = align_up(offset + scores_bytes, 128);
  layout.barrier_offset = offset;
  offset =
      align_up(offset + (producers > 0 ? unsigned(producer_barriers(num_stages)) * 8u : 0u), 128);
  layout.total_bytes = offset;
  return layout;
}

SMLA_HD constexpr SmemLayout smem_layout(int block_t, int block_h, int num_warps, int num_stages,
                                         int kv_format, int mma_path = kMmaSmemF16,
                                         int producers = 0) {
  if (mma_path != kMmaSmemF16) {
    return pipelined_layout(block_t, block_h, num_warps, num_stages, kv_format, mma_path,
                            producers);
  }
  SmemLayout layout{};
  const bool fp8 = kv_format == kFp8DsMla;
  unsigned offset = 0;
  layout.q_offset = offset;
  layout.q_row_stride = kBf16RowStride;
  offset = align_up(offset + unsigned(block_h) * kBf16RowStride, 128);
  layout.ring_offset = offset;
  // fp8 rows (656 B = 164 words) already start 4 banks apart; bf16 rows are read by ldmatrix.
  layout.ring_row_stride = fp8 ? unsigned(kv_row_bytes(kv_format)) : kBf16RowStride;
  layout.ring_stage_bytes = unsigned(block_t) * layout.ring_row_stride;
  offset = align_up(offset + unsigned(num_stages) * layout.ring_stage_bytes, 128);
  layout.token_offset = offset;
  offset = align_up(offset + unsigned(num_stages) * unsigned(block_t) * 4u, 128);
  layout.dequant_offset = offset;
  layout.dequant_bytes = fp8 ? unsigned(block_t) * kBf16RowStride : 0u;
  offset = align_up(offset + layout.dequant_bytes, 128);
  layout.scores_offset = offset;
  layout.ksplit = unsigned(score_ksplit(block_t, block_h, num_warps));
  offset = align_up(offset + layout.ksplit * unsigned(block_h) * unsigned(block_t) * 4u, 128);
  layout.probs_offset = offset;
  layout.probs_row_stride = unsigned(block_t) * 2u + 16u;
  layout.prob_copies = fp8 ? unsigned(kNumGroups) : 1u;
  offset = align_up(offset + layout.prob_copies * unsigned(block_h) * layout.probs_row_stride, 128);
  layout.stats_offset = offset;
  offset = align_up(offset + 3u * unsigned(block_h) * 4u, 128);
  layout.total_bytes = offset;
  return layout;
}

// How the splits' outputs are merged (the launch-time `merge` parameter):
//  kMergeCombine:    a combine kernel (combine.cuh) reads the fp32 partials from global memory.
//  kMergeCombinePdl: the same kernel launched as a programmatic dependent of the split.
//  kMergeCluster:    the splits of one (head group, batch item) run as one thread-block cluster
//                    and merge through distributed shared memory (cluster_merge.cuh); no partials
//                    in global memory, no combine launch; at most kMaxClusterSplits splits.
//  kMergeLastCta:    the split CTA that finishes a row last merges its partials (an atomic ticket
//                    per row, last_cta_merge.cuh); the combine kernel runs first, only to zero the
//                    tickets, with the split as its programmatic dependent. Per-row splits only.
//  kMergeCombineBf16: kMergeCombinePdl with the partials stored as bf16 instead of fp32: half their
//                    bytes written by the split and read by the combine (at batch 64, 16 heads,
//                    4 splits a row, 8 of the 16 MB beside the cache's 86), one more bf16 rounding
//                    of each normalised partial before the fp32 merge.
//  kMergeRowSlices:  no combine, no cluster: the splits of a row store bf16 partials (as merge 4),
//                    wait for each other on merge 3's row tickets, then split r merges slice r of
//                    the row (row_slice_merge.cuh). Per-row splits, at most kMaxRowSliceSplits, the
//                    grid within one wave of the kernel's resident CTAs.
enum Merge : int {
  kMergeCombine = 0,
  kMergeCombinePdl = 1,
  kMergeCluster = 2,
  kMergeLastCta = 3,
  kMergeCombineBf16 = 4,
  kMergeRowSlices = 5,
};
// Where the split kernel puts a row's partial outputs when it has more than one split
// (SplitParams::partials): fp32 in global memory, its cluster's exchange (merge 2), bf16 in global
// memory (merge 4).
enum Partials : int { kPartialsFp32 = 0, kPartialsCluster = 1, kPartialsBf16 = 2 };
constexpr int kMaxClusterSplits = 8;   // the portable cluster size
constexpr int kMaxRowSliceSplits = 8;  // merge 5: each thread keeps a row's weights in registers

// kMergeCluster's exchange, at offset 0 once the token loop is done (every region of the split
// layout is dead by then): this CTA's normalised partial output [block_h][512] fp32 and lse
// [block_h], which the other CTAs of the cluster read, then the merge weights
// [kMaxClusterSplits][block_h] that only this CTA reads.
struct ExchangeLayout {
  unsigned partial_offset;
  unsigned lse_offset;
  unsigned weights_offset;
  unsigned total_bytes;
};
SMLA_HD constexpr ExchangeLayout exchange_layout(int block_h) {
  ExchangeLayout layout{};
  layout.partial_offset = 0;
  layout.lse_offset = unsigned(block_h) * kLatentDim * 4u;
  layout.weights_offset = align_up(layout.lse_offset + unsigned(block_h) * 4u, 16);
  layout.total_bytes = layout.weights_offset + unsigned(kMaxClusterSplits * block_h) * 4u;
  return layout;
}

// The split kernel's dynamic shared memory: its layout, or the exchange where that is larger.
SMLA_HD constexpr unsigned split_smem_bytes(const SmemLayout& layout, int block_h, int merge) {
  const unsigned exchange = exchange_layout(block_h).total_bytes;
  return merge == kMergeCluster && exchange > layout.total_bytes ? exchange : layout.total_bytes;
}

// Registers per thread the host expects before compiling: the fp32 output accumulator
// (block_h x 512 spread over the warps' lanes), the token ids each thread holds for the next tile's
// copies, and a fixed part for fragments, addresses and the softmax, calibrated against ptxas on
// sm_90 (see kernels/sparse_mla_decode/resources.cpp; sm_120's ptxas allocates more freely).
constexpr int kRegisterOverhead = 72;
SMLA_HD constexpr int accumulator_registers(int block_h, int num_warps) {
  return block_h * kLatentDim / (num_warps * 32);
}
SMLA_HD constexpr int token_id_registers(int block_t, int num_warps, int kv_format) {
  const int copies = block_t * (kv_row_bytes(kv_format) / 16);
  return (copies + num_warps * 32 - 1) / (num_warps * 32);
}
// Pipelined paths: the accumulator, the tile's scores of one m-tile held as P (block_t / 2), the
// V scales of the lane's tokens (fp8: block_t / 4), e4m3 P.V's per-tile partial sums (one m-tile's
// n-tiles) and a fixed part (calibrated like kRegisterOverhead).
constexpr int kPipelinedOverhead = 64;
SMLA_HD constexpr int estimated_registers(int block_t, int block_h, int num_warps, int num_stages,
                                          int kv_format, int mma_path = kMmaSmemF16) {
  (void)num_stages;
  if (mma_path != kMmaSmemF16) {
    const int fp8_partials = mma_path == kMmaFp8 ? kLatentDim / num_warps / 2 : 0;
    return accumulator_registers(block_h, num_warps) + block_t / 2 +
           (kv_format == kFp8DsMla ? block_t / 4 : 0) + fp8_partials +
           token_id_registers(block_t, num_warps, kv_format) + kPipelinedOverhead;
  }
  return accumulator_registers(block_h, num_warps) +
         token_id_registers(block_t, num_warps, kv_format) + kRegisterOverhead;
}

}  // namespace smla
