#pragma once
// A child process that runs GPU work on the parent's behalf. A kernel that faults poisons its CUDA
// context for good, so measurements run in a worker the parent can lose and restart; the parent
// never touches the GPU itself. The protocol is one JSON object per line on the child's
// stdin/stdout; the child's stderr is the parent's.
//
// The worker cannot outlive its sweep: it runs in its own process group, which every stop kills
// (SIGKILL, after a 2 s grace on a normal close), and it gets SIGKILL when its parent dies
// (PR_SET_PDEATHSIG, so kill -9 of the sweep included). Linux sends that signal when the *thread*
// that forked exits: create a WorkerProcess on a thread that lives as long as the worker.
#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tuner {

class WorkerProcess {
 public:
  // Starts `argv` (argv[0] is the program path). The destructor closes the worker's stdin, waits
  // up to 2 s for it to exit, then kills its process group.
  explicit WorkerProcess(std::vector<std::string> argv);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `job` and waits up to `timeout` for the one-line answer. Returns nullopt when the worker
  // died, closed its output or timed out (it is then killed); `death` says which.
  std::optional<nlohmann::json> request(const nlohmann::json& job, std::chrono::seconds timeout,
                                        std::string& death);
  bool running() const { return pid_ > 0; }
  bool timed_out() const noexcept { return timed_out_; }  // the last request did
  pid_t pid() const noexcept;                             // -1 when not running

 private:
  void stop(bool kill_first);
  std::string reap();
  bool send(const std::string& line, std::string& death);

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string pending_;  // bytes read past the last newline
  bool timed_out_ = false;
};

// The path of the running executable (/proc/self/exe resolved).
std::string self_executable();

}  // namespace tuner
