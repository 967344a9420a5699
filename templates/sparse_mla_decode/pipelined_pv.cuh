#pragma once
// The pipelined split kernel's softmax and P.V (mma_path 1 and 2). Every consumer warp reads the
// whole tile's scores and runs the same online softmax on the same values, so each warp holds
// identical running max/sum registers and builds P directly as MMA A fragments: no statistics or
// probabilities go back through shared memory and no barrier separates softmax from P.V. A warp
// owns 512 / NUM_WARPS output dims, which with NUM_WARPS >= 4 lie in one 128-dim scale group, so
// the V scale of a token is one factor folded into P.
//
// A lane (g = lane / 4, c = lane % 4) holds, per 16-token block kb of the tile, the scores of
// tokens kb*16 + {2c, 2c+1, 2c+8, 2c+9} of rows g and g+8: the A fragment of an m16n8k16 MMA,
// and, for two consecutive blocks, of an e4m3 m16n8k32 MMA whose B fragment takes those tokens in
// the same order (see v_fragments).
#include "sparse_mla_decode/pipelined_qk.cuh"
#include "sparse_mla_decode/timeline.cuh"  // where a variant build defines SMLA_EXP_LAZY_RESCALE

namespace smla_pipe {

template <int BLOCK_H, int NUM_WARPS>
struct Accumulator {
  static constexpr int kMTiles = BLOCK_H / smla::kMmaM;
  static constexpr int kNTiles = smla::kLatentDim / NUM_WARPS / smla::kMmaN;
  float value[kMTiles][kNTiles][4];
  float row_max[kMTiles][2];  // log2 units, identical in every consumer warp
  float row_sum[kMTiles][2];  // this lane's partial sum; the quad adds them at the end
};

// A row's accumulator, empty: no scores seen (row_max -inf), nothing summed.
template <int BLOCK_H, int NUM_WARPS>
__device__ __forceinline__ void clear(Accumulator<BLOCK_H, NUM_WARPS>& acc) {
#pragma unroll
  for (int m = 0; m < BLOCK_H / 16; ++m) {
    acc.row_max[m][0] = acc.row_max[m][1] = ptx::neg_inf();
    acc.row_sum[m][0] = acc.row_sum[m][1] = 0.f;
#pragma unroll
    for (int n = 0; n < smla::kLatentDim / NUM_WARPS / 8; ++n) {
      acc.value[m][n][0] = acc.value[m][n][1] = acc.value[m][n][2] = acc.value[m][n][3] = 0.f;
    }
  }
}

// fp8 V fragments for two n-tiles from an ldmatrix.trans pair (tokens t..t+7 and t+8..t+15 of one
// 16-byte dim chunk): lane (g, c) gets bytes [tok 2c: dim 2g, 2g+1][tok 2c+1: dim 2g, 2g+1] from
// each; the byte permutes give the 4 tokens of dim 2g ("even") and of dim 2g+1 ("odd").
__device__ __forceinline__ unsigned even_dims(unsigned first, unsigned second) {
  return ptx::byte_perm(first, second, 0x6420u);
}
__device__ __forceinline__ unsigned odd_dims(unsigned first, unsigned second) {
  return ptx::byte_perm(first, second, 0x7531u);
}

// The B fragments (tokens 2c, 2c+1 | 2c+8, 2c+9) of one dim from an ldmatrix.trans pair: the cvt
// unpack pairs bytes (0,1) (2,3), so the token order is (2c, 2c+1, 2c+8, 2c+9); the bitwise unpack
// pairs (0,2) (1,3), so the same permute instruction orders them (2c, 2c+8, 2c+1, 2c+9). The
// bitwise values are / 256 (smla::kUnpackBits).
template <bool V_BITS, bool ODD>
__device__ __forceinline__ void v_fragment(unsigned first, unsigned second, unsigned& b0,
                                           unsigned& b1) {
  if (V_BITS) {
    ptx::e4m3x4_to_f16x4_bits(ptx::byte_perm(first, second, ODD ? 0x7351u : 0x6240u), b0, b1);
  } else {
    ptx::e4m3x4_to_f16x4(ODD ? odd_dims(first, second) : even_dims(first, second), b0, b1);
  }
}

// acc[n] += P . V over one 16-token block (f16 or bf16 MMA).
template <int KV_FORMAT, int NUM_WARPS, int N_TILES, bool V_BITS>
__device__ __forceinline__ void pv_block_16bit(float (&acc)[N_TILES][4], const unsigned (&a)[4],
                                               const unsigned char* block_rows, int row_stride,
                                               int first_dim) {
  const int lane = threadIdx.x % 32;
  if (KV_FORMAT == smla::kFp8DsMla) {
    // Matrices: (tokens 0-7, chunk j) (8-15, j) (0-7, j+1) (8-15, j+1); n-tiles 2j, 2j+1 hold the
    // even and odd dims of chunk j.
    const unsigned char* v_row =
        block_rows + ((lane / 8) % 2 * 8 + lane % 8) * row_stride + first_dim + (lane / 16) * 16;
#pragma unroll
    for (int n = 0; n < N_TILES; n += 4) {
      unsigned r[4];
      ptx::ldmatrix_x4_trans(r, v_row + n * 8);
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        unsigned b0;
        unsigned b1;
        v_fragment<V_BITS, false>(r[half * 2], r[half * 2 + 1], b0, b1);
        ptx::mma_f16_16816(acc[n + half * 2], a, b0, b1);
        v_fragment<V_BITS, true>(r[half * 2], r[half * 2 + 1], b0, b1);
        ptx::mma_f16_16816(acc[n + half * 2 + 1], a, b0, b1);
      }
    }
  } else {
    const unsigned char* v_row =
        block_rows + (lane % 16) * row_stride + first_dim * 2 + (lane / 16) * 16;
#pragma unroll
    for (int n = 0; n < N_TILES; n += 2) {
      unsigned b[4];
      ptx::ldmatrix_x4_trans(b, v_row + n * 16);
      ptx::mma_bf16_16816(acc[n], a, b[0], b[1]);
      ptx::mma_bf16_16816(acc[n + 1], a, b[2], b[3]);
    }
  }
}

