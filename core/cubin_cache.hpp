#pragma once
// A content-addressed on-disk cache of NVRTC compiles. The key is the SHA-256 of everything that
// decides the binary: the source name and text, every header's include name and text, the name
// expressions, the NVRTC options, NVRTC's version and the arch. One file per key holds the cubin,
// NVRTC's log and the lowered names; a compile NVRTC rejected is cached too (log only), so an
// unchanged re-plan compiles nothing. Files are written to a temp file in the cache directory and
// renamed into place, so several processes may share one directory.
#include <filesystem>
#include <optional>
#include <string>

#include "core/nvrtc.hpp"

namespace tuner {

// One compile as the cache hands it back.
struct CachedCompile {
  bool compiled = false;  // false: NVRTC rejected the source; result.log holds why
  CompileResult result;   // cubin empty when !compiled; compile_ms is the original compile's time
  bool from_cache = false;
};

// $XDG_CACHE_HOME/tuner, else $HOME/.cache/tuner. Throws InputError when neither is set.
std::filesystem::path default_cache_dir();

// The request's cache key (64 hex digits).
std::string cache_key(const CompileRequest& request);

class CubinCache {
 public:
  // Creates the directory when missing and checks that a file can be written there. Throws
  // InputError naming the directory and the fix (--cache-dir) when it cannot be used.
  explicit CubinCache(std::filesystem::path dir);

  const std::filesystem::path& dir() const noexcept { return dir_; }

  // The entry stored under `key`; nullopt when absent or unreadable (a damaged entry is a miss
  // and is overwritten by the next store).
  std::optional<CachedCompile> load(const std::string& key) const;
  // Writes atomically (temp file + rename). Throws std::runtime_error naming the file on failure.
  void store(const std::string& key, const CachedCompile& entry) const;

  std::filesystem::path entry_path(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

// The cached entry for `request` when present; otherwise compiles (an NvrtcError becomes
// compiled = false with its log) and stores the result.
CachedCompile compile_cached(const CubinCache& cache, const CompileRequest& request);

}  // namespace tuner
