#pragma once
// The GPU side of `tuner sweep`, run in a worker process (core/worker_process.hpp): verifies and
// times one candidate per request, for any family (through Family::open_device). Requests and
// answers are JSON lines; the first request is the job itself, one typed setup message:
//   {"op":"setup","family":F,"shape":"canonical","device":0,"cache_dir":D,"memory_gib":1,
//    "min_launches":32}                                -> {"status":"ok"}
//   {"op":"info"} -> device name, arch, driver, L2 bytes, copy bandwidth
//   {"op":"measure","params":{..},"batch":B,"seed":S,"verify":true,"screen_replays":0} -> fate +
//    figures (median, p10/p90 of replay means, per-launch p10/p90, the launches per graph the
//    family chose, "protocol": "full", or "screen" when screen_replays > 0: core/measure.hpp's
//    screen_options, no per-launch quantiles)
// A sticky CUDA error is answered as a fault and the worker exits: its context is gone.
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "core/shape.hpp"

namespace tuner {

struct WorkerSetup {
  std::string family;
  Shape shape;  // canonical; the batch is set per request
  int device = 0;
  std::string cache_dir;
  double memory_gib = 1.0;  // input footprint: >= kL2Factor x the L2
  int min_launches = 32;    // launches per timing graph at least (the family may need more)
};

nlohmann::json to_json(const WorkerSetup& setup);
// Throws InputError naming the field when the message is not a setup message.
WorkerSetup worker_setup_from_json(const nlohmann::json& message);

// Reads the setup message, then serves requests until end of input.
int run_sweep_worker(std::istream& in, std::ostream& out);

}  // namespace tuner
