// L2-safe timing (issue 11): a timing graph's replay touches >= 4x the L2 in distinct KV bytes, and
// a KV cache below 4x L2 is refused. CPU only: the launch count is arithmetic on the shape.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "kernels/sparse_mla_decode/shape.hpp"
#include "tuner/error.hpp"
#include "tuner/measure.hpp"
#include "tuner/sweep_worker.hpp"

namespace {

constexpr long long kH200L2 = 60LL << 20;  // the H200's L2 as issue 11 gives it

tuner::smla_family::Shape shape_at(int batch) {
  tuner::smla_family::Shape shape;
  shape.n_heads = 64;
  shape.attn_tp = 4;
  shape.topk = 2048;
  shape.kv_format = tuner::smla_family::KvFormat::fp8_ds_mla;
  shape.page_size = 64;
  shape.batch = batch;
  return shape;
}

// Expected distinct bytes of `launches` launches of uniform draws (3% of indices invalid).
double distinct_bytes(const tuner::smla_family::Shape& shape, int launches, double kv_gib) {
  const double rows = static_cast<double>(tuner::kv_tokens(shape, kv_gib));
  const double draws = launches * shape.batch * shape.topk * 0.97;
  const int row_bytes = tuner::smla_family::kv_row_bytes(shape.kv_format);
  return rows * (1.0 - std::exp(-draws / rows)) * row_bytes;
}

}  // namespace

TEST_CASE("batch 1: the old 32 launches stay inside the L2; the new count is the least over 4x") {
  const auto shape = shape_at(1);
  CHECK(distinct_bytes(shape, 32, 1.0) < kH200L2);  // issue 11's finding: ~42 MB per replay
  const int launches = tuner::timing_launches(shape, 1.0, kH200L2, 32);
  CHECK(distinct_bytes(shape, launches, 1.0) >= 4.0 * kH200L2);
  CHECK(distinct_bytes(shape, launches - 1, 1.0) < 4.0 * kH200L2);
  CHECK(launches <= tuner::kMaxLaunchesPerGraph);
}

TEST_CASE("large batches keep the minimum launch count when it already covers 4x L2") {
  const auto shape = shape_at(64);
  CHECK(distinct_bytes(shape, 32, 1.0) >= 4.0 * kH200L2);
  CHECK(tuner::timing_launches(shape, 1.0, kH200L2, 32) == 32);
}

TEST_CASE("a KV cache below 4x L2, or too close to it, is refused naming --kv-gib") {
  const auto shape = shape_at(1);
  try {
    tuner::timing_launches(shape, 0.2, kH200L2, 32);
    FAIL("a 0.2 GiB KV cache was accepted on a 60 MiB L2");
  } catch (const tuner::InputError& error) {
    const std::string message = error.what();
    CHECK(message.rfind("--kv-gib 0.200000 gives a KV cache of 204.8", 0) == 0);
    CHECK(message.find("less than 4x this GPU's L2 (240.0") != std::string::npos);
  }
  // Just above 4x L2: uniform draws would need far more than kMaxLaunchesPerGraph launches.
  CHECK_THROWS_AS(tuner::timing_launches(shape, 240.5 / 1024.0, kH200L2, 32), tuner::InputError);
}
