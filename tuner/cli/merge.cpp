// `tuner merge OUT.db IN.db...`: parse, merge, print what was merged and every conflict.
#include <cstdio>

#include "core/error.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/merge.hpp"

namespace tuner::cli {

namespace {

void print_help() {
  std::printf(
      "usage: tuner merge OUT.db IN.db [IN.db ...]\n\n"
      "Merges tuning stores (e.g. the shard DBs of `tuner plan|sweep --shard i/N`) into OUT.db\n"
      "(created when missing): runs, trials, winners. Checked first, nothing written on failure:\n"
      "every input of this schema version, one kernel source per family across all files, and\n"
      "for each sharded job every shard present once and finished. Idempotent: merging the same\n"
      "files again changes nothing. Two different timings of one config (same resume key):\n"
      "a wrong result beats a fault beats a timing; between timings the smaller spread, then\n"
      "the smaller median wins; each such conflict is printed. Winners are decided again from\n"
      "the merged trials with the sweep's noise-aware rule (a sweep's own re-timed winner is\n"
      "kept). Exit 0 merged, 2 bad input (the problem and the fix named).\n");
}

void print_summary(const std::string& out, const MergeSummary& summary) {
  for (const ShardSet& set : summary.shard_sets) {
    std::printf(
        "complete: %d/%d shards of '%s'%s\n", set.count, set.count, set.work.c_str(),
        set.resumed > 0
            ? (" (" + std::to_string(set.resumed) + " shard run(s) killed and resumed)").c_str()
            : "");
  }
  for (const db::MergeConflict& conflict : summary.conflicts) {
    std::printf("conflict: %s %s on %s: kept %s; dropped %s\n", conflict.problem.c_str(),
                conflict.params_json.c_str(), conflict.device_name.c_str(), conflict.kept.c_str(),
                conflict.replaced.c_str());
  }
  for (const std::string& note : summary.notes) std::printf("note: %s\n", note.c_str());
  std::printf(
      "merged into %s (%s): %lld runs and %lld trials added, %lld trials already there, %lld "
      "plan fates held once for every shard, %zu conflicts resolved; winners: %d decided from "
      "the merged trials, %d kept from sweeps; %.2f s\n",
      out.c_str(), summary.out_existed ? "existing" : "new",
      static_cast<long long>(summary.runs_added), static_cast<long long>(summary.trials_added),
      static_cast<long long>(summary.trials_already_there),
      static_cast<long long>(summary.plan_fates_shared), summary.conflicts.size(),
      summary.winners_decided, summary.winners_kept, summary.wall_s);
}

}  // namespace

int run_merge(const Args& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    print_help();
    return 0;
  }
  for (const std::string& arg : args) {
    if (arg.empty() || arg[0] == '-') {
      throw InputError("tuner merge takes file names only, not '" + arg +
                       "': tuner merge OUT.db IN.db [IN.db ...]");
    }
  }
  if (args.size() < 2) {
    throw InputError(
        "tuner merge needs OUT.db and at least one IN.db: tuner merge OUT.db IN.db...");
  }
  MergeRequest request;
  request.out_path = args.front();
  request.inputs.assign(args.begin() + 1, args.end());
  print_summary(request.out_path, tuner::run_merge(request));
  return 0;
}

}  // namespace tuner::cli
