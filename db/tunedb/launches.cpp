#include "db/tunedb/launches.hpp"

#include <algorithm>
#include <set>

#include "db/tunedb/params.hpp"

namespace tunedb::detail {

using tuner::db::Connection;
using tuner::db::Statement;

namespace {

// Why a provider's launch record cannot be frozen, or "" when it can.
std::string record_problem(const LaunchRecord& record, const CubinImage& image) {
  if (record.role.empty()) return "a launch record without a role";
  const std::string what = "launch record '" + record.role + "'";
  if (std::find(image.kernel_names.begin(), image.kernel_names.end(), record.kernel_name) ==
      image.kernel_names.end()) {
    return what + " names kernel '" + record.kernel_name + "', which the image does not hold";
  }
  if (record.block_threads <= 0) return what + " has no block size";
  if (record.dynamic_smem < 0 || record.max_dynamic_smem < record.dynamic_smem) {
    return what + " has dynamic smem " + std::to_string(record.dynamic_smem) +
           " above its max-dynamic-smem attribute " + std::to_string(record.max_dynamic_smem);
  }
  if (!canonical_params_json(record.launch_params_json)) {
    return what + " has launch params '" + record.launch_params_json +
           "', not a flat JSON object of integers";
  }
  return "";
}

}  // namespace

void insert_launches(const Connection& out, const CubinRequest& key, const CubinImage& image,
                     const std::string& store) {
  Statement insert = out.prepare(
      "INSERT INTO launches (family, arch, params_json, source_hash, role, kernel_name, "
      "block_threads, dynamic_smem, max_dynamic_smem, launch_params) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  std::set<std::string> roles;
  for (const LaunchRecord& record : image.launches) {
    std::string problem = record_problem(record, image);
    if (problem.empty() && !roles.insert(record.role).second) {
      problem = "two launch records for role '" + record.role + "'";
    }
    if (!problem.empty()) {
      throw tuner::db::DbError("the cubin provider's image for " + key.family + " " +
                                   key.params_json + " for " + key.arch + ": " + problem +
                                   " (nothing was written); fix the family's frozen_launches",
                               store);
    }
    insert.bind(1, key.family).bind(2, key.arch).bind(3, key.params_json).bind(4, key.source_hash);
    insert.bind(5, record.role).bind(6, record.kernel_name);
    insert.bind(7, static_cast<std::int64_t>(record.block_threads));
    insert.bind(8, static_cast<std::int64_t>(record.dynamic_smem));
    insert.bind(9, static_cast<std::int64_t>(record.max_dynamic_smem));
    insert.bind(10, *canonical_params_json(record.launch_params_json));
    insert.run();
    insert.reset();
  }
}

void read_launches(const Connection& connection, std::string_view source_hash, Cubin& cubin,
                   const std::function<std::string_view(std::string_view)>& intern,
                   const std::string& path) {
  Statement rows = connection.prepare(
      "SELECT role, kernel_name, block_threads, dynamic_smem, max_dynamic_smem, launch_params "
      "FROM launches WHERE family = ?1 AND arch = ?2 AND params_json = ?3 AND source_hash = ?4 "
      "ORDER BY role");
  rows.bind(1, cubin.family).bind(2, cubin.arch).bind(3, cubin.params_json).bind(4, source_hash);
  while (rows.step()) {
    KernelLaunch& launch = cubin.launches.emplace_back();
    launch.role = intern(rows.column_text(0));
    launch.kernel_name = intern(rows.column_text(1));
    launch.block_threads = static_cast<int>(rows.column_int64(2));
    launch.dynamic_smem = static_cast<int>(rows.column_int64(3));
    launch.max_dynamic_smem = static_cast<int>(rows.column_int64(4));
    const std::optional<std::vector<NamedValue>> params = parse_params_json(rows.column_text(5));
    if (!params) {
      throw tuner::db::DbError("frozen tuning DB " + path + ": the launch row '" +
                                   std::string(launch.role) + "' of " + std::string(cubin.family) +
                                   " " + std::string(cubin.params_json) +
                                   " has malformed launch params; freeze it again from the store",
                               path);
    }
    for (const NamedValue& param : *params) {
      launch.launch_params.push_back({intern(param.name), param.value});
    }
  }
}

}  // namespace tunedb::detail
