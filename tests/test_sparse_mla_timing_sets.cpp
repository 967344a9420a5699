// kernels/sparse_mla_decode/timing_sets.hpp: how many index sets (launches per timing graph) a
// batch needs so that one replay reads >= 4x the L2 in distinct KV rows, and the footprint refusal.
// Expected counts are computed independently (comments), not copied from output.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "kernels/sparse_mla_decode/timing_sets.hpp"

using tuner::smla_family::KvFormat;
using tuner::smla_family::Shape;
using tuner::smla_family::timing_sets;

namespace {

constexpr long long kH200L2 = 60LL << 20;

Shape shape_at(int batch, KvFormat format) {
  Shape shape;  // 64 heads, TP 4, topk 2048, page 64
  shape.kv_format = format;
  shape.batch = batch;
  return shape;
}

}  // namespace

TEST_CASE("sparse MLA timing sets: batch 1 needs ~7x the old 32 launches on an H200") {
  // fp8_ds_mla rows are 656 bytes: 1 GiB holds 1636801 whole rows, + 1. Batch 1 reads 2048 x 0.97
  // rows per launch: 4 x 60 MiB / 656 B = 383625 distinct rows take -N ln(1 - 383625/N) = 437129
  // draws = 220.04 launches -> 221. 32 launches (protocol 1) read only ~41 MB < 60 MiB.
  const auto sets = timing_sets(shape_at(1, KvFormat::fp8_ds_mla), 1.0, kH200L2, 32, "m");
  CHECK(sets.kv_rows == 1636802);
  CHECK(sets.launches == 221);
  CHECK(32 * 2048 * 0.97 * 656 < kH200L2);  // why protocol 1 was not L2-safe at batch 1
  // bf16 rows are 1152 bytes: N = 932068, 218453 distinct rows take 248921 draws = 125.3 launches
  // of 1986.56 rows -> 126.
  const auto bf16 = timing_sets(shape_at(1, KvFormat::bf16), 1.0, kH200L2, 32, "m");
  CHECK(bf16.kv_rows == 932068);
  CHECK(bf16.launches == 126);
}

TEST_CASE("sparse MLA timing sets: large batches keep the minimum, no L2 asks only for it") {
  // Batch 8: 437129 / (8 x 1986.56) = 27.5 -> 28 < 32.
  CHECK(timing_sets(shape_at(8, KvFormat::fp8_ds_mla), 1.0, kH200L2, 32, "m").launches == 32);
  CHECK(timing_sets(shape_at(128, KvFormat::fp8_ds_mla), 1.0, kH200L2, 32, "m").launches == 32);
  // L2 flushed between replays (l2 0): the minimum, whatever the batch.
  CHECK(timing_sets(shape_at(1, KvFormat::fp8_ds_mla), 1.0, 0, 32, "m").launches == 32);
  // Batch 8 with a minimum of 1: the L2 decides (28).
  CHECK(timing_sets(shape_at(8, KvFormat::fp8_ds_mla), 1.0, kH200L2, 1, "m").launches == 28);
}

TEST_CASE("sparse MLA timing sets: a KV cache under 4x the L2 is refused, naming the option") {
  CHECK_THROWS_WITH_AS(
      timing_sets(shape_at(1, KvFormat::fp8_ds_mla), 0.2, kH200L2, 32, "--memory-gib 0.2"),
      doctest::Contains("--memory-gib 0.2 gives an input footprint of"), tuner::InputError);
  // Without an L2 requirement (flush mode) the same small cache is accepted.
  CHECK(timing_sets(shape_at(1, KvFormat::fp8_ds_mla), 0.2, 0, 32, "m").launches == 32);
}
