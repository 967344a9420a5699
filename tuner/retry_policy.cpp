#include "tuner/retry_policy.hpp"

namespace tuner {

Failure classify(const nlohmann::json& answer) {
  const std::string status = answer.value("status", "error");
  if (status == "ok" || status == "wrong_result" || status == "compile_failed") {
    return Failure::none;
  }
  if (answer.value("transient", false) ||
      answer.value("code", std::string()) == "CUDA_ERROR_OUT_OF_MEMORY") {
    return Failure::transient;
  }
  return Failure::fault;
}

FailedFate failed_twice(const nlohmann::json& first, const nlohmann::json& retry) {
  const bool transient =
      classify(first) == Failure::transient || classify(retry) == Failure::transient;
  FailedFate fate;
  fate.fate = transient ? db::Fate::transient : db::Fate::fault;
  fate.reason = (transient ? "transient, retried by the next sweep: " : "reproduced on retry: ") +
                retry.value("reason", std::string("?")) +
                " (first attempt: " + first.value("reason", std::string("?")) + ")";
  return fate;
}

std::string recovered_reason(const std::string& reason, const nlohmann::json& first) {
  return reason + "; the first attempt failed and did not reproduce (" +
         first.value("reason", std::string("?")) + ")";
}

std::string measure_env(const std::string& nvrtc_version, const std::string& driver_version,
                        int protocol_version) {
  return "nvrtc " + nvrtc_version + ", driver " + driver_version + ", protocol " +
         std::to_string(protocol_version);
}

}  // namespace tuner
