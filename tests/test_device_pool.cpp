// --devices parsing and resolution (exit-2 inputs), the one-model rule, and the work queue.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "core/error.hpp"
#include "tuner/device_pool.hpp"

using namespace tuner;

TEST_CASE("devices: all or a list, a missing or repeated GPU is refused naming it and the fix") {
  CHECK(resolve_devices(parse_devices("all"), 2) == std::vector<int>{0, 1});
  CHECK(resolve_devices(parse_devices("1,0"), 2) == std::vector<int>{1, 0});
  try {
    resolve_devices(parse_devices("0,7"), 2);
    FAIL("GPU 7 of 2 was accepted");
  } catch (const InputError& error) {
    const std::string text = error.what();
    CHECK(text.find("GPU 7 does not exist") != std::string::npos);
    CHECK(text.find("has 2 GPU(s)") != std::string::npos);
    CHECK(text.find("--devices all") != std::string::npos);
  }
  CHECK_THROWS_AS(resolve_devices(parse_devices("0,0"), 2), InputError);
  for (const char* bad : {"", "x", "0,", ",1", "-1", "0;1", "1.5"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_devices(bad), InputError);
  }
}

TEST_CASE("devices: GPUs of two models are never mixed in one sweep") {
  CHECK_NOTHROW(require_one_model({0, 1}, {"NVIDIA H200", "NVIDIA H200"}));
  try {
    require_one_model({0, 1}, {"NVIDIA H200", "NVIDIA A100-SXM4-80GB"});
    FAIL("two models were accepted");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()).find("one sweep per model") != std::string::npos);
  }
}

TEST_CASE("queue: every item exactly once, all workers used, handed out in the given order") {
  std::mutex mutex;
  std::vector<std::size_t> started;
  std::set<int> workers_used;
  std::map<int, std::vector<std::size_t>> by_worker;
  std::atomic<int> in_flight{0}, most_in_flight{0};
  run_queue(3, 30, [&](int worker, std::size_t item) {
    {
      const std::lock_guard<std::mutex> lock(mutex);
      started.push_back(item);
      workers_used.insert(worker);
      by_worker[worker].push_back(item);
    }
    const int now = ++in_flight;
    int seen = most_in_flight;
    while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --in_flight;
  });
  REQUIRE(started.size() == 30);
  CHECK(std::set<std::size_t>(started.begin(), started.end()).size() == 30);
  // Items are handed out in index order (the caller's longest-first order): each worker's items
  // come in increasing order.
  for (const auto& [worker, items] : by_worker) {
    CAPTURE(worker);
    CHECK(std::is_sorted(items.begin(), items.end()));
  }
  CHECK(workers_used.size() == 3);
  CHECK(most_in_flight.load() >= 2);
  CHECK(most_in_flight.load() <= 3);
}

TEST_CASE("queue: a worker's exception reaches the caller and stops the hand-out") {
  std::atomic<int> done{0};
  CHECK_THROWS_WITH_AS(run_queue(2, 1000,
                                 [&](int, std::size_t item) {
                                   if (item == 5) throw std::runtime_error("item 5 failed");
                                   // Items take time, as measurements do: without it the other
                                   // worker could take all 994 others before the throw lands.
                                   std::this_thread::sleep_for(std::chrono::microseconds(200));
                                   ++done;
                                 }),
                       "item 5 failed", std::runtime_error);
  CHECK(done.load() < 999);
}
