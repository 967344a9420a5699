#include "tuner/run_info.hpp"

#include <cuda.h>
#include <unistd.h>

#include "core/nvrtc.hpp"

namespace tuner {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

db::RunInfo base_run_info(db::RunKind kind, const std::string& budget_arch,
                          const std::string& command_line) {
  db::RunInfo run;
  run.host = host_name();
  run.budget_arch = budget_arch;
  run.cuda_version = std::to_string(CUDA_VERSION);
  run.nvrtc_version = nvrtc_version();
  run.tuner_version = TUNER_VERSION;
  run.command_line = command_line;
  run.kind = kind;
  return run;
}

}  // namespace tuner
