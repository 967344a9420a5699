// libtunedb_cuda's family registry (deploy/families.cpp) and the argument records the families
// declare, without a GPU: every served family is a tuner family whose frozen launch facts its
// serving side binds; each record's fields lie inside it, apart and named once; the C API hands
// out the same description, lists the families, and refuses an unknown family or a record of
// the wrong size, naming what is wrong.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "deploy/launcher.hpp"
#include "deploy/tunedb_cuda.h"
#include "kernels/registry.hpp"
#include "tests/support/recorded_launches.hpp"

using tuner::ArgField;
using tuner::ArgKind;
using tuner::DeployFamily;
using tuner::test::fake_function;

namespace {

std::size_t kind_size(ArgKind kind) {
  return kind == ArgKind::device_pointer || kind == ArgKind::u64 ? 8 : 4;
}

}  // namespace

TEST_CASE("every served family is a tuner family whose frozen launch facts its launcher binds") {
  REQUIRE_FALSE(tunedb::cuda::deploy_families().empty());
  for (const DeployFamily* deploy : tunedb::cuda::deploy_families()) {
    CAPTURE(deploy->name);
    const tuner::Family& family = tuner::family_by_name(deploy->name);
    REQUIRE(static_cast<bool>(family.frozen_launches));
    const std::vector<tuner::FrozenLaunch> launches =
        family.frozen_launches(family.default_config(), {});
    REQUIRE_FALSE(launches.empty());
    std::vector<tuner::BoundKernel> kernels;
    for (std::size_t i = 0; i < launches.size(); ++i) {
      kernels.push_back({fake_function(0x100 + i),
                         static_cast<unsigned>(launches[i].block_threads),
                         static_cast<unsigned>(launches[i].dynamic_smem),
                         {}});
    }
    std::set<std::string> asked;
    const tuner::Config values = tuner::config_from_json(launches.front().launch_params_json);
    const tuner::BoundConfig bound = deploy->bind(
        [&](std::string_view role) -> const tuner::BoundKernel* {
          asked.insert(std::string(role));
          for (std::size_t i = 0; i < launches.size(); ++i) {
            if (launches[i].role == role) return &kernels[i];
          }
          return nullptr;
        },
        [&](std::string_view name) -> std::optional<std::int64_t> {
          for (const auto& [key, value] : values.values) {
            if (key == name) return value;
          }
          return std::nullopt;
        });
    // Every kernel the tuner freezes is one the launcher asks for, and lands in the bound config.
    for (std::size_t i = 0; i < launches.size(); ++i) {
      CHECK(asked.contains(launches[i].role));
      bool placed = false;
      for (const tuner::BoundKernel& slot : bound.kernels) {
        placed = placed || (slot.function == kernels[i].function &&
                            slot.block_threads == kernels[i].block_threads);
      }
      CHECK_MESSAGE(placed, launches[i].role);
    }
  }
}

TEST_CASE("argument records: fields inside the record, apart, named once") {
  for (const DeployFamily* deploy : tunedb::cuda::deploy_families()) {
    CAPTURE(deploy->name);
    REQUIRE_FALSE(deploy->fields.empty());
    std::set<std::string> names;
    std::vector<bool> used(deploy->args_size, false);
    for (const ArgField& field : deploy->fields) {
      CAPTURE(field.name);
      CHECK(names.insert(field.name).second);
      REQUIRE(field.offset + kind_size(field.kind) <= deploy->args_size);
      CHECK(field.offset % kind_size(field.kind) == 0);
      for (std::size_t byte = field.offset; byte < field.offset + kind_size(field.kind); ++byte) {
        CHECK_FALSE(used[byte]);
        used[byte] = true;
      }
    }
  }
}

TEST_CASE("the C API lists the families and describes each record as the family declares it") {
  std::size_t index = 0;
  for (const DeployFamily* deploy : tunedb::cuda::deploy_families()) {
    REQUIRE(tunedb_cuda_family(index) != nullptr);
    CHECK(std::string(tunedb_cuda_family(index)) == deploy->name);
    ++index;
    std::size_t size = 0;
    std::size_t count = 0;
    const std::string name(deploy->name);
    REQUIRE(tunedb_cuda_args_layout(name.c_str(), &size, &count) == TUNEDB_CUDA_OK);
    CHECK(size == deploy->args_size);
    REQUIRE(count == deploy->fields.size());
    for (std::size_t i = 0; i < count; ++i) {
      tunedb_cuda_arg_field field{};
      REQUIRE(tunedb_cuda_args_field(name.c_str(), i, &field) == TUNEDB_CUDA_OK);
      CHECK(std::string(field.name) == deploy->fields[i].name);
      CHECK(field.kind == static_cast<int>(deploy->fields[i].kind));
      CHECK(field.offset == deploy->fields[i].offset);
    }
    tunedb_cuda_arg_field past{};
    CHECK(tunedb_cuda_args_field(name.c_str(), count, &past) == TUNEDB_CUDA_ERROR_INPUT);
    CHECK(std::string(tunedb_cuda_last_error()).find(std::to_string(count) + " fields") !=
          std::string::npos);
  }
  CHECK(tunedb_cuda_family(index) == nullptr);
}

TEST_CASE("an unknown family is refused naming the families there are") {
  std::size_t size = 0;
  CHECK(tunedb_cuda_args_layout("no_such_family", &size, nullptr) == TUNEDB_CUDA_ERROR_INPUT);
  const std::string message = tunedb_cuda_last_error();
  CHECK(message.find("'no_such_family'") != std::string::npos);
  for (const DeployFamily* deploy : tunedb::cuda::deploy_families()) {
    CHECK(message.find(std::string(deploy->name)) != std::string::npos);
  }
  CHECK(tunedb_cuda_check_args(nullptr, &size, sizeof size) == TUNEDB_CUDA_ERROR_INPUT);
}

TEST_CASE("a record of the wrong size is refused, naming both sizes, the right size passes") {
  for (const DeployFamily* deploy : tunedb::cuda::deploy_families()) {
    const std::string name(deploy->name);
    CAPTURE(name);
    const std::vector<unsigned char> record(deploy->args_size + 8, 0);
    REQUIRE(tunedb_cuda_check_args(name.c_str(), record.data(), deploy->args_size) ==
            TUNEDB_CUDA_OK);
    CHECK(std::string(tunedb_cuda_last_error()).empty());
    CHECK(tunedb_cuda_check_args(name.c_str(), record.data(), deploy->args_size + 8) ==
          TUNEDB_CUDA_ERROR_INPUT);
    const std::string message = tunedb_cuda_last_error();
    CHECK(message.find(name + "'s argument record is " + std::to_string(deploy->args_size) +
                       " bytes") != std::string::npos);
    CHECK(message.find("args_size of " + std::to_string(deploy->args_size + 8) + " bytes") !=
          std::string::npos);
    CHECK(tunedb_cuda_check_args(name.c_str(), nullptr, deploy->args_size) ==
          TUNEDB_CUDA_ERROR_INPUT);
    CHECK(std::string(tunedb_cuda_last_error()).find("NULL args") != std::string::npos);
  }
}
