#include "tuner/merge.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <chrono>
#include <filesystem>

#include "core/error.hpp"
#include "db/store/store.hpp"
#include "tuner/merge_winners.hpp"

namespace tuner {

namespace {

namespace fs = std::filesystem;

// The file the merge writes: OUT's directory, removed unless renamed into place.
class TempOutput {
 public:
  explicit TempOutput(const fs::path& out)
      : path_(out.parent_path() /
              ("." + out.filename().string() + ".merge-" + std::to_string(::getpid()))) {
    remove();
  }
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;
  ~TempOutput() { remove(); }
  const fs::path& path() const { return path_; }
  void rename_to(const fs::path& out) {
    sync(path_);
    // A WAL left next to OUT would be replayed into the new file: OUT is closed, so it is stale.
    std::error_code ignored;
    for (const char* suffix : {"-wal", "-shm"}) fs::remove(out.string() + suffix, ignored);
    fs::rename(path_, out);
    remove();
  }

 private:
  static void sync(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      const int error = errno;
      if (fd >= 0) ::close(fd);
      throw std::runtime_error("fsync " + path.string() + ": " + std::strerror(error));
    }
    ::close(fd);
  }
  void remove() const {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      fs::remove(path_.string() + suffix, ignored);
    }
  }
  fs::path path_;
};

// OUT as it is (a consistent snapshot, WAL included) into the temp file.
void copy_existing(const fs::path& out, const fs::path& temp) {
  db::Store existing = db::Store::open_read_only(out);
  existing.connection().prepare("VACUUM INTO ?1").bind(1, temp.string()).run();
}

void add(MergeSummary& summary, db::MergeCounts counts) {
  summary.runs_added += counts.runs_added;
  summary.trials_added += counts.trials_added;
  summary.trials_already_there += counts.trials_already_there;
  summary.plan_fates_shared += counts.plan_fates_shared;
  for (db::MergeConflict& conflict : counts.conflicts) {
    summary.conflicts.push_back(std::move(conflict));
  }
}

}  // namespace

MergeSummary run_merge(const MergeRequest& request) {
  const auto began = std::chrono::steady_clock::now();
  MergeSummary summary;
  summary.shard_sets = check_merge_inputs(request);
  const fs::path out = fs::absolute(request.out_path);
  if (!fs::is_directory(out.parent_path())) {
    throw InputError("tuner merge: the directory of " + request.out_path +
                     " does not exist: create it or pass another OUT path");
  }
  summary.out_existed = fs::exists(out);
  TempOutput temp(out);
  if (summary.out_existed) copy_existing(out, temp.path());
  {
    db::Store store = db::Store::open(temp.path());
    // The temp file is thrown away on any failure, so it needs no journal on disk and no syncs
    // until it is complete (it is synced once before the rename).
    store.connection().exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF");
    for (const std::string& input : request.inputs) add(summary, db::merge_store(store, input));
    const WinnerCounts winners = decide_merged_winners(store);
    summary.winners_decided = winners.decided;
    summary.winners_kept = winners.kept;
    summary.notes = winners.notes;
  }  // closed: the WAL is checkpointed into the file before it is renamed
  temp.rename_to(out);
  summary.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return summary;
}

}  // namespace tuner
