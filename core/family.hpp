#pragma once
// The one interface a kernel family implements: a plain struct of functions (no class hierarchy).
// The engine (plan, sweep, worker, report, freeze, export) and the CLI see a family only through
// this value; kernels/registry maps names to families. Adding a family: kernels/<family>/,
// templates/<family>/, a line in kernels/registry.cpp, tests (README: "How to add a family").
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/budget.hpp"
#include "core/config.hpp"
#include "core/cuda_driver.hpp"
#include "core/nvrtc.hpp"
#include "core/shape.hpp"

namespace tuner {

// One shape dimension as the user gives it: the CLI option is --<name> (underscores as dashes).
// Input dimensions may be model-level (64 heads, TP 4); Family::canonicalize folds them into the
// kernel-level dimensions the DB keys on (16 local heads).
struct ShapeDim {
  std::string name;
  std::string default_value;
  std::string help;
  std::vector<std::string> allowed;  // empty: any positive integer
};

// A named shape worth tuning by default (e.g. one linear layer of a model at TP 4).
struct NamedShape {
  std::string name;
  std::map<std::string, std::string> values;  // input dimensions
};

// What a verification found.
struct Verdict {
  bool passed = false;
  double out_error = 0.0;  // the family's main error figure (e.g. relative Frobenius error)
  double aux_error = 0.0;  // a second figure (e.g. lse error), 0 when the family has none
  std::string reason;      // why it failed, or the figures in words
};

// Enqueues one launch of a loaded config reading input rotation `rotation` (graph-capturable).
using LaunchFn = std::function<void(int rotation, CUstream stream)>;

// A family's state on the current device (inputs, reference, loaded modules), built by
// Family::open_device. Functions throw CudaError / NvrtcError; the worker records them as fates.
struct DeviceSession {
  // Inputs for `batch`: as many independent input sets as launches_per_graph() afterwards.
  std::function<void(int batch)> prepare;
  std::function<LaunchFn(const Config&)> load;  // compile (cached) + load one config
  std::function<Verdict(const Config&, const LaunchFn&, std::uint64_t seed)> verify;
  std::function<double()> bytes_moved;  // bytes the prepared batch must move
  std::function<double()> flops;        // useful flops of the prepared batch (0: n/a)
  // Launches in one timing graph for the prepared batch, each with its own inputs (rotation 0 ..
  // n-1): at least setup.min_launches, and enough that one replay reads >= kL2Factor x
  // setup.l2_bytes of distinct input bytes (core/measure.hpp, l2_safe_launches), so the L2 cannot
  // serve the next replay. The family knows what a launch reads; the worker only asks.
  std::function<int()> launches_per_graph;
};

// One kernel of a frozen config as the serving launcher binds it (core/deploy_family.hpp), stored
// next to the cubin by `tuner freeze` so that serving needs neither the tuner nor a compiler.
struct FrozenLaunch {
  std::string role;             // the family's role name, e.g. "split", "combine"
  std::string name_expression;  // one of frozen_program's name expressions
  int block_threads = 0;
  int dynamic_smem = 0;      // bytes each launch asks for
  int max_dynamic_smem = 0;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to set at load
  // The config values the family's deploy geometry reads, canonical JSON ({"name_a":16,...}).
  std::string launch_params_json;
};

struct DeviceSetup {
  Shape shape;
  int arch_sm = 0;
  std::string cache_dir;
  double memory_gib = 1.0;  // input footprint (>= kL2Factor x the L2; check_memory_covers_l2)
  // The device's L2 that every timing replay must exceed kL2Factor times in distinct input bytes;
  // 0 when the caller flushes the L2 between replays instead (tuner bench --l2 flush).
  long long l2_bytes = 0;
  int min_launches = 32;  // launches per timing graph at least (graph launch cost amortised)
};

struct Family {
  std::string name;
  std::string summary;
  std::vector<ShapeDim> dims;
  std::vector<NamedShape> default_shapes;  // the first is the CLI default
  // Validates input values (every dim present) into the canonical Shape. Throws InputError naming
  // the dimension and its allowed values.
  Shape (*canonicalize)(const std::map<std::string, std::string>& values) = nullptr;
  // the shape in words for tables and reports (each family words its own dimensions).
  std::string (*describe_shape)(const Shape& shape) = nullptr;
  const std::vector<Parameter>& (*space)() = nullptr;  // launch_only marks grid-only parameters
  Config (*default_config)() = nullptr;
  // The named rules: empty when the config can run the shape, else the first failing rule's reason.
  std::string (*rules)(const Config& config, const Shape& shape) = nullptr;
  // The rules that one parameter value breaks alone: empty when some config with `value` may run
  // the shape, else why none can (e.g. "BLOCK_H 32 > 16 local heads"). The plan leaves such a
  // value out of its cross product and records it once for every member it stands for (two thirds
  // of the sparse MLA plan's 1.18 M members at 16 local heads). Must agree with `rules` (each
  // member with the value fails them). Optional.
  std::string (*value_rule)(std::string_view param, int value, const Shape& shape) = nullptr;
  // The measured trims: configs that can run but that measurements put outside what the sweep
  // times ("measured to lose: ..."; fate pruned_shape like the rules). Optional; `tuner bench
  // --trimmed` plans without them, so that a trim can be measured again.
  std::string (*trims)(const Config& config) = nullptr;
  // Rules that depend on the budget arch (instructions a path is for): empty, or why the arch does
  // not suit the config (fate pruned_budget). Optional.
  std::string (*arch_rules)(const Config& config, int arch_sm) = nullptr;
  StaticBudget (*budget)(const Config& config, const Shape& shape) = nullptr;
  // The NVRTC program of one compile key, and the name expression whose ptxas figures the plan
  // judges (the main kernel).
  CompileRequest (*program)(const Config& config, const Shape& shape, int arch_sm) = nullptr;
  std::string (*main_kernel)(const Config& config, const Shape& shape) = nullptr;
  // The program `tuner freeze` ships for a winning config: every kernel the `shapes` that run it
  // need (empty: the default config, which any shape may fall back to). The frozen cubin's kernel
  // names are its name expressions' lowered names, in order.
  CompileRequest (*frozen_program)(const Config& config, const std::vector<Shape>& shapes,
                                   int arch_sm) = nullptr;
  // The launch facts of frozen_program's kernels for the same (config, shapes). Optional: a family
  // without it freezes cubins the serving launcher cannot launch (it says so at open).
  std::vector<FrozenLaunch> (*frozen_launches)(const Config& config,
                                               const std::vector<Shape>& shapes) = nullptr;
  // SHA-256 over the family's template files (and common/): a change to one family invalidates
  // only its own results.
  const std::string& (*source_hash)() = nullptr;
  DeviceSession (*open_device)(const DeviceSetup& setup) = nullptr;
  // The batch sizes `tuner sweep` tunes by default (tuner sweep --batches syntax: lists, ranges,
  // "cudagraph" = the serving stack's CUDA-graph capture sizes up to default_max_batch).
  std::string default_batches = "1,2,4,8,16,32,48,64,80,96,128";
  int default_max_batch = 512;
  // The named batch set 'waves': batches up to max_batch where the family's grid fills the last
  // of its waves on a device of `sm_count` SMs, which the bucket rule must not hand the winner of
  // a larger batch (a grid one wave larger). Optional: without it 'waves' names no batch.
  std::vector<int> (*wave_edge_batches)(const Shape& shape, int sm_count, int max_batch) = nullptr;
  // The named batch set 'clusters': batches up to max_batch where the family's cluster launches
  // stop fitting one wave of clusters, from the device's cluster capacity with k CTAs per SM
  // (by_occupancy[k], k = 1..kClusterProbeOccupancy; core/cluster_probe.hpp), so that the bucket
  // rule never hands a batch whose clusters fit the winner of one whose clusters do not.
  // Optional: without it 'clusters' names no batch.
  std::vector<int> (*cluster_edge_batches)(const Shape& shape,
                                           const std::vector<ClusterCapacity>& by_occupancy,
                                           int max_batch) = nullptr;
  // What the GPU runs for `config` at `batch`, as text: the compiled kernel and every launch fact
  // (grids, block, shared memory, cluster, launch order). Configs with equal text at a batch are
  // one launch (e.g. launch-time values the launch at that batch does not read), which the search
  // measures once. Optional: without it every config is its own launch.
  std::string (*launch_identity)(const Config& config, const Shape& shape, int batch) = nullptr;
  // Tolerances the verification applies, in words (for reports and --help).
  std::string tolerance;
  // Export: the file name of one (shape, device) table and one entry of it (serving-stack format).
  std::string (*export_name)(const Shape& shape, const std::string& device_name) = nullptr;
  std::string (*export_entry)(const Config& config) = nullptr;  // a JSON object's text
};

}  // namespace tuner
