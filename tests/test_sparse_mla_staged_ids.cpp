// The producer warps' staged token ids (templates/sparse_mla_decode/producer_ids.cuh) in the one
// layout function: two BLOCK_T slots of int ids after the ring's token ids in every producer
// kernel, none without producers. The offsets are checked against arithmetic written out here,
// not against the layout's own formulas. Which kernels use the slots is checked in their SASS
// (test_sass_producer_ids, scripts/check_producer_ids.sh).
#include <doctest/doctest.h>

#include <initializer_list>

#include "templates/sparse_mla_decode/layout.h"

TEST_CASE("producer kernels keep two slots of staged ids between the token ids and the scores") {
  for (const int block_t : {16, 32, 64}) {
    for (const int stages : {2, 3, 4}) {
      CAPTURE(block_t);
      CAPTURE(stages);
      const smla::SmemLayout fed = smla::smem_layout(block_t, 16, 4, stages, smla::kFp8DsMla, 1, 2);
      CHECK(fed.staged_ids_offset == fed.token_offset + unsigned(stages * block_t * 4));
      CHECK(fed.scores_offset >= fed.staged_ids_offset + unsigned(2 * block_t * 4));
      CHECK(fed.scores_offset % 128 == 0);
      // Without producers the scores follow the token ids, rounded up to 128 bytes only.
      const smla::SmemLayout alone =
          smla::smem_layout(block_t, 16, 4, stages, smla::kFp8DsMla, 1, 0);
      CHECK(alone.scores_offset < alone.token_offset + unsigned(stages * block_t * 4) + 128u);
      CHECK(alone.total_bytes < fed.total_bytes);
    }
  }
}
