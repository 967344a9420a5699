#pragma once
// Waiting for a child process (or an orphan adopted as PR_SET_CHILD_SUBREAPER) with a deadline.
#include <sys/wait.h>

#include <chrono>
#include <optional>
#include <thread>

namespace tuner::test {

// Its wait status once `pid` ended within `seconds`, or nullopt if it is still running.
inline std::optional<int> wait_for_end(pid_t pid, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return std::nullopt;
}

}  // namespace tuner::test
