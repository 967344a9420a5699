#include "kernels/sparse_mla_decode/family.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <set>

#include "core/error.hpp"
#include "kernels/sparse_mla_decode/cluster_edges.hpp"
#include "kernels/sparse_mla_decode/deploy.hpp"
#include "kernels/sparse_mla_decode/geometry.hpp"
#include "kernels/sparse_mla_decode/resources.hpp"
#include "kernels/sparse_mla_decode/serve.hpp"
#include "kernels/sparse_mla_decode/source.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {
namespace {

int positive(const std::map<std::string, std::string>& values, const std::string& name) {
  std::string dim = name;  // as the CLI option is spelled
  for (char& c : dim) c = c == '_' ? '-' : c;
  const auto found = values.find(name);
  if (found == values.end()) {
    throw InputError("sparse_mla_decode needs shape dimension --" + dim);
  }
  const std::string& text = found->second;
  int value = 0;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || ptr != text.data() + text.size() || value <= 0) {
    throw InputError("--" + dim + " needs a positive integer, got '" + text + "'");
  }
  return value;
}

// The canonical dimensions themselves (local_heads, kv_format, ...) are accepted too, as 64 / 1.
std::map<std::string, std::string> input_dims(const std::map<std::string, std::string>& values) {
  if (!values.contains("local_heads")) return values;
  std::map<std::string, std::string> inputs;
  for (const auto& [name, value] : values) {
    if (name == "local_heads") {
      inputs["heads"] = value;
      inputs.insert_or_assign("tp", std::string("1"));
    } else if (name == "kv_format") {
      inputs["kv"] = value;
    } else {
      inputs[name] = value;
    }
  }
  return inputs;
}

tuner::Shape canonicalize(const std::map<std::string, std::string>& given) {
  const std::map<std::string, std::string> values = input_dims(given);
  for (const auto& [name, value] : values) {
    if (name != "heads" && name != "tp" && name != "topk" && name != "kv" && name != "page_size") {
      throw InputError("sparse_mla_decode has no shape dimension '" + name +
                       "': its dimensions are heads, tp, topk, kv, page_size (canonical: "
                       "kv_format, local_heads, page_size, topk)");
    }
  }
  Shape shape;
  shape.n_heads = positive(values, "heads");
  shape.attn_tp = positive(values, "tp");
  shape.topk = positive(values, "topk");
  shape.page_size = positive(values, "page_size");
  const auto kv = values.find("kv");
  if (kv == values.end()) throw InputError("sparse_mla_decode needs shape dimension --kv");
  shape.kv_format = parse_kv_format(kv->second);
  validate(shape);
  return canonical_shape(shape);
}

std::string describe_shape(const tuner::Shape& shape) {
  return shape.text("local_heads") + " local heads, topk " + shape.text("topk") + ", " +
         shape.text("kv_format") + ", page " + shape.text("page_size");
}

Config default_params() { return to_config(default_config()); }

std::string rules(const Config& config, const tuner::Shape& shape) {
  return shape_mismatch(from_config(config), typed_shape(shape));
}

std::string value_rule(std::string_view param, int value, const tuner::Shape& shape) {
  return value_mismatch(param, value, typed_shape(shape));
}

std::string trims(const Config& config) { return measured_trim(from_config(config)); }

std::string arch_rules(const Config& config, int arch_sm) {
  return arch_mismatch(from_config(config), arch_sm);
}

StaticBudget budget(const Config& config, const tuner::Shape& shape) {
  return static_budget(from_config(config), typed_shape(shape).kv_format);
}

CompileRequest program(const Config& config, const tuner::Shape& shape, int arch_sm) {
  return split_program(from_config(config), typed_shape(shape).kv_format, arch_sm);
}

std::string main_kernel(const Config& config, const tuner::Shape& shape) {
  return split_kernel_name(from_config(config), typed_shape(shape).kv_format);
}

