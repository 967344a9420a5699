// `tuner export --format vllm-json`: the winners as the tuned-config files vLLM and SGLang ship
// for their kernels: one JSON object per (family, shape, device[, budget arch]), keyed by batch
// size as a string; the family names the file and writes each entry (Family::export_name,
// export_entry), e.g. fp8_gemm writes vLLM's block-fp8 files
//   N=4096,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json
//   {"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, ...}, "8": {...}}
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/shape.hpp"
#include "db/sqlite/sqlite.hpp"
#include "kernels/registry.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/db_open.hpp"
#include "tuner/cli/problem_options.hpp"
#include "tuner/report.hpp"
#include "tuner/shape_text.hpp"

namespace po = boost::program_options;

namespace tuner::cli {

namespace {

// (family, shape, budget arch, device) -> batch -> canonical params_json
using Group = std::map<int, std::string>;
using Groups = std::map<report::SeriesKey, Group>;

// Characters a file name keeps as they are; anything else (spaces, slashes) becomes '_'.
std::string file_safe(const std::string& text) {
  std::string safe = text;
  for (char& c : safe) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ||
                      c == '.' || c == ',' || c == '=' || c == '[' || c == ']';
    if (!keep) c = '_';
  }
  return safe;
}

Groups read_groups(const std::string& path, bool frozen) {
  const db::Connection connection = db::Connection::open(
      path, frozen ? db::OpenMode::read_only_immutable : db::OpenMode::read_only);
  db::Statement rows = connection.prepare(
      "SELECT family, shape, budget_arch, device_name, batch, params_json FROM winners "
      "ORDER BY 1, 2, 3, 4, 5");
  Groups groups;
  while (rows.step()) {
    const report::SeriesKey key{rows.column_text(0), rows.column_text(1), rows.column_text(2),
                                rows.column_text(3)};
    groups[key][static_cast<int>(rows.column_int64(4))] = rows.column_text(5);
  }
  return groups;
}

// Batches in numeric order (as vLLM writes them), each entry in the family's export format.
nlohmann::ordered_json vllm_table(const Family& family, const Group& group) {
  nlohmann::ordered_json table = nlohmann::ordered_json::object();
  for (const auto& [batch, params_json] : group) {
    table[std::to_string(batch)] =
        nlohmann::ordered_json::parse(family.export_entry(config_from_json(params_json)));
  }
  return table;
}

// The family's file name (the serving stack's own), under a folder per budget arch when the DB
// holds winners for more than one (the serving stack's names carry no arch).
std::string file_name(const Family& family, const report::SeriesKey& key, bool several_arches) {
  const std::string name =
      file_safe(family.export_name(parse_canonical_shape(key.shape), file_safe(key.device_name)));
  return several_arches ? key.budget_arch + "/" + name : name;
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
  std::set<std::string> arches;
  for (const auto& entry : groups) arches.insert(entry.first.budget_arch);
  nlohmann::ordered_json all = nlohmann::ordered_json::object();
  for (const auto& [key, group] : groups) {
    const Family& family = family_by_name(key.family);
    all[file_name(family, key, arches.size() > 1)] = vllm_table(family, group);
  }
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
    std::filesystem::create_directories(path.parent_path());
    std::ofstream file(path);
    file << table.dump(4) << "\n";
    file.close();
    if (!file) throw std::runtime_error("cannot write " + path.string());
    std::printf("wrote %s (%zu batch sizes)\n", path.c_str(), table.size());
  }
  return 0;
}

}  // namespace tuner::cli
