#include "tuner/measurer.hpp"

#include <chrono>
#include <stdexcept>

#include "tuner/sweep_worker.hpp"

namespace tuner {

namespace {
using nlohmann::json;
constexpr std::chrono::seconds kJobTimeout{180};
}  // namespace

json Measurer::ask(const json& job) {
  if (!worker_ || !worker_->running()) start();
  std::string death;
  std::optional<json> answer = worker_->request(job, kJobTimeout, death);
  if (!answer) {
    const bool timed_out = worker_->timed_out();
    worker_.reset();
    return json{{"status", "fault"}, {"reason", death}, {"transient", timed_out}};
  }
  if (answer->value("status", "") == "fault") worker_.reset();  // it exits after a sticky error
  return *answer;
}

void Measurer::start() {
  worker_ =
      std::make_unique<WorkerProcess>(std::vector<std::string>{self_executable(), "sweep-worker"});
  WorkerSetup setup;
  setup.family = request_.family->name;
  setup.shape = request_.shape;
  setup.device = device_;
  setup.cache_dir = request_.cache_dir;
  setup.memory_gib = request_.memory_gib;
  setup.min_launches = request_.min_launches;
  std::string death;
  const std::optional<json> answer = worker_->request(to_json(setup), kJobTimeout, death);
  if (!answer || answer->value("status", "") != "ok") {
    throw std::runtime_error("the measuring worker refused its setup: " +
                             (answer ? answer->dump() : death));
  }
}

Attempt ask_with_retry(Measurer& measurer, const json& job,
                       const std::function<void(const json&)>& account) {
  Attempt attempt{measurer.ask(job), std::nullopt, std::nullopt};
  account(attempt.answer);
  if (classify(attempt.answer) == Failure::none) return attempt;
  attempt.first_failure = attempt.answer;
  attempt.answer = measurer.ask(job);
  account(attempt.answer);
  if (classify(attempt.answer) != Failure::none) {
    attempt.failed_twice = failed_twice(*attempt.first_failure, attempt.answer);
  }
  return attempt;
}

}  // namespace tuner
