#include "tuner/cli/commands.hpp"

namespace tuner::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"check", "compile every config (no GPU) or run the correctness check (GPU)", run_check},
      {"plan",
       "prune the config space by resource budgets, compile the rest, give every config a fate",
       run_plan},
      {"bench", "time configs on the GPU (verified first) against the copy bandwidth", run_bench},
      {"sweep", "verify and time every survivor per batch size into a SQLite DB, pick winners",
       run_sweep},
      {"sweep-worker", "(internal) the GPU process of tuner sweep", run_sweep_worker},
      {"report",
       "write report.md and PNG plots of a tuning DB (winners, A/B per dimension, pruning)",
       run_report},
      {"diff", "compare two sweep runs per batch; exit 1 when a winner got slower", run_diff},
      {"query", "look up the config a serving engine gets for one shape and batch, and why",
       run_query},
      {"freeze", "write a frozen, read-only DB of the winners with their cubins", run_freeze},
      {"verify", "recompute a frozen DB's checksum and check its schema", run_verify},
      {"export", "write the winners as vLLM/SGLang-style tuned-config JSON files", run_export},
      {"merge", "merge shard DBs (tuner plan|sweep --shard i/N) into one; decide winners again",
       run_merge},
  };
  return list;
}

}  // namespace tuner::cli