// acc[n] += (P8hi + P8lo) . V8 over one 32-token block (e4m3 MMA, P as a value plus its
// e4m3-rounded residual: one e4m3 term alone costs ~3 % of the output, see BENCHMARKS.md).
// Matrices: tokens 0-7, 8-15, 16-23, 24-31 of chunk j; n-tiles 2j, 2j+1 hold its even/odd dims.
template <int N_TILES>
__device__ __forceinline__ void pv_block_fp8(float (&acc)[N_TILES][4], const unsigned (&a_hi)[4],
                                             const unsigned (&a_lo)[4],
                                             const unsigned char* block_rows, int row_stride,
                                             int first_dim) {
  const int lane = threadIdx.x % 32;
  const unsigned char* v_row = block_rows + lane * row_stride + first_dim;
#pragma unroll
  for (int n = 0; n < N_TILES; n += 2) {
    unsigned r[4];
    ptx::ldmatrix_x4_trans(r, v_row + n * 8);
    const unsigned even0 = even_dims(r[0], r[1]);
    const unsigned even1 = even_dims(r[2], r[3]);
    const unsigned odd0 = odd_dims(r[0], r[1]);
    const unsigned odd1 = odd_dims(r[2], r[3]);
    ptx::mma_e4m3_16832(acc[n], a_hi, even0, even1);
    ptx::mma_e4m3_16832(acc[n + 1], a_hi, odd0, odd1);
    ptx::mma_e4m3_16832(acc[n], a_lo, even0, even1);
    ptx::mma_e4m3_16832(acc[n + 1], a_lo, odd0, odd1);
  }
}

// P values (already x 448 / rowmax) -> e4m3 fragment register plus the e4m3 residual register.
__device__ __forceinline__ void quantize_two_terms(const float (&v)[4], float inv, unsigned& hi,
                                                   unsigned& lo) {
  const float x[4] = {v[0] * inv, v[1] * inv, v[2] * inv, v[3] * inv};
  hi = ptx::pack_e4m3x4(x[0], x[1], x[2], x[3]);
  float rounded[4];
  ptx::e4m3x4_to_floats(hi, rounded);
  lo = ptx::pack_e4m3x4(x[0] - rounded[0], x[1] - rounded[1], x[2] - rounded[2], x[3] - rounded[3]);
}

// The tile's scores for this lane's fragment positions (slabs summed), rows g and g+8.
template <int BLOCK_T, int BLOCK_H, int KSPLIT>
__device__ __forceinline__ void load_scores(const smla::SmemLayout& layout, const float* scores,
                                            int m_tile, float (&s)[BLOCK_T / 16][2][4]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int kb = 0; kb < BLOCK_T / 16; ++kb) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = m_tile * 16 + lane / 4 + half * 8;
      const int col = kb * 16 + (lane % 4) * 2;
      float v[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int slice = 0; slice < KSPLIT; ++slice) {
        const float* line = scores + (slice * BLOCK_H + row) * layout.scores_row_stride + col;
        const float2 lo = *reinterpret_cast<const float2*>(line);
        const float2 hi = *reinterpret_cast<const float2*>(line + 8);
        v[0] += lo.x;
        v[1] += lo.y;
        v[2] += hi.x;
        v[3] += hi.y;
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) s[kb][half][j] = v[j];
    }
  }
}

