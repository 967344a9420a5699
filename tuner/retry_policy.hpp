#pragma once
// How the sweep treats a measurement that did not come back: a worker answer (or the parent's
// stand-in when the worker died) is classified, failures are retried once, and only a failure
// that reproduces and is not transient becomes a permanent `fault`.
#include <nlohmann/json.hpp>
#include <string>

#include "db/store/records.hpp"

namespace tuner {

// none: the answer is a result (ok, wrong_result, compile_failed). transient: the worker timed
// out ("transient": true) or the GPU ran out of memory (code CUDA_ERROR_OUT_OF_MEMORY): nothing
// is known about the config, the next sweep tries again. fault: anything else that failed.
enum class Failure { none, transient, fault };
Failure classify(const nlohmann::json& answer);

// The fate and reason of a config whose first attempt failed and whose retry failed too.
struct FailedFate {
  db::Fate fate = db::Fate::fault;
  std::string reason;
};
FailedFate failed_twice(const nlohmann::json& first, const nlohmann::json& retry);

// The reason of a result that came back on the retry after `first` failed.
std::string recovered_reason(const std::string& reason, const nlohmann::json& first);

// Identifies what, besides the config and the source, decides a measurement: the resume key
// includes it, so a sweep under another NVRTC, driver or protocol measures again.
std::string measure_env(const std::string& nvrtc_version, const std::string& driver_version,
                        int protocol_version);

}  // namespace tuner
