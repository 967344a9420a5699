#include "core/cubin_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace tuner {

namespace {

constexpr const char* kMagic = "tuner-cubin-cache 1";

// A file descriptor that is closed when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileDescriptor& operator=(FileDescriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.fd_;
      other.fd_ = -1;
    }
    return *this;
  }
  ~FileDescriptor() { reset(); }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Closes now and reports close(2)'s errno (0 on success): a failed close can lose written data.
  int close_now() noexcept {
    const int result = ::close(fd_);
    fd_ = -1;
    return result == 0 ? 0 : errno;
  }

 private:
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_;
};

std::string errno_text(int code) {
  return std::error_code(code, std::generic_category()).message();
}

std::string unusable_dir_message(const std::filesystem::path& dir, const std::string& why) {
  return "cache directory '" + dir.string() + "' cannot be used (" + why +
         "): pass a writable directory with --cache-dir DIR";
}

// Creates a uniquely named temp file in `dir`; its path is returned through `path`.
FileDescriptor make_temp_file(const std::filesystem::path& dir, std::string* path, int* error) {
  std::string name = (dir / ".tmp-XXXXXX").string();
  FileDescriptor fd(::mkstemp(name.data()));
  *error = fd ? 0 : errno;
  *path = name;
  return fd;
}

void write_all(int fd, const char* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) throw std::runtime_error("write " + path + ": " + errno_text(errno));
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}

std::string serialize(const std::string& key, const CachedCompile& entry) {
  const nlohmann::json meta = {{"key", key},
                               {"compiled", entry.compiled},
                               {"log", entry.result.log},
                               {"lowered_names", entry.result.lowered_names},
                               {"compile_ms", entry.result.compile_ms}};
  const std::string meta_text = meta.dump();
  std::string text = std::string(kMagic) + "\n" + std::to_string(meta_text.size()) + " " +
                     std::to_string(entry.result.cubin.size()) + "\n" + meta_text;
  text.append(entry.result.cubin.begin(), entry.result.cubin.end());
  return text;
}

std::optional<CachedCompile> deserialize(const std::string& key, const std::string& text) {
  const std::size_t magic_end = text.find('\n');
  if (magic_end == std::string::npos || text.compare(0, magic_end, kMagic) != 0)
    return std::nullopt;
  const std::size_t sizes_end = text.find('\n', magic_end + 1);
  if (sizes_end == std::string::npos) return std::nullopt;
  std::size_t meta_size = 0;
  std::size_t cubin_size = 0;
  try {
    const std::string sizes = text.substr(magic_end + 1, sizes_end - magic_end - 1);
    std::size_t used = 0;
    meta_size = std::stoull(sizes, &used);
    cubin_size = std::stoull(sizes.substr(used));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::size_t body = sizes_end + 1;
  if (text.size() != body + meta_size + cubin_size) return std::nullopt;  // truncated or padded
  const nlohmann::json meta = nlohmann::json::parse(text.substr(body, meta_size), nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || meta.value("key", "") != key) return std::nullopt;
  try {
    CachedCompile entry;
    entry.compiled = meta.at("compiled").get<bool>();
    entry.result.log = meta.at("log").get<std::string>();
    entry.result.lowered_names = meta.at("lowered_names").get<std::map<std::string, std::string>>();
    entry.result.compile_ms = meta.at("compile_ms").get<double>();
    entry.result.cubin.assign(text.begin() + static_cast<std::ptrdiff_t>(body + meta_size),
                              text.end());
    entry.result.ptxas = parse_ptxas_report(entry.result.log);
    entry.from_cache = true;
    return entry;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::filesystem::path default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::filesystem::path(xdg) / "tuner";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::filesystem::path(home) / ".cache" / "tuner";
  throw InputError(
      "no default cache directory: neither XDG_CACHE_HOME nor HOME is set; pass --cache-dir DIR");
}

std::string cache_key(const CompileRequest& request) {
  // Each field is length-prefixed so that no two different requests hash the same text.
  std::string text;
  const auto add = [&text](const std::string& field) {
    text += std::to_string(field.size());
    text += ':';
    text += field;
  };
  add("nvrtc " + nvrtc_version());
  add("sm_" + std::to_string(request.arch_sm));
  add(request.source_name);
  add(request.source_text);
  for (const SourceFile& header : request.headers) {
    add(header.name);
    add(header.text);
  }
  for (const std::string& expression : request.name_expressions) add("name " + expression);
  for (const std::string& option : default_nvrtc_options(request.arch_sm)) add("option " + option);
  for (const std::string& option : request.extra_options) add("option " + option);
  return sha256_hex(text);
}

CubinCache::CubinCache(std::filesystem::path dir) : dir_(std::move(dir)) {
  if (dir_.empty()) throw InputError("--cache-dir is empty: pass a writable directory");
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  if (error) throw InputError(unusable_dir_message(dir_, error.message()));
  if (!std::filesystem::is_directory(dir_, error)) {
    throw InputError(unusable_dir_message(dir_, "not a directory"));
  }
  std::string probe;
  int probe_error = 0;
  FileDescriptor fd = make_temp_file(dir_, &probe, &probe_error);
  if (!fd)
    throw InputError(
        unusable_dir_message(dir_, "cannot create a file: " + errno_text(probe_error)));
  ::unlink(probe.c_str());
}

std::filesystem::path CubinCache::entry_path(const std::string& key) const {
  return dir_ / (key + ".cubin");
}

std::optional<CachedCompile> CubinCache::load(const std::string& key) const {
  std::ifstream in(entry_path(key), std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff size = in.tellg();
  if (size < 0) return std::nullopt;
  std::string text(static_cast<std::size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(text.data(), size)) return std::nullopt;
  return deserialize(key, text);
}

void CubinCache::store(const std::string& key, const CachedCompile& entry) const {
  std::string temp_path;
  int error = 0;
  FileDescriptor fd = make_temp_file(dir_, &temp_path, &error);
  if (!fd) throw std::runtime_error("mkstemp in " + dir_.string() + ": " + errno_text(error));
  try {
    const std::string text = serialize(key, entry);
    write_all(fd.get(), text.data(), text.size(), temp_path);
    if (const int close_error = fd.close_now(); close_error != 0) {
      throw std::runtime_error("close " + temp_path + ": " + errno_text(close_error));
    }
    const std::string final_path = entry_path(key).string();
    // rename(2) replaces atomically: a reader sees the old entry or the new one, never a part.
    if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
      throw std::runtime_error("rename " + temp_path + " -> " + final_path + ": " +
                               errno_text(errno));
    }
  } catch (...) {
    ::unlink(temp_path.c_str());
    throw;
  }
}

CachedCompile compile_cached(const CubinCache& cache, const CompileRequest& request) {
  const std::string key = cache_key(request);
  if (std::optional<CachedCompile> hit = cache.load(key)) return *hit;
  CachedCompile entry;
  const auto start = std::chrono::steady_clock::now();
  try {
    entry.result = compile(request);
    entry.compiled = true;
  } catch (const NvrtcError& error) {
    // NVRTC's answer depends only on what the key covers, so a failure is cached like a cubin.
    entry.compiled = false;
    entry.result.log = error.log().empty() ? std::string(error.what()) : error.log();
    entry.result.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  cache.store(key, entry);
  return entry;
}

}  // namespace tuner