__device__ __forceinline__ float quad_max(float value) {
  value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 1));
  return fmaxf(value, __shfl_xor_sync(0xffffffffu, value, 2));
}

// The online softmax's step for one row half: the running maximum moves to the tile's if that is
// larger; returns the base the tile exponentiates against (0 while nothing is valid yet, so that
// 2^-inf = 0 gives P = 0 and alpha = 0 without a select per element) and sets alpha, the
// accumulator's rescale.
#ifdef SMLA_EXP_LAZY_RESCALE
// Experiment (forty-sixth session; BENCHMARKS.md section 7): the base stays until a tile's maximum
// rises more than 2^8 above it, so most tiles skip the accumulator's rescale (any_rescale) and P
// stays at most 256; `row_max` is then the base, which the lse and the merges read as before.
__device__ __forceinline__ float online_max_step(float& row_max, float tile_max, float& alpha) {
  const float new_max = tile_max > row_max + 8.f ? tile_max : row_max;
#else
__device__ __forceinline__ float online_max_step(float& row_max, float tile_max, float& alpha) {
  const float new_max = fmaxf(row_max, tile_max);
#endif
  const float base = new_max == ptx::neg_inf() ? 0.f : new_max;
  alpha = ptx::exp2_approx(row_max - base);
  row_max = new_max;
  return base;
}

// Online softmax of one m-tile: s becomes P (in [0, 1]); returns the factor for each row half by
// which the accumulator must be rescaled (online_max_step).
template <int KB>
__device__ __forceinline__ void softmax_rows(float (&s)[KB][2][4], float (&row_max)[2],
                                             float (&row_sum)[2], float (&alpha)[2]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float tile_max = ptx::neg_inf();
#pragma unroll
    for (int kb = 0; kb < KB; ++kb) {
#pragma unroll
      for (int j = 0; j < 4; ++j) tile_max = fmaxf(tile_max, s[kb][half][j]);
    }
    const float base = online_max_step(row_max[half], quad_max(tile_max), alpha[half]);
    float sum = 0.f;
#pragma unroll
    for (int kb = 0; kb < KB; ++kb) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float prob = ptx::exp2_approx(s[kb][half][j] - base);
        s[kb][half][j] = prob;
        sum += prob;
      }
    }
    row_sum[half] = row_sum[half] * alpha[half] + sum;
  }
}

// Whether any lane's rows need the accumulator rescaled (a running max moved): once the maxima
// settle most tiles skip the 4 multiplies per accumulator register.
__device__ __forceinline__ bool any_rescale(const float (&alpha)[2]) {
  return __any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f);
}

// The accumulator x alpha, skipped when no lane's row maximum moved (any_rescale).
template <int N_TILES>
__device__ __forceinline__ void rescale_if_moved(const float (&alpha)[2],
                                                 float (&value)[N_TILES][4]) {
  if (any_rescale(alpha)) {
#pragma unroll
    for (int n = 0; n < N_TILES; ++n) {
#pragma unroll
      for (int j = 0; j < 4; ++j) value[n][j] *= alpha[j / 2];
    }
  }
}

// The V scale of each of this lane's tokens for the warp's scale group (1 for bf16 caches).
template <int BLOCK_T, int KV_FORMAT>
__device__ __forceinline__ void load_v_scales(const smla::SmemLayout& layout,
                                              const unsigned char* ring, int group,
                                              float (&v_scale)[BLOCK_T / 16][4]) {
  const int c = threadIdx.x % 4;
#pragma unroll
  for (int kb = 0; kb < BLOCK_T / 16; ++kb) {
    const int tokens[4] = {kb * 16 + 2 * c, kb * 16 + 2 * c + 1, kb * 16 + 2 * c + 8,
                           kb * 16 + 2 * c + 9};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      v_scale[kb][j] = KV_FORMAT == smla::kFp8DsMla
                           ? group_scale(ring + tokens[j] * layout.ring_row_stride, group)
                           : 1.f;
    }
  }
}

}  // namespace smla_pipe
