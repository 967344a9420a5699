#pragma once
// `tuner sweep --devices all|0,1,...`: which GPUs, and the queue that hands work to one worker per
// GPU. Each GPU gets exactly one worker process (its own context, its own fault isolation), so a
// timing is never taken while another worker of ours shares that GPU. The queue is one list,
// longest item first, pulled by whichever worker is free; results go back to the caller, whose one
// store connection writes every trial.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tuner {

struct DeviceSelection {
  bool all = false;
  std::vector<int> ordinals;  // when !all
};

// Parses "all" or "0,1,3". Throws InputError naming --devices and the fix.
DeviceSelection parse_devices(std::string_view text);

// The ordinals to use on a host with `device_count` GPUs. Throws InputError naming a missing or
// repeated GPU and the fix (exit 2).
std::vector<int> resolve_devices(const DeviceSelection& selection, int device_count);

// Refuses (InputError) GPUs of different models in one sweep: a winner compares configs timed on
// one model. `names[i]` is the name of `ordinals[i]`.
void require_one_model(const std::vector<int>& ordinals, const std::vector<std::string>& names);

// Runs work(worker, item) for every item in 0..items-1 in the order given (the caller sorts the
// longest first), on `workers` threads, worker w in 0..workers-1 taking the next item whenever it
// is free. Returns when all are done; the first exception a worker threw is rethrown here (the
// other workers finish the item they hold and take no more).
void run_queue(int workers, std::size_t items,
               const std::function<void(int worker, std::size_t item)>& work);

}  // namespace tuner
