#pragma once
// Running the built `tuner` binary (or any shell command) from a test and capturing what it wrote.
// Tests get TUNER_BINARY_DIR as a compile definition.
#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tuner::test {

// The build tree's binary, or $TUNER_BINARY (a build copied to the GPU machine, whose build tree
// path does not exist there).
inline const std::string kTunerBinary = [] {
  const char* binary = std::getenv("TUNER_BINARY");
  return binary != nullptr && *binary != '\0' ? std::string(binary)
                                              : std::string(TUNER_BINARY_DIR "/tuner/tuner");
}();

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string output;  // stdout; stderr too when the command redirects it ("2>&1")
};

// Runs `command` with /bin/sh and waits for it.
inline CommandResult run_command(const std::string& command) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  CommandResult result;
  std::array<char, 4096> buffer{};
  std::size_t read = 0;
  while ((read = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), read);
  }
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Runs `command` capturing its stdout and stderr together.
inline CommandResult run_with_stderr(const std::string& command) {
  return run_command(command + " 2>&1");
}

}  // namespace tuner::test