// The split kernel of each KV format the shapes use, in KvFormat order (fp8_ds_mla, bf16), then
// the two combine kernels (general, whole-row: always the last two). The default config carries
// both formats' split kernels (any shape may fall back to it), so a consumer takes names[kv] when
// there are four.
CompileRequest frozen_program(const Config& config, const std::vector<tuner::Shape>& shapes,
                              int arch_sm) {
  std::set<KvFormat> formats;
  for (const tuner::Shape& shape : shapes) formats.insert(typed_shape(shape).kv_format);
  if (formats.empty()) formats = {KvFormat::fp8_ds_mla, KvFormat::bf16};
  const KernelConfig kernel = from_config(config);
  CompileRequest compile = split_program(kernel, *formats.begin(), arch_sm);
  for (auto format = std::next(formats.begin()); format != formats.end(); ++format) {
    compile.name_expressions.insert(compile.name_expressions.end() - 2,
                                    split_kernel_name(kernel, *format));
    compile.context.append("+").append(to_string(*format));
  }
  return compile;
}

// Each split kernel of frozen_program with the dynamic shared memory of its layout (also its
// max-dynamic-smem attribute), then the two combine kernels (deploy.hpp's block size, no dynamic
// smem).
std::vector<FrozenLaunch> frozen_launches(const Config& config,
                                          const std::vector<tuner::Shape>& shapes) {
  std::set<KvFormat> formats;
  for (const tuner::Shape& shape : shapes) formats.insert(typed_shape(shape).kv_format);
  if (formats.empty()) formats = {KvFormat::fp8_ds_mla, KvFormat::bf16};
  const KernelConfig kernel = from_config(config);
  const std::string params = "{\"block_h\":" + std::to_string(kernel.block_h) +
                             ",\"block_t\":" + std::to_string(kernel.block_t) +
                             ",\"merge\":" + std::to_string(kernel.merge) +
                             ",\"schedule\":" + std::to_string(kernel.schedule) +
                             ",\"target_ctas\":" + std::to_string(kernel.target_ctas) + "}";
  std::vector<FrozenLaunch> launches;
  for (const KvFormat format : formats) {
    const StaticBudget budget = static_budget(kernel, format);
    launches.push_back({std::string(split_role(format)), split_kernel_name(kernel, format),
                        budget.threads_per_block, budget.smem_bytes_per_block,
                        budget.smem_bytes_per_block, params});
  }
  launches.push_back({std::string(kCombineRole), combine_kernel_name(),
                      static_cast<int>(kCombineThreads), 0, 0, params});
  launches.push_back({std::string(kCombineWholeRowRole), combine_whole_row_kernel_name(),
                      static_cast<int>(kCombineThreads), 0, 0, params});
  return launches;
}

// tuner export: one JSON per shape and device keyed by batch, as serving stacks keep tuned
// configs; the entry is the parameter object with upper-case names (BLOCK_T, TARGET_CTAS, ...).
std::string export_name(const tuner::Shape& shape, const std::string& device_name) {
  return "sparse_mla_decode,local_heads=" + shape.text("local_heads") +
         ",topk=" + shape.text("topk") + ",kv=" + shape.text("kv_format") +
         ",page=" + shape.text("page_size") + ",device_name=" + device_name + ".json";
}

std::string export_entry(const Config& config) {
  std::string json = "{";
  for (const auto& [name, value] : config.values) {
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    json += (json.size() > 1 ? ",\"" : "\"") + upper + "\":" + std::to_string(value);
  }
  return json + "}";
}

// The compile key of the config as given (a value the space does not know, like the sweep's
// injected test fault, is a kernel of its own) and the launch facts.
std::string launch_identity(const Config& config, const tuner::Shape& shape, int batch) {
  return compile_key(config, parameter_space()) + " " +
         launch_facts_text(from_config(config), typed_shape(shape, batch));
}

// The space's values of one parameter.
const std::vector<int>& space_values(const std::string& name) {
  for (const Parameter& parameter : parameter_space()) {
    if (parameter.name == name) return parameter.values;
  }
  static const std::vector<int> none;
  return none;
}

const std::vector<int>& block_h_values() { return space_values("block_h"); }

// The one-split grid's wave edges for every BLOCK_H of the space (deploy.hpp).
std::vector<int> wave_edges(const tuner::Shape& shape, int sm_count, int max_batch) {
  return wave_edge_batches(static_cast<int>(shape.integer("local_heads")), block_h_values(),
                           sm_count, max_batch);
}

