#pragma once
// What a run records about where and with what it ran (host, toolkit versions, command line).
#include <string>

#include "db/store/records.hpp"

namespace tuner {

std::string host_name();

// Host, CUDA and NVRTC versions, tuner version and the command line filled in; the GPU fields
// are left empty for the caller (a plan has none).
db::RunInfo base_run_info(db::RunKind kind, const std::string& budget_arch,
                          const std::string& command_line);

}  // namespace tuner
