#pragma once
// The GPU side of `tuner sweep`, run in a worker process (tuner/worker_process.hpp): verifies and
// times one candidate per request. Requests and answers are JSON lines:
//   {"op":"info"} -> device name, arch, driver, copy bandwidth
//   {"op":"measure","params":{..},"batch":B,"seed":S,"verify":true} -> fate + figures
// A sticky CUDA error is answered as a fault and the worker exits: its context is gone.
#include <iosfwd>
#include <string>

#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner {

struct WorkerSetup {
  smla_family::Shape shape;  // batch is set per request
  double kv_gib = 1.0;       // KV cache size: several times the L2
  int launches_per_graph = 32;
  std::string cache_dir;
  int device = 0;
};

int run_sweep_worker(const WorkerSetup& setup, std::istream& in, std::ostream& out);

}  // namespace tuner
