#pragma once
// A child process that runs GPU work on the parent's behalf. A kernel that faults poisons its CUDA
// context for good, so measurements run in a worker the parent can lose and restart; the parent
// never touches the GPU itself. The protocol is one JSON object per line on the child's
// stdin/stdout; the child's stderr is the parent's.
#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tuner {

class WorkerProcess {
 public:
  // Starts `argv` (argv[0] is the program path).
  explicit WorkerProcess(std::vector<std::string> argv);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `job` and waits up to `timeout` for the one-line answer. Returns nullopt when the worker
  // died, closed its output or timed out (it is then killed); `death` says which.
  std::optional<nlohmann::json> request(const nlohmann::json& job, std::chrono::seconds timeout,
                                        std::string& death);
  bool running() const { return pid_ > 0; }

 private:
  void stop(bool kill_first);
  std::string reap();

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;  // bytes read past the last newline
};

// The path of the running executable (/proc/self/exe resolved).
std::string self_executable();

}  // namespace tuner
