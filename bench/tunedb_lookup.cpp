// tunedb lookup latency and allocations on a frozen DB of 10 000 winners (100 shapes x 100 batch
// sizes, one budget arch), and the time to open and load that file.
//
// The DB is written through the real store API and frozen with tunedb::freeze; the cubin provider
// returns a few fake bytes per config instead of compiling (a lookup only hands back a pointer to
// the image, so its size does not matter here; open time with real ~70-90 KB cubins grows with
// the checksum over the bytes, see BM_OpenFrozen_NoChecksum for the share of that).
//
// Allocations are counted by this binary's replacement of the global operator new; each lookup
// benchmark reports allocs_per_lookup (must be 0).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <new>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "db/store/store.hpp"
#include "db/tunedb/cubin_elf.hpp"
#include "db/tunedb/freeze.hpp"
#include "db/tunedb/shape_handle.hpp"
#include "db/tunedb/tunedb.hpp"

namespace {

std::atomic<long long> g_allocations{0};

}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void* operator new(std::size_t size, std::align_val_t align) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t alignment = static_cast<std::size_t>(align);
  const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
  if (void* p = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return ::operator new(size, align);
}
// GCC pairs inlined `new` expressions with these and warns that free() does not match new; here
// new is malloc, so free is the match.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;

constexpr const char* kFamily = "lookup_bench";  // a label: the DB is synthetic
constexpr const char* kArch = "sm_120";
const std::vector<int> kHeads = {16, 32, 64, 128, 256};
const std::vector<int> kTp = {1, 2, 4, 8, 16};
const std::vector<int> kTopk = {512, 1024, 2048, 4096};
constexpr int kBatches = 100;  // tuned batches 1, 4, 7, ..., 298

int tuned_batch(int i) { return 1 + 3 * i; }

// Shape text as the DB keys it (db/ knows no family: any canonical name=value text will do).
std::string shape_text(int heads, int tp, int topk) {
  return "attn_tp=" + std::to_string(tp) +
         ",dtype_tag=e4m3_block,n_heads=" + std::to_string(heads) +
         ",page_size=64,topk=" + std::to_string(topk);
}

const std::vector<std::string>& params_pool() {
  static const std::vector<std::string> pool = {
      R"({"block_h":16,"block_t":16,"num_stages":2,"num_warps":4,"target_ctas":512})",
      R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":4,"target_ctas":1024})",
      R"({"block_h":16,"block_t":32,"num_stages":2,"num_warps":8,"target_ctas":256})",
      R"({"block_h":16,"block_t":64,"num_stages":3,"num_warps":4,"target_ctas":256})",
      R"({"block_h":32,"block_t":32,"num_stages":2,"num_warps":8,"target_ctas":512})",
      R"({"block_h":16,"block_t":64,"num_stages":4,"num_warps":8,"target_ctas":128})",
  };
  return pool;
}

struct Fixture {
  fs::path dir;
  fs::path frozen;
  double build_s = 0.0;
  std::size_t file_bytes = 0;
};

