#include "core/worker_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tuner {

namespace {

void throw_errno(const std::string& call) {
  throw std::runtime_error(call + " failed: " + std::strerror(errno));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// How long a worker may take to exit by itself after its stdin closes.
constexpr std::chrono::milliseconds kExitGrace{2000};

// In the forked child, before exec: its own process group (a terminal's Ctrl-C reaches the
// sweep, which ends the worker; the worker's group is killed as one), and SIGKILL when the
// parent dies, however it dies (kill -9 included). The signal survives exec.
void bind_to_parent(pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
}

// True once `pid` has exited (left a zombie: the id stays reserved until it is reaped), waiting
// up to `grace`.
bool exited_within(pid_t pid, std::chrono::milliseconds grace) {
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (true) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return true;  // not our child any more (ECHILD): nothing to wait for
    }
    if (info.si_pid == pid) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    ::usleep(10000);
  }
}

}  // namespace

std::string self_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

WorkerProcess::WorkerProcess(std::vector<std::string> argv) {
  int in_pipe[2];
  int out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) throw_errno("pipe2");
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    throw_errno("pipe2");
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw_errno("fork");
  if (pid_ == 0) {
    bind_to_parent(parent);
    ::dup2(in_pipe[0], STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "tuner: error: cannot start worker %s: %s\n", args[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // also here, so the group exists before the constructor returns
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
}

WorkerProcess::~WorkerProcess() { stop(false); }

pid_t WorkerProcess::pid() const noexcept { return pid_; }

std::string WorkerProcess::reap() {
  if (pid_ <= 0) return "worker not running";
  int status = 0;
  std::string how = "worker exited";
  if (::waitpid(pid_, &status, 0) == pid_) {
    if (WIFSIGNALED(status)) {
      how = "worker killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
            ::strsignal(WTERMSIG(status)) + ")";
    } else if (WIFEXITED(status)) {
      how = "worker exited with code " + std::to_string(WEXITSTATUS(status));
    }
  }
  pid_ = -1;
  return how;
}

void WorkerProcess::stop(bool kill_first) {
  close_fd(to_child_);  // EOF on its stdin: a healthy worker exits by itself
  if (pid_ > 0) {
    if (!kill_first) exited_within(pid_, kExitGrace);
    // The whole group, every time: a worker that hangs, and anything it started. While the
    // worker is unreaped its id cannot name another process group.
    ::kill(-pid_, SIGKILL);
    reap();
  }
  close_fd(from_child_);
  pending_.clear();
}

// Writes one request line; false (and the worker reaped, `death` saying how it ended) when the
// worker is gone.
bool WorkerProcess::send(const std::string& line, std::string& death) {
  const struct sigaction ignore_pipe = [] {
    struct sigaction action {};
    action.sa_handler = SIG_IGN;
    return action;
  }();
  ::sigaction(SIGPIPE, &ignore_pipe, nullptr);  // a dead worker must not kill the sweep
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(to_child_, line.data() + written, line.size() - written);
    if (n <= 0) {
      close_fd(to_child_);
      death = reap();
      close_fd(from_child_);
      return false;
    }
    written += static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<nlohmann::json> WorkerProcess::request(const nlohmann::json& job,
                                                     std::chrono::seconds timeout,
                                                     std::string& death) {
  timed_out_ = false;
  if (pid_ <= 0) {
    death = "worker not running";
    return std::nullopt;
  }
  if (!send(job.dump() + "\n", death)) return std::nullopt;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const std::size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      const std::string answer = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      try {
        return nlohmann::json::parse(answer);
      } catch (const nlohmann::json::exception&) {
        death = "worker answered with malformed output: " + answer.substr(0, 200);
        stop(true);
        return std::nullopt;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stop(true);
      timed_out_ = true;
      death = "worker timed out after " + std::to_string(timeout.count()) + " s and was killed";
      return std::nullopt;
    }
    struct pollfd descriptor {
      from_child_, POLLIN, 0
    };
    const int ready = ::poll(&descriptor, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[65536];
    const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
    if (n <= 0) {
      close_fd(to_child_);
      death = reap();
      close_fd(from_child_);
      pending_.clear();
      return std::nullopt;
    }
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace tuner
