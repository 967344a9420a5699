#include "core/cubin_cache.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using tuner::CachedCompile;
using tuner::CompileRequest;
using tuner::CubinCache;

namespace {

using tuner::test::TempDir;

CompileRequest tiny_request(const std::string& body) {
  CompileRequest request;
  request.source_name = "tiny.cu";
  request.source_text =
      "#include \"tiny.h\"\nextern \"C\" __global__ void tiny(float* x) { " + body + " }\n";
  request.headers = {{"tiny.h", "#define SCALE 2.0f\n"}};
  request.name_expressions = {};
  request.arch_sm = 90;
  request.context = "cache test";
  return request;
}

CachedCompile sample_entry() {
  CachedCompile entry;
  entry.compiled = true;
  entry.result.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\n', '\xff'};
  entry.result.log =
      "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z3fooPf\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 512 bytes smem, 360 bytes cmem[0]\n";
  entry.result.lowered_names = {{"foo<1>", "_Z3fooPf"}};
  entry.result.compile_ms = 12.5;
  return entry;
}

std::size_t files_in(const fs::path& dir) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& file : fs::directory_iterator(dir)) ++count;
  return count;
}

}  // namespace

TEST_CASE("cubin cache: the key covers source, every header, names, options and arch") {
  const CompileRequest base = tiny_request("x[0] *= SCALE;");
  const std::string key = tuner::cache_key(base);
  CHECK(key.size() == 64);
  CHECK(tuner::cache_key(base) == key);

  CompileRequest changed = base;
  changed.source_text += " ";
  CHECK(tuner::cache_key(changed) != key);
  changed = base;
  changed.headers[0].text = "#define SCALE 3.0f\n";
  CHECK(tuner::cache_key(changed) != key);
  changed = base;
  changed.headers[0].name = "tiny2.h";
  CHECK(tuner::cache_key(changed) != key);
  changed = base;
  changed.arch_sm = 120;
  CHECK(tuner::cache_key(changed) != key);
  changed = base;
  changed.extra_options = {"-DEXTRA=1"};
  CHECK(tuner::cache_key(changed) != key);
  changed = base;
  changed.name_expressions = {"tiny"};
  CHECK(tuner::cache_key(changed) != key);
  changed = base;
  changed.context = "another context";  // messages only: the binary is the same
  CHECK(tuner::cache_key(changed) == key);
}

TEST_CASE("cubin cache: store then load gives back the cubin, log, names and ptxas figures") {
  TempDir dir;
  const CubinCache cache(dir.path() / "nested" / "cache");
  const std::string key(64, 'a');
  CHECK_FALSE(cache.load(key).has_value());
  cache.store(key, sample_entry());
  const std::optional<CachedCompile> loaded = cache.load(key);
  REQUIRE(loaded.has_value());
  CHECK(loaded->from_cache);
  CHECK(loaded->compiled);
  CHECK(loaded->result.cubin == sample_entry().result.cubin);
  CHECK(loaded->result.log == sample_entry().result.log);
  CHECK(loaded->result.lowered_names == sample_entry().result.lowered_names);
  CHECK(loaded->result.compile_ms == doctest::Approx(12.5));
  REQUIRE(loaded->result.ptxas.count("_Z3fooPf") == 1);
  CHECK(loaded->result.ptxas.at("_Z3fooPf").registers == 40);
  CHECK(loaded->result.ptxas.at("_Z3fooPf").spill_bytes() == 8);
  CHECK(files_in(cache.dir()) == 1);  // no temp file left behind
}

TEST_CASE("cubin cache: a truncated or foreign entry is a miss") {
  TempDir dir;
  const CubinCache cache(dir.path());
  const std::string key(64, 'b');
  cache.store(key, sample_entry());
  const fs::path path = cache.entry_path(key);
  fs::resize_file(path, fs::file_size(path) - 1);
  CHECK_FALSE(cache.load(key).has_value());
  // An entry stored under another key (a renamed file) does not answer for this one.
  cache.store(std::string(64, 'c'), sample_entry());
  fs::rename(cache.entry_path(std::string(64, 'c')), path);
  CHECK_FALSE(cache.load(key).has_value());
}

TEST_CASE("cubin cache: concurrent writers of one key leave one whole entry") {
  TempDir dir;
  const CubinCache cache(dir.path());
  const std::string key(64, 'd');
  tuner::parallel_for(16, 8, [&](std::size_t) { cache.store(key, sample_entry()); });
  const std::optional<CachedCompile> loaded = cache.load(key);
  REQUIRE(loaded.has_value());
  CHECK(loaded->result.cubin == sample_entry().result.cubin);
  CHECK(files_in(cache.dir()) == 1);
}

TEST_CASE("cubin cache: an unusable directory is an InputError naming it and the fix") {
  TempDir dir;
  const fs::path file = dir.path() / "a-file";
  std::ofstream(file) << "not a directory";
  const fs::path under_file = file / "cache";
  try {
    const CubinCache cache(under_file);
    FAIL("expected InputError");
  } catch (const tuner::InputError& error) {
    const std::string message = error.what();
    CHECK(message.find(under_file.string()) != std::string::npos);
    CHECK(message.find("--cache-dir") != std::string::npos);
  }
  CHECK_THROWS_AS(CubinCache(fs::path()), tuner::InputError);
}

TEST_CASE("cubin cache: default directory follows XDG_CACHE_HOME, then HOME") {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const char* old_home = std::getenv("HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "";
  const std::string saved_home = old_home ? old_home : "";
  ::setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
  ::setenv("HOME", "/home/someone", 1);
  CHECK(tuner::default_cache_dir() == fs::path("/xdg/cache/tuner"));
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(tuner::default_cache_dir() == fs::path("/home/someone/.cache/tuner"));
  ::unsetenv("HOME");
  CHECK_THROWS_AS(tuner::default_cache_dir(), tuner::InputError);
  if (old_xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (old_home) ::setenv("HOME", saved_home.c_str(), 1);
}

TEST_CASE("cubin cache: compile_cached compiles once with NVRTC, then answers from disk") {
  TempDir dir;
  const CubinCache cache(dir.path());
  const CompileRequest request = tiny_request("x[0] *= SCALE;");
  const CachedCompile first = tuner::compile_cached(cache, request);
  REQUIRE(first.compiled);
  CHECK_FALSE(first.from_cache);
  CHECK_FALSE(first.result.cubin.empty());
  const CachedCompile second = tuner::compile_cached(cache, request);
  CHECK(second.from_cache);
  CHECK(second.result.cubin == first.result.cubin);
  CHECK(second.result.ptxas.count("tiny") == 1);
  CHECK(fs::exists(cache.entry_path(tuner::cache_key(request))));
}

TEST_CASE("cubin cache: a source NVRTC rejects is cached as a failure with its log") {
  TempDir dir;
  const CubinCache cache(dir.path());
  const CompileRequest request = tiny_request("x[0] *= undefined_name;");
  const CachedCompile first = tuner::compile_cached(cache, request);
  CHECK_FALSE(first.compiled);
  CHECK_FALSE(first.from_cache);
  CHECK(first.result.log.find("undefined_name") != std::string::npos);
  const CachedCompile second = tuner::compile_cached(cache, request);
  CHECK(second.from_cache);
  CHECK_FALSE(second.compiled);
  CHECK(second.result.log == first.result.log);
}