// Writes the store and freezes it once per process.
const Fixture& fixture() {
  static const Fixture built = [] {
    Fixture f;
    std::string pattern = (fs::temp_directory_path() / "tunedb_bench_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    f.dir = pattern;
    f.frozen = f.dir / "frozen.db";
    tuner::db::Store store = tuner::db::Store::open(f.dir / "store.db");
    tuner::db::RunInfo run;
    run.host = "bench";
    run.gpu_name = "NVIDIA H200";
    run.measured_arch = "sm_90";
    run.budget_arch = kArch;
    run.tuner_version = "bench";
    run.command_line = "tunedb_lookup_bench";
    run.kind = tuner::db::RunKind::sweep;
    const std::int64_t run_id = store.begin_run(run);
    store.add_source("bench-source", kFamily);
    std::size_t n = 0;
    for (int heads : kHeads) {
      for (int tp : kTp) {
        for (int topk : kTopk) {
          for (int i = 0; i < kBatches; ++i, ++n) {
            tuner::db::WinnerRecord w;
            w.family = kFamily;
            w.budget_arch = kArch;
            w.measured_arch = "sm_90";
            w.device_name = "NVIDIA H200";
            w.shape = shape_text(heads, tp, topk);
            w.batch = tuned_batch(i);
            w.params_json = params_pool()[n % params_pool().size()];
            w.median_us = 10.0 + static_cast<double>(n % 97);
            w.default_params_json = params_pool()[0];
            w.default_median_us = w.median_us * 1.1;
            w.decision = tuner::db::Decision::tuned;
            w.speedup_vs_default = 1.1;
            w.reason = "bench";
            w.source_hash = "bench-source";
            w.run_id = run_id;
            store.record_winner(w);
          }
        }
      }
    }
    store.end_run(run_id);
    const auto fake_image = [](const tunedb::CubinRequest& request) {
      return tunedb::CubinImage{tunedb::stand_in_cubin(request.arch, "fake"), {"split", "combine"}};
    };
    tunedb::FreezeOptions options;
    const tunedb::FreezeSummary summary =
        tunedb::freeze(f.dir / "store.db", f.frozen, options, fake_image);
    if (summary.winners != n) throw std::runtime_error("freeze lost winners");
    f.file_bytes = fs::file_size(f.frozen);
    std::fprintf(stderr, "frozen DB: %zu winners, %zu cubins, %zu bytes at %s\n", summary.winners,
                 summary.cubins, f.file_bytes, f.frozen.c_str());
    return f;
  }();
  return built;
}

struct Query {
  std::string shape;  // canonical text
  int batch = 0;
};

// 4096 queries over random shapes; `batch_of` picks the batch for a random index 0..99.
template <class BatchOf>
std::vector<Query> queries(BatchOf batch_of, bool tuned_shapes) {
  std::mt19937 random(12345);
  std::vector<Query> list;
  for (int i = 0; i < 4096; ++i) {
    Query q;
    const int heads = kHeads[random() % kHeads.size()];
    const int tp = kTp[random() % kTp.size()];
    q.shape = shape_text(heads, tp, tuned_shapes ? kTopk[random() % kTopk.size()] : 3000);
    q.batch = batch_of(static_cast<int>(random() % kBatches));
    list.push_back(q);
  }
  return list;
}

void run_lookups(benchmark::State& state, const std::vector<Query>& list, tunedb::How expected) {
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture().frozen);
  for (const Query& q : list) {
    if (db.lookup(kFamily, kArch, q.shape, q.batch).how != expected) {
      state.SkipWithError("a query did not get the expected rule");
      return;
    }
  }
  std::size_t next = 0;
  const long long allocations_before = g_allocations.load();
  for (auto _ : state) {
    const Query& q = list[next];
    next = (next + 1) & (list.size() - 1);
    tunedb::Lookup found = db.lookup(kFamily, kArch, q.shape, q.batch);
    benchmark::DoNotOptimize(found);
  }
  const long long allocations = g_allocations.load() - allocations_before;
  state.counters["allocs_per_lookup"] =
      static_cast<double>(allocations) / static_cast<double>(state.iterations());
  state.counters["winners"] = static_cast<double>(db.info().winners);
}

void BM_Lookup_Exact(benchmark::State& state) {
  static const std::vector<Query> list = queries(tuned_batch, true);
  run_lookups(state, list, tunedb::How::exact);
}

void BM_Lookup_Bucket(benchmark::State& state) {
  static const std::vector<Query> list = queries([](int i) { return tuned_batch(i) + 1; }, true);
  run_lookups(state, list, tunedb::How::bucket);
}

void BM_Lookup_Default(benchmark::State& state) {
  static const std::vector<Query> list = queries(tuned_batch, false);
  run_lookups(state, list, tunedb::How::default_config);
}

