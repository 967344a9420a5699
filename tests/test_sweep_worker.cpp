// The sweep worker's job arrives as one typed JSON setup message (no re-encoded CLI flags): it
// round-trips, and a malformed one is refused naming the field, before any GPU work.
#include "tuner/sweep_worker.hpp"

#include <doctest/doctest.h>

#include <sstream>

#include "core/error.hpp"
#include "kernels/fp8_gemm/family.hpp"

using nlohmann::json;
using tuner::WorkerSetup;

TEST_CASE("sweep worker: the setup message round-trips") {
  WorkerSetup setup;
  setup.family = "fp8_gemm";
  setup.shape =
      tuner::fp8_gemm::family().canonicalize({{"n", "4096"}, {"k", "7168"}, {"block", "128"}});
  setup.device = 1;
  setup.cache_dir = "/tmp/cache";
  setup.memory_gib = 0.5;
  setup.min_launches = 16;
  const json message = tuner::to_json(setup);
  CHECK(message["op"] == "setup");
  CHECK(message["shape"] == "block=128,k=7168,n=4096");
  const WorkerSetup back = tuner::worker_setup_from_json(json::parse(message.dump()));
  CHECK(back.family == setup.family);
  CHECK(back.shape == setup.shape);
  CHECK(back.device == 1);
  CHECK(back.cache_dir == "/tmp/cache");
  CHECK(back.memory_gib == 0.5);
  CHECK(back.min_launches == 16);
}

TEST_CASE("sweep worker: a malformed setup message is refused, naming what is wrong") {
  CHECK_THROWS_WITH_AS(tuner::worker_setup_from_json(json{{"op", "measure"}}),
                       doctest::Contains("first message must be {\"op\":\"setup\""),
                       tuner::InputError);
  json missing = tuner::to_json(WorkerSetup{"fp8_gemm", {{{"k", "128"}, {"n", "128"}}}});
  missing.erase("min_launches");
  CHECK_THROWS_WITH_AS(tuner::worker_setup_from_json(missing), doctest::Contains("min_launches"),
                       tuner::InputError);
  json unsorted = tuner::to_json(WorkerSetup{"fp8_gemm", {}});
  unsorted["shape"] = "n=128,k=128";
  CHECK_THROWS_WITH_AS(tuner::worker_setup_from_json(unsorted),
                       doctest::Contains("is not canonical"), tuner::InputError);
  // Through the worker loop: the refusal is the answer, no worker (and no GPU) is started.
  std::istringstream in(R"({"op":"info"})"
                        "\n");
  std::ostringstream out;
  CHECK(tuner::run_sweep_worker(in, out) == 0);
  CHECK(out.str().find(R"("status":"error")") != std::string::npos);
}
