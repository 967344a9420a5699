#include "tuner/cli/commands.hpp"

namespace tuner::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"check", "compile every config (no GPU) or run the correctness check (GPU)", run_check},
      {"plan", "prune the config space by resource budgets, compile the rest, give every config a fate",
       run_plan},
      {"bench", "time configs on the GPU (verified first) against the copy bandwidth", run_bench},
      {"sweep", "verify and time every survivor per batch size into a SQLite DB, pick winners", run_sweep},
      {"sweep-worker", "(internal) the GPU process of tuner sweep", run_sweep_worker},
  };
  return list;
}

}  // namespace tuner::cli