// The same queries through shape handles resolved once per shape (as a serving stack resolves its
// shapes at start-up); the loop reads a (handle, batch) pair and looks it up.
void run_handle_lookups(benchmark::State& state, const std::vector<Query>& list,
                        tunedb::How expected) {
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture().frozen);
  std::map<std::string, tunedb::ShapeHandle> handles;
  std::vector<std::pair<const tunedb::ShapeHandle*, int>> pairs;
  for (const Query& q : list) {
    auto found = handles.find(q.shape);
    if (found == handles.end()) {
      found = handles.emplace(q.shape, tunedb::resolve_shape(db, kFamily, kArch, q.shape)).first;
    }
    if (found->second.lookup(q.batch).how != expected) {
      state.SkipWithError("a query did not get the expected rule");
      return;
    }
    pairs.emplace_back(&found->second, q.batch);
  }
  std::size_t next = 0;
  const long long allocations_before = g_allocations.load();
  for (auto _ : state) {
    const auto& [handle, batch] = pairs[next];
    next = (next + 1) & (pairs.size() - 1);
    tunedb::Lookup found = handle->lookup(batch);
    benchmark::DoNotOptimize(found);
  }
  const long long allocations = g_allocations.load() - allocations_before;
  state.counters["allocs_per_lookup"] =
      static_cast<double>(allocations) / static_cast<double>(state.iterations());
  state.counters["shapes"] = static_cast<double>(handles.size());
}

void BM_Handle_Exact(benchmark::State& state) {
  static const std::vector<Query> list = queries(tuned_batch, true);
  run_handle_lookups(state, list, tunedb::How::exact);
}

void BM_Handle_Bucket(benchmark::State& state) {
  static const std::vector<Query> list = queries([](int i) { return tuned_batch(i) + 1; }, true);
  run_handle_lookups(state, list, tunedb::How::bucket);
}

// Above the largest tuned batch (298): answered by the stated rule, still a table read.
void BM_Handle_AboveLargest(benchmark::State& state) {
  static const std::vector<Query> list = queries([](int i) { return 1000 + i; }, true);
  run_handle_lookups(state, list, tunedb::How::bucket);
}

void BM_Handle_Default(benchmark::State& state) {
  static const std::vector<Query> list = queries(tuned_batch, false);
  run_handle_lookups(state, list, tunedb::How::default_config);
}

// Resolving one shape (done once per shape at start-up): a lookup per batch up to the largest.
void BM_Handle_Resolve(benchmark::State& state) {
  const tunedb::TuningDb db = tunedb::TuningDb::open(fixture().frozen);
  const std::string shape = shape_text(64, 4, 2048);
  for (auto _ : state) {
    tunedb::ShapeHandle handle = tunedb::resolve_shape(db, kFamily, kArch, shape);
    benchmark::DoNotOptimize(handle);
  }
}

void open_frozen(benchmark::State& state, bool verify_checksum) {
  const fs::path& path = fixture().frozen;
  tunedb::OpenOptions options;
  options.verify_checksum = verify_checksum;
  const long long allocations_before = g_allocations.load();
  for (auto _ : state) {
    tunedb::TuningDb db = tunedb::TuningDb::open(path, options);
    benchmark::DoNotOptimize(db.info().winners);
  }
  // Shows that the counter sees this binary's allocations (open allocates; lookups must not).
  state.counters["allocs_per_open"] =
      static_cast<double>(g_allocations.load() - allocations_before) /
      static_cast<double>(state.iterations());
  state.counters["file_bytes"] = static_cast<double>(fixture().file_bytes);
}

void BM_OpenFrozen(benchmark::State& state) { open_frozen(state, true); }
void BM_OpenFrozen_NoChecksum(benchmark::State& state) { open_frozen(state, false); }

BENCHMARK(BM_Lookup_Exact)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Lookup_Bucket)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Lookup_Default)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Handle_Exact)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Handle_Bucket)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Handle_AboveLargest)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Handle_Default)->Repetitions(10)->ReportAggregatesOnly(true);
BENCHMARK(BM_Handle_Resolve)
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_OpenFrozen)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);
BENCHMARK(BM_OpenFrozen_NoChecksum)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fixture();  // built before any timing
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ignored;
  fs::remove_all(fixture().dir, ignored);
  return 0;
}
