#include "tuner/device_pool.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "core/error.hpp"

namespace tuner {

namespace {

const char* const kFix = "pass --devices all or a comma-separated list of GPU ordinals (0,1)";

}  // namespace

DeviceSelection parse_devices(std::string_view text) {
  if (text == "all") return DeviceSelection{true, {}};
  DeviceSelection selection;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    int ordinal = -1;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), ordinal);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || ordinal < 0) {
      throw InputError("--devices '" + std::string(text) + "': '" + std::string(item) +
                       "' is not a GPU ordinal: " + kFix);
    }
    selection.ordinals.push_back(ordinal);
    start = comma + 1;
  }
  return selection;
}

std::vector<int> resolve_devices(const DeviceSelection& selection, int device_count) {
  if (selection.all) {
    std::vector<int> all;
    all.reserve(static_cast<std::size_t>(std::max(device_count, 0)));
    for (int ordinal = 0; ordinal < device_count; ++ordinal) all.push_back(ordinal);
    return all;
  }
  std::set<int> seen;
  for (int ordinal : selection.ordinals) {
    if (ordinal >= device_count) {
      throw InputError("--devices: GPU " + std::to_string(ordinal) +
                       " does not exist: this host has " + std::to_string(device_count) +
                       " GPU(s), ordinals 0.." + std::to_string(device_count - 1) + "; " + kFix);
    }
    if (!seen.insert(ordinal).second) {
      throw InputError("--devices: GPU " + std::to_string(ordinal) +
                       " is listed twice: one worker per GPU, so that no timing shares a GPU; " +
                       kFix);
    }
  }
  return selection.ordinals;
}

void require_one_model(const std::vector<int>& ordinals, const std::vector<std::string>& names) {
  for (std::size_t i = 1; i < names.size(); ++i) {
    if (names[i] == names[0]) continue;
    throw InputError("--devices: GPU " + std::to_string(ordinals[0]) + " is " + names[0] +
                     " but GPU " + std::to_string(ordinals[i]) + " is " + names[i] +
                     ": a winner compares configs timed on one model; run one sweep per model, "
                     "each with --devices listing only that model's GPUs");
  }
}

void run_queue(int workers, std::size_t items,
               const std::function<void(int worker, std::size_t item)>& work) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto loop = [&](int worker) {
    for (std::size_t item = next++; item < items && !failed; item = next++) {
      try {
        work(worker, item);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int worker = 1; worker < workers; ++worker) threads.emplace_back(loop, worker);
  loop(0);
  for (std::thread& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace tuner
