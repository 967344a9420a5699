// `tuner export --format vllm-json`: the winners as the tuned-config files vLLM and SGLang ship
// for their kernels: one JSON object per (family, shape, device, budget arch), keyed by batch size
// as a string, each value the config with upper-case parameter names:
//   {"1": {"BLOCK_H": 16, "BLOCK_T": 32, ...}, "8": {...}}
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "db/sqlite/sqlite.hpp"
#include "db/tunedb/params.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/db_open.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/error.hpp"
#include "tuner/report.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

// Files in the order the winners query reads them: the shape, then the device, then the budget
// arch (report::SeriesKey's own order puts the arch before the device).
struct DeviceBeforeArch {
  static auto tie(const report::SeriesKey& key) {
    return std::tie(key.family, key.n_heads, key.attn_tp, key.topk, key.kv_format, key.page_size,
                    key.device_name, key.budget_arch);
  }
  bool operator()(const report::SeriesKey& a, const report::SeriesKey& b) const {
    return tie(a) < tie(b);
  }
};

// batch -> canonical params_json
using Group = std::map<int, std::string>;
using Groups = std::map<report::SeriesKey, Group, DeviceBeforeArch>;

// Characters a file name keeps as they are; anything else (spaces, slashes) becomes '_'.
std::string file_safe(const std::string& text) {
  std::string safe = text;
  for (char& c : safe) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
    if (!keep) c = '_';
  }
  return safe;
}

// sparse_mla_decode,heads=64,tp=4,topk=2048,kv=fp8_ds_mla,device=NVIDIA_H200,arch=sm_120.json;
// ",page=N" follows kv when the page size is not the usual 64.
std::string file_name(const report::SeriesKey& key) {
  std::string name = file_safe(key.family) + ",heads=" + std::to_string(key.n_heads) +
                     ",tp=" + std::to_string(key.attn_tp) + ",topk=" + std::to_string(key.topk) +
                     ",kv=" + file_safe(key.kv_format);
  if (key.page_size != 64) name += ",page=" + std::to_string(key.page_size);
  return name + ",device=" + file_safe(key.device_name) + ",arch=" + file_safe(key.budget_arch) +
         ".json";
}

Groups read_groups(const std::string& path, bool frozen) {
  const db::Connection connection = db::Connection::open(
      path, frozen ? db::OpenMode::read_only_immutable : db::OpenMode::read_only);
  db::Statement rows = connection.prepare(
      "SELECT family, n_heads, attn_tp, topk, kv_format, page_size, device_name, budget_arch, "
      "batch, params_json FROM winners ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9");
  Groups groups;
  while (rows.step()) {
    const report::SeriesKey key{rows.column_text(0),
                                static_cast<int>(rows.column_int64(1)),
                                static_cast<int>(rows.column_int64(2)),
                                static_cast<int>(rows.column_int64(3)),
                                rows.column_text(4),
                                static_cast<int>(rows.column_int64(5)),
                                /*budget_arch=*/rows.column_text(7),
                                /*device_name=*/rows.column_text(6)};
    groups[key][static_cast<int>(rows.column_int64(8))] = rows.column_text(9);
  }
  return groups;
}

// Batches in numeric order (as vLLM writes them), parameter names upper-case.
nlohmann::ordered_json vllm_table(const Group& group) {
  nlohmann::ordered_json table = nlohmann::ordered_json::object();
  for (const auto& [batch, params_json] : group) {
    const auto params = tunedb::parse_params_json(params_json);
    if (!params) {
      throw std::runtime_error("winner for batch " + std::to_string(batch) +
                               " has malformed params_json '" + params_json + "'");
    }
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    for (const tunedb::NamedValue& param : *params) {
      std::string name = param.name;
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      config[name] = param.value;
    }
    table[std::to_string(batch)] = config;
  }
  return table;
}

}  // namespace

int run_export(const Args& args) {
  std::string db_path;
  std::string format;
  std::string out_dir;
  po::options_description options("export options");
  options.add_options()("db", po::value(&db_path)->required(),
                        "tuning DB: a store or a frozen file")(
      "format", po::value(&format)->required(), "vllm-json")(
      "out", po::value(&out_dir),
      "directory for one file per (family, shape, device, budget arch); created when missing. "
      "Without it: one JSON object on stdout mapping each file name to its content");
  if (!parse_or_help("export", "--db FILE --format vllm-json [--out DIR]", options, args)) {
    return 0;
  }
  if (format != "vllm-json") {
    throw InputError("--format '" + format + "' is not known: use vllm-json");
  }
  const tunedb::TuningDb db = open_tuning_db(db_path);  // validates schema and checksum
  const Groups groups = read_groups(db_path, db.info().frozen);
  if (groups.empty()) {
    throw InputError("--db " + db_path + " holds no winners to export: run tuner sweep first");
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  for (const auto& [key, group] : groups) all[file_name(key)] = vllm_table(group);
  if (out_dir.empty()) {
    std::cout << all.dump(1) << "\n";
    return 0;
  }
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error || !std::filesystem::is_directory(out_dir)) {
    throw InputError("--out '" + out_dir + "' cannot be used as a directory (" + error.message() +
                     "): pass a writable directory");
  }
  for (const auto& [name, table] : all.items()) {
    const std::filesystem::path path = std::filesystem::path(out_dir) / name;
    std::ofstream file(path);
    file << table.dump(4) << "\n";
    file.close();
    if (!file) throw std::runtime_error("cannot write " + path.string());
    std::printf("wrote %s (%zu batch sizes)\n", path.c_str(), table.size());
  }
  return 0;
}

}  // namespace tuner::cli
