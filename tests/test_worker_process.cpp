// The worker process protocol without a GPU: real child processes that answer, die or hang.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include "core/worker_process.hpp"
#include "tests/support/wait_process.hpp"

using tuner::WorkerProcess;

namespace {

using tuner::test::wait_for_end;

bool killed_by_sigkill(const std::optional<int>& status) {
  return status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL;
}

}  // namespace

TEST_CASE("a worker answers one JSON line per request") {
  WorkerProcess worker({"/bin/cat"});  // echoes the request back: a valid one-line answer
  std::string death;
  const auto answer =
      worker.request(nlohmann::json{{"op", "info"}, {"n", 3}}, std::chrono::seconds(10), death);
  REQUIRE(answer.has_value());
  CHECK((*answer)["n"] == 3);
  const auto second =
      worker.request(nlohmann::json{{"op", "again"}}, std::chrono::seconds(10), death);
  REQUIRE(second.has_value());
  CHECK((*second)["op"] == "again");
}

TEST_CASE("a worker that dies is reported with how it died") {
  WorkerProcess worker({"/bin/sh", "-c", "read line; kill -SEGV $$"});
  std::string death;
  const auto answer = worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death);
  CHECK_FALSE(answer.has_value());
  CHECK(death.find("signal 11") != std::string::npos);
  CHECK_FALSE(worker.running());
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(1), death).has_value());
}

TEST_CASE("a worker that exits with a code is reported with it") {
  WorkerProcess worker({"/bin/sh", "-c", "read line; exit 3"});
  std::string death;
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death).has_value());
  CHECK(death == "worker exited with code 3");
}

TEST_CASE("a worker that hangs is killed at the timeout") {
  WorkerProcess worker({"/bin/sleep", "30"});
  std::string death;
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(1), death).has_value());
  CHECK(death.find("timed out after 1 s") != std::string::npos);
}

TEST_CASE("malformed output is a failure, not a crash") {
  WorkerProcess worker({"/bin/sh", "-c", "read line; echo 'not json'; sleep 5"});
  std::string death;
  CHECK_FALSE(
      worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death).has_value());
  CHECK(death.find("malformed") != std::string::npos);
}

TEST_CASE("the worker runs in its own process group") {
  WorkerProcess worker({"/bin/sleep", "30"});
  REQUIRE(worker.pid() > 0);
  CHECK(::getpgid(worker.pid()) == worker.pid());
  CHECK(::getpgid(worker.pid()) != ::getpgrp());
}

TEST_CASE("a worker dies with its parent, even after kill -9 of the parent") {
  // Orphans are re-parented to this process, so it can see how the worker ended.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int pids[2];
  REQUIRE(::pipe(pids) == 0);
  const pid_t sweep = ::fork();
  REQUIRE(sweep >= 0);
  if (sweep == 0) {  // the "sweep": starts a worker that never exits by itself, then waits
    // One answer first, so the worker is past its start-up (and exec) before the sweep dies.
    WorkerProcess worker({"/bin/sh", "-c", "read line; echo '{}'; exec sleep 600"});
    std::string death;
    if (!worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death)) ::_exit(1);
    const pid_t worker_pid = worker.pid();
    if (::write(pids[1], &worker_pid, sizeof worker_pid) != sizeof worker_pid) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::close(pids[1]);
  pid_t worker_pid = -1;
  REQUIRE(::read(pids[0], &worker_pid, sizeof worker_pid) == sizeof worker_pid);
  ::close(pids[0]);
  REQUIRE(::kill(sweep, SIGKILL) == 0);
  CHECK(killed_by_sigkill(wait_for_end(sweep, 10)));
  CHECK(killed_by_sigkill(wait_for_end(worker_pid, 10)));  // not still sleeping for 600 s
}

TEST_CASE("closing a worker that ignores EOF kills it and everything it started") {
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  pid_t grandchild = -1;
  {
    // Answers with the pid of a background sleep, then waits for it instead of reading stdin.
    WorkerProcess worker({"/bin/sh", "-c", "sleep 600 & echo \"{\\\"pid\\\":$!}\"; wait"});
    std::string death;
    const auto answer =
        worker.request(nlohmann::json{{"op", "x"}}, std::chrono::seconds(10), death);
    REQUIRE(answer.has_value());
    grandchild = (*answer)["pid"].get<pid_t>();
  }  // the destructor: EOF, 2 s of grace, then SIGKILL to the group
  CHECK(killed_by_sigkill(wait_for_end(grandchild, 10)));
}
