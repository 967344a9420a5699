#pragma once
// The sweep's side of one measuring worker process (tuner/sweep_worker.hpp): started on demand,
// restarted after it dies, and one retry for a request whose first attempt failed.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/worker_process.hpp"
#include "tuner/retry_policy.hpp"
#include "tuner/sweep.hpp"

namespace tuner {

class Measurer {
 public:
  Measurer(const SweepRequest& request, int device) : request_(request), device_(device) {}

  // The answer, or {"status":"fault","reason":...} when the worker died on this job.
  nlohmann::json ask(const nlohmann::json& job);

 private:
  void start();  // one typed setup message, then the jobs

  const SweepRequest& request_;
  int device_;
  std::unique_ptr<WorkerProcess> worker_;
};

struct Attempt {
  nlohmann::json answer;                        // the result, or the retry's failure
  std::optional<nlohmann::json> first_failure;  // when the first attempt failed
  std::optional<FailedFate> failed_twice;       // when the retry failed too
};

// Asks once, and once more (in a new worker if the first died) when the first attempt failed: a
// timeout, an out-of-memory or a fault that does not reproduce is no verdict on the config.
// `account` sees every answer (the time split).
Attempt ask_with_retry(Measurer& measurer, const nlohmann::json& job,
                       const std::function<void(const nlohmann::json&)>& account);

}  // namespace tuner
