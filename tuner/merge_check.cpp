// What tuner merge checks before it writes anything: schema versions, kernel sources, shards.
#include <filesystem>
#include <map>
#include <set>

#include "core/error.hpp"
#include "db/store/shards.hpp"
#include "db/store/store.hpp"
#include "tuner/merge.hpp"

namespace tuner {

namespace {

namespace fs = std::filesystem;

db::Store open_input(const std::string& path) {
  db::Store store = db::Store::open_read_only(path);
  const std::int64_t version = store.connection().query_int64("PRAGMA user_version");
  if (version != db::kSchemaVersion) {
    throw InputError("tuner merge: " + path + " has schema version " + std::to_string(version) +
                     ", this tuner writes " + std::to_string(db::kSchemaVersion) +
                     ": merge only DBs written by this tuner build (open it once with `tuner plan "
                     "--db " +
                     path + "` to upgrade it, or re-run that shard)");
  }
  return store;
}

// family -> source hash -> the files whose trials used it.
using SourceMap = std::map<std::string, std::map<std::string, std::set<std::string>>>;

void collect_sources(const db::Store& store, SourceMap& sources) {
  // Per source, the first trial that used it (not a DISTINCT over every trial: a shard holds
  // ~100 000 plan rows, and that scan took ~0.1 s a shard).
  db::Statement select = store.connection().prepare(
      "SELECT s.family, s.hash FROM sources s WHERE EXISTS (SELECT 1 FROM trials t WHERE "
      "t.source_hash = s.hash)");
  while (select.step()) sources[select.column_text(0)][select.column_text(1)].insert(store.path());
}

void check_sources(const SourceMap& sources) {
  for (const auto& [family, hashes] : sources) {
    if (hashes.size() < 2) continue;
    std::string list;
    for (const auto& [hash, files] : hashes) {
      list += "\n  ";
      list += hash.substr(0, 16);
      list += ": ";
      list += *files.begin();
      if (files.size() > 1) list += " and " + std::to_string(files.size() - 1) + " more";
    }
    std::string message = "tuner merge: the DBs hold " + family + " results of ";
    message += std::to_string(hashes.size());
    message += " different kernel sources:";
    message += list;
    message +=
        "\nmerge only DBs swept with one build of the templates (re-run the shards of the older "
        "build, or merge into a new OUT file)";
    throw InputError(message);
  }
}

struct ShardSeen {
  std::string file;
  bool ended = false;
  int runs = 0;
  std::string gpu;  // the run's device: sweep shards of one job must share a model
};

using ShardMap = std::map<std::string, std::map<int, std::map<int, ShardSeen>>>;  // work, N, i

void collect_shards(const db::Store& store, ShardMap& shards) {
  for (const db::ShardRecord& record : db::shard_records(store)) {
    ShardSeen& seen = shards[record.work][record.count][record.index];
    if (!seen.file.empty() && seen.file != store.path()) {
      throw InputError("tuner merge: shard " + std::to_string(record.index) + "/" +
                       std::to_string(record.count) + " of '" + record.work + "' is in both " +
                       seen.file + " and " + store.path() +
                       ": overlapping shards; pass each shard's DB once");
    }
    seen.file = store.path();
    seen.ended = seen.ended || record.ended;
    ++seen.runs;
    const std::optional<std::string> gpu = store.run(record.run_id).gpu_name;
    if (gpu && !seen.gpu.empty() && *gpu != seen.gpu) {
      throw InputError("tuner merge: shard " + std::to_string(record.index) + " of '" +
                       record.work + "' in " + store.path() + " was measured on " + seen.gpu +
                       " and on " + *gpu + ": re-run it on one GPU model");
    }
    if (gpu) seen.gpu = *gpu;
  }
}

std::vector<ShardSet> check_shards(const ShardMap& shards) {
  std::vector<ShardSet> sets;
  for (const auto& [work, by_count] : shards) {
    if (by_count.size() > 1) {
      throw InputError("tuner merge: '" + work + "' was sharded in " +
                       std::to_string(by_count.size()) +
                       " different ways (different N in i/N): merge the shards of one "
                       "submission only");
    }
    const auto& [count, by_index] = *by_count.begin();
    ShardSet set{work, count, 0};
    std::set<std::string> gpus;
    for (int index = 1; index <= count; ++index) {
      const auto found = by_index.find(index);
      const std::string name =
          "shard " + std::to_string(index) + "/" + std::to_string(count) + " of '" + work + "'";
      if (found == by_index.end()) {
        throw InputError("tuner merge: " + name + " is missing from the inputs: run it (`--shard " +
                         std::to_string(index) + "/" + std::to_string(count) +
                         "`, or re-submit that array task) and "
                         "pass its DB too");
      }
      if (!found->second.ended) {
        throw InputError("tuner merge: " + name + " in " + found->second.file +
                         " never finished (killed?): re-submit that array task (it resumes into "
                         "the same DB) and merge again");
      }
      set.resumed += found->second.runs - 1;
      if (!found->second.gpu.empty()) gpus.insert(found->second.gpu);
    }
    if (gpus.size() > 1) {
      throw InputError("tuner merge: the shards of '" + work + "' ran on different GPU models (" +
                       *gpus.begin() + ", " + *gpus.rbegin() +
                       "): a winner compares configs timed on one model; re-run the shards of "
                       "one model on that model");
    }
    sets.push_back(set);
  }
  return sets;
}

}  // namespace

std::vector<ShardSet> check_merge_inputs(const MergeRequest& request) {
  if (request.inputs.empty()) {
    throw InputError("tuner merge: no input DB: pass OUT.db and at least one IN.db");
  }
  std::error_code error;
  SourceMap sources;
  ShardMap shards;
  std::set<fs::path> seen;
  for (const std::string& input : request.inputs) {
    const fs::path canonical = fs::weakly_canonical(input, error);
    if (canonical == fs::weakly_canonical(request.out_path, error)) {
      throw InputError("tuner merge: " + input + " is both OUT and an input: pass a new OUT file");
    }
    if (!seen.insert(canonical).second) {
      throw InputError("tuner merge: " + input + " is given twice: pass each input once");
    }
    const db::Store store = open_input(input);
    collect_sources(store, sources);
    collect_shards(store, shards);
  }
  if (fs::exists(request.out_path, error)) collect_sources(open_input(request.out_path), sources);
  check_sources(sources);
  return check_shards(shards);
}

}  // namespace tuner
