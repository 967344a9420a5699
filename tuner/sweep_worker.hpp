#pragma once
// The GPU side of `tuner sweep`, run in a worker process (tuner/worker_process.hpp): verifies and
// times one candidate per request. Requests and answers are JSON lines:
//   {"op":"info"} -> device name, arch, driver, L2 size, copy bandwidth
//   {"op":"measure","params":{..},"batch":B,"seed":S,"verify":true} -> fate + figures
// A sticky CUDA error is answered as a fault and the worker exits: its context is gone.
#include <iosfwd>
#include <string>

#include "kernels/sparse_mla_decode/shape.hpp"

namespace tuner {

struct WorkerSetup {
  smla_family::Shape shape;     // batch is set per request
  double kv_gib = 1.0;          // KV cache size: several times the L2
  int launches_per_graph = 32;  // the least; more at small batches (timing_launches)
  std::string cache_dir;
  int device = 0;
};

// KV cache rows for `kv_gib` GiB.
long long kv_tokens(const smla_family::Shape& shape, double kv_gib);

// Launches per timing graph at `shape.batch`: at least `minimum`, and enough independent index
// sets that one replay touches >= 4x `l2_bytes` distinct KV bytes. Throws InputError naming
// --kv-gib when the KV cache is below 4x L2 or too close to it.
int timing_launches(const smla_family::Shape& shape, double kv_gib, long long l2_bytes,
                    int minimum);

int run_sweep_worker(const WorkerSetup& setup, std::istream& in, std::ostream& out);

}  // namespace tuner
