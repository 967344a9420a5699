// The worker process protocol without a GPU: real child processes that answer, die or hang.
#include <doctest/doctest.h>

#include "core/worker_process.hpp"

using tuner::WorkerProcess;

TEST_CASE("a worker answers one JSON line per request") {
  WorkerProcess worker({"/bin/cat"});  // echoes the request back: a valid one-line answer
  std::string death;
  const auto answer =
      worker.request(nlohmann::json{{"op", "info"}, {"n", 3}}, std::chrono::seconds(10), death);
  REQUIRE(answer.has_value());
  CHECK((*answer)["n"] == 3);
  const auto second =
      worker.request(nlohmann::json{{"op", "again"}}, std::chrono::seconds(10), death);
  REQUIRE(second.has_value());
  CHECK((*second)["op"] == "again");
}

TEST_CASE("a worker that dies is reported with how it died") {
  WorkerProcess worker({"/bin/sh", "-c", "read line; kill -SEGV $$"});
  std::string death;
  const auto answer = worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death);
  CHECK_FALSE(answer.has_value());
  CHECK(death.find("signal 11") != std::string::npos);
  CHECK_FALSE(worker.running());
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(1), death).has_value());
}

TEST_CASE("a worker that exits with a code is reported with it") {
  WorkerProcess worker({"/bin/sh", "-c", "read line; exit 3"});
  std::string death;
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death).has_value());
  CHECK(death == "worker exited with code 3");
}

TEST_CASE("a worker that hangs is killed at the timeout") {
  WorkerProcess worker({"/bin/sleep", "30"});
  std::string death;
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(1), death).has_value());
  CHECK(death.find("timed out after 1 s") != std::string::npos);
}

TEST_CASE("malformed output is a failure, not a crash") {
  WorkerProcess worker({"/bin/sh", "-c", "read line; echo 'not json'; sleep 5"});
  std::string death;
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death).has_value());
  CHECK(death.find("malformed") != std::string::npos);
}
