#pragma once
// The CLI's subcommands. Each parses its own options (Boost.Program_options) and returns the exit
// code; errors are thrown and mapped to exit codes in main.cpp (InputError -> 2, others -> 1).
#include <string>
#include <vector>

namespace tuner::cli {

using Args = std::vector<std::string>;  // the arguments after the subcommand name

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args& args);
};

const std::vector<Command>& commands();

int run_check(const Args& args);
int run_plan(const Args& args);
int run_bench(const Args& args);
int run_sweep(const Args& args);
int run_sweep_worker(const Args& args);
int run_report(const Args& args);
int run_diff(const Args& args);
int run_query(const Args& args);
int run_freeze(const Args& args);
int run_verify(const Args& args);
int run_export(const Args& args);
int run_merge(const Args& args);

}  // namespace tuner::cli
