#pragma once
// A sweep run's record on the H200 for merge tests (test_merge.cpp, test_merge_digests.cpp): one
// host, so runs differ by their command line, as shards of one job do.
#include <string>

#include "db/store/records.hpp"

namespace tuner::test {

inline db::RunInfo h200_sweep_run(const std::string& command_line) {
  db::RunInfo run;
  run.host = "test-host";
  run.budget_arch = "sm_90";
  run.gpu_name = "NVIDIA H200";
  run.measured_arch = "sm_90";
  run.tuner_version = "test";
  run.command_line = command_line;
  run.kind = db::RunKind::sweep;
  return run;
}

}  // namespace tuner::test