// The cluster merge's edges for every BLOCK_H of the space (cluster_edges.hpp), at the occupancies
// its kernels can run at: up to the largest CTAS_PER_SM launch bound (ptxas holds registers to
// it; without a bound for more CTAs, the 192-thread cluster kernels need more registers than 4
// CTAs per SM leave).
std::vector<int> cluster_edges(const tuner::Shape& shape,
                               const std::vector<ClusterCapacity>& by_occupancy, int max_batch) {
  const std::vector<int>& bounds = space_values("ctas_per_sm");
  const std::size_t most =
      bounds.empty() ? 0
                     : static_cast<std::size_t>(*std::max_element(bounds.begin(), bounds.end()));
  const std::vector<ClusterCapacity> reachable(
      by_occupancy.begin(),
      by_occupancy.begin() + static_cast<std::ptrdiff_t>(std::min(by_occupancy.size(), most + 1)));
  return cluster_edge_batches(static_cast<int>(shape.integer("local_heads")), block_h_values(),
                              reachable, max_batch);
}

Family make_family() {
  Family f;
  f.name = kFamilyName;
  f.summary = "split-K sparse MLA decode attention (DeepSeek-V4-style, fp8_ds_mla or bf16 KV)";
  f.dims = {
      {"heads", "64", "attention heads of the model", {}},
      {"tp", "4", "attention tensor-parallel size", {}},
      {"topk", "2048", "selected tokens per query", {}},
      {"kv", "fp8_ds_mla", "KV cache format", {"fp8_ds_mla", "bf16"}},
      {"page_size", "64", "KV page size (tokens)", {}},
  };
  f.default_shapes = {
      {"DeepSeek-V4 64 heads / attention TP 4, fp8 KV",
       {{"heads", "64"}, {"tp", "4"}, {"topk", "2048"}, {"kv", "fp8_ds_mla"}, {"page_size", "64"}}},
      {"DeepSeek-V4 64 heads / attention TP 4, bf16 KV",
       {{"heads", "64"}, {"tp", "4"}, {"topk", "2048"}, {"kv", "bf16"}, {"page_size", "64"}}}};
  f.canonicalize = &canonicalize;
  f.describe_shape = &describe_shape;
  f.space = &parameter_space;
  f.default_config = &default_params;
  f.rules = &rules;
  f.value_rule = &value_rule;
  f.trims = &trims;
  f.arch_rules = &arch_rules;
  f.budget = &budget;
  f.program = &program;
  f.main_kernel = &main_kernel;
  f.frozen_program = &frozen_program;
  f.frozen_launches = &frozen_launches;
  f.source_hash = &source_hash;
  f.open_device = &open_device;
  f.tolerance = "||out - ref|| / ||ref|| < 1e-2, lse |d| / max(|ref|, 1) < 1e-3";
  // Decode runs inside CUDA graphs captured at every one of the serving stack's sizes; eager
  // batches take the bucket rule, which must cross neither a wave edge nor a cluster edge (on the
  // H200 the cluster edges cut the worst bucket regret from 15.4 % to 8.2 %: BENCHMARKS.md
  // section 9). Below 8 every batch is tuned: one row more or less moves the split count by up to
  // 2x there, and the bucket rule gave batch 3 batch 4's winner (BLOCK_T 32), 3.2 % slower than
  // batch 3's own in two calls of the eleventh session.
  f.default_batches = "1-8,cudagraph,waves,clusters";
  f.wave_edge_batches = &wave_edges;
  f.cluster_edge_batches = &cluster_edges;
  f.launch_identity = &launch_identity;
  f.default_max_batch = 512;
  f.export_name = &export_name;
  f.export_entry = &export_entry;
  return f;
}

}  // namespace

Shape typed_shape(const tuner::Shape& shape, int batch) {
  Shape typed;
  typed.n_heads = static_cast<int>(shape.integer("local_heads"));
  typed.attn_tp = 1;
  typed.topk = static_cast<int>(shape.integer("topk"));
  typed.kv_format = parse_kv_format(shape.text("kv_format"));
  typed.page_size = static_cast<int>(shape.integer("page_size"));
  typed.batch = batch;
  return typed;
}

tuner::Shape canonical_shape(const Shape& shape) {
  tuner::Shape canonical;
  canonical.dims = {{"kv_format", std::string(to_string(shape.kv_format))},
                    {"local_heads", std::to_string(shape.n_local_heads())},
                    {"page_size", std::to_string(shape.page_size)},
                    {"topk", std::to_string(shape.topk)}};
  return canonical;
}

const Family& family() {
  static const Family value = make_family();
  return value;
}

}  // namespace tuner::smla_family
