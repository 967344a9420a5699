// The fp8 GEMM's deploy unit (kernels/fp8_gemm/deploy + serve), the code the serving launcher
// runs, without a GPU: the grid and reduce geometry against arithmetic done here, the parameter
// blocks, the workspace, the shape text, the frozen launch facts the tuner writes for it, and the
// launches and refusals (recorded through a LaunchKernelFn that stands in for cuLaunchKernel).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "kernels/fp8_gemm/deploy.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/fp8_gemm/serve.hpp"
#include "kernels/fp8_gemm/serve_args.h"
#include "tests/support/declared_record.hpp"
#include "tests/support/recorded_launches.hpp"

using namespace tuner;
using namespace tuner::fp8_gemm;

namespace {

using test::fake_function;
using test::recorded;
constexpr LaunchKernelFn record = &test::record_launch<fp8gemm::GemmParams, fp8gemm::ReduceParams>;

// The config bound as the launcher binds it: from the tuner's frozen launch facts.
BoundConfig bound_config(const KernelConfig& config, bool with_reduce = true) {
  const std::vector<FrozenLaunch> launches = family().frozen_launches(to_config(config), {});
  std::vector<BoundKernel> kernels;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    kernels.push_back({fake_function(0x100 * (i + 1)),
                       static_cast<unsigned>(launches[i].block_threads),
                       static_cast<unsigned>(launches[i].dynamic_smem),
                       {}});
  }
  const Config values = config_from_json(launches.front().launch_params_json);
  return deploy_family().bind(
      [&](std::string_view role) -> const BoundKernel* {
        for (std::size_t i = 0; i < launches.size(); ++i) {
          if (launches[i].role == role && (with_reduce || role != kReduceRole)) return &kernels[i];
        }
        return nullptr;
      },
      [&](std::string_view name) -> std::optional<std::int64_t> {
        for (const auto& [key, value] : values.values) {
          if (key == name) return value;
        }
        return std::nullopt;
      });
}

KernelConfig config_with(int block_m, int block_n, int split_k) {
  KernelConfig config;
  config.block_m = block_m;
  config.block_n = block_n;
  config.split_k = split_k;
  return config;
}

constexpr const char* kShape = "block=128,k=7168,n=4096";

tunedb_fp8_gemm_args good_args() {
  return {0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x100000, 1ull << 32};
}

}  // namespace

TEST_CASE("fp8_gemm deploy: grids, reduce blocks and workspace against arithmetic done here") {
  for (const int m : {1, 5, 16, 17, 100, 512}) {
    for (const int block_m : {16, 32, 64}) {
      for (const int block_n : {32, 64, 128}) {
        for (const int split_k : {1, 2, 8}) {
          const GemmDims dims{m, 4096, 7168};
          const Grid grid = gemm_grid(dims, {block_m, block_n, split_k});
          CHECK(grid.x == static_cast<unsigned>(4096 / block_n));
          CHECK(grid.y * block_m >= static_cast<unsigned>(m));
          CHECK((grid.y - 1) * block_m < static_cast<unsigned>(m));
          CHECK(grid.z == static_cast<unsigned>(split_k));
          CHECK(workspace_bytes(dims, split_k) ==
                (split_k == 1 ? 0u : std::size_t{4} * split_k * m * 4096));
        }
      }
    }
    const unsigned blocks = reduce_blocks({m, 4096, 7168});
    const long long pairs = 1LL * m * 4096 / 2;
    CHECK(blocks >= 1);
    CHECK(blocks <= 2048);
    // Enough threads for one pair each, unless capped (the loop strides then).
    CHECK((static_cast<long long>(blocks) * kReduceThreads >= pairs || blocks == 2048));
  }
}

TEST_CASE("fp8_gemm deploy: the kernel's rules, without allocating") {
  CHECK(launch_rule_violation({1, 4096, 7168}, {16, 64, 8}) == nullptr);
  CHECK(launch_rule_violation({1, 4096 + 128, 7168}, {16, 128, 1}) == nullptr);
  CHECK(launch_rule_violation({1, 4096 + 64, 7168}, {16, 128, 1}) != nullptr);
  // K 512: 4 scale groups, so SPLIT_K 8 cannot be split over them; the tuner's rule agrees.
  CHECK(launch_rule_violation({1, 4096, 512}, {16, 64, 8}) != nullptr);
  CHECK_FALSE(rules(config_with(16, 64, 8), GemmShape{4096, 512, 1}).empty());
  CHECK(launch_rule_violation({1, 4096, 512}, {16, 64, 4}) == nullptr);
}

TEST_CASE("fp8_gemm deploy: parameter blocks carry the buffers, dimensions and split") {
  const GemmBuffers buffers{0x10, 0x20, 0x30, 0x40, 0x50, 0x60};
  const fp8gemm::GemmParams p = pack_gemm(buffers, {7, 4096, 7168}, 4);
  CHECK(reinterpret_cast<std::uintptr_t>(p.a) == 0x10);
  CHECK(reinterpret_cast<std::uintptr_t>(p.a_scale) == 0x20);
  CHECK(reinterpret_cast<std::uintptr_t>(p.b) == 0x30);
  CHECK(reinterpret_cast<std::uintptr_t>(p.b_scale) == 0x40);
  CHECK(reinterpret_cast<std::uintptr_t>(p.c) == 0x50);
  CHECK(reinterpret_cast<std::uintptr_t>(p.partial) == 0x60);
  CHECK(p.m == 7);
  CHECK(p.n == 4096);
  CHECK(p.k == 7168);
  CHECK(p.split_k == 4);
  const fp8gemm::ReduceParams r = pack_reduce(buffers, {7, 4096, 7168}, 4);
  CHECK(reinterpret_cast<std::uintptr_t>(r.partial) == 0x60);
  CHECK(reinterpret_cast<std::uintptr_t>(r.c) == 0x50);
  CHECK(r.m == 7);
  CHECK(r.n == 4096);
  CHECK(r.split_k == 4);
}

TEST_CASE("fp8_gemm serve shape text: n and k multiples of 128, block 128") {
  const auto parsed = parse_serve_shape(kShape);
  REQUIRE(parsed.has_value());
  CHECK(parsed->n == 4096);
  CHECK(parsed->k == 7168);
  CHECK(parse_serve_shape("k=7168,n=4096").has_value());
  CHECK_FALSE(parse_serve_shape("block=64,k=7168,n=4096").has_value());
  CHECK_FALSE(parse_serve_shape("block=128,k=7100,n=4096").has_value());
  CHECK_FALSE(parse_serve_shape("block=128,n=4096").has_value());
  CHECK_FALSE(parse_serve_shape("block=128,k=7168,n=-128").has_value());
  CHECK_FALSE(parse_serve_shape("block=128,k,n=4096").has_value());
}

TEST_CASE("fp8_gemm frozen launch facts: the GEMM with its layout's smem, then the reduce") {
  const KernelConfig config = config_with(32, 128, 4);
  const std::vector<FrozenLaunch> launches = family().frozen_launches(to_config(config), {});
  REQUIRE(launches.size() == 2);
  const StaticBudget budget = static_budget(config);
  CHECK(launches[0].role == kGemmRole);
  CHECK(launches[0].name_expression == gemm_kernel_name(config));
  CHECK(launches[0].block_threads == config.num_warps * 32);
  CHECK(launches[0].dynamic_smem == budget.smem_bytes_per_block);
  CHECK(launches[0].max_dynamic_smem == budget.smem_bytes_per_block);
  CHECK(launches[1].role == kReduceRole);
  CHECK(launches[1].name_expression == reduce_kernel_name());
  CHECK(launches[1].block_threads == static_cast<int>(kReduceThreads));
  // Every name the launches use is one the frozen program compiles.
  const CompileRequest program = family().frozen_program(to_config(config), {}, 90);
  for (const FrozenLaunch& launch : launches) {
    CHECK(std::find(program.name_expressions.begin(), program.name_expressions.end(),
                    launch.name_expression) != program.name_expressions.end());
  }
}

TEST_CASE("fp8_gemm serve launch: the GEMM grid, then the reduce over the split partials") {
  recorded.clear();
  const KernelConfig config = config_with(16, 64, 4);
  const BoundConfig bound = bound_config(config);
  const auto args = good_args();
  const ServeResult result = deploy_family().launch(bound, kShape, 20, &args, nullptr, record);
  REQUIRE(result.status == ServeStatus::ok);
  REQUIRE(recorded.size() == 2);
  CHECK(recorded[0].function == fake_function(0x100));
  CHECK(recorded[0].grid[0] == 4096 / 64);
  CHECK(recorded[0].grid[1] == 2);  // 20 rows in 16-row tiles
  CHECK(recorded[0].grid[2] == 4);
  CHECK(recorded[0].block == static_cast<unsigned>(config.num_warps * 32));
  CHECK(recorded[0].smem == static_cast<unsigned>(static_budget(config).smem_bytes_per_block));
  fp8gemm::GemmParams p;
  std::memcpy(&p, recorded[0].params.data(), sizeof p);
  CHECK(p.m == 20);
  CHECK(p.split_k == 4);
  CHECK(reinterpret_cast<std::uintptr_t>(p.partial) == 0x100000);
  CHECK(recorded[1].function == fake_function(0x200));
  CHECK(recorded[1].grid[0] == reduce_blocks({20, 4096, 7168}));
  CHECK(recorded[1].block == kReduceThreads);
  std::size_t bytes = 0;
  REQUIRE(deploy_family().workspace_bytes(bound, kShape, 20, &bytes).status == ServeStatus::ok);
  CHECK(bytes == std::size_t{4} * 20 * 4096 * 4);
  // One split: the GEMM writes C itself, no workspace, no reduce.
  recorded.clear();
  auto no_workspace = good_args();
  no_workspace.workspace = 0;
  no_workspace.workspace_bytes = 0;
  REQUIRE(
      deploy_family()
          .launch(bound_config(config_with(16, 64, 1)), kShape, 20, &no_workspace, nullptr, record)
          .status == ServeStatus::ok);
  CHECK(recorded.size() == 1);
}

TEST_CASE("fp8_gemm serve launch refusals enqueue nothing and say why") {
  recorded.clear();
  const BoundConfig bound = bound_config(config_with(16, 128, 2));
  const auto refused = [&](const tunedb_fp8_gemm_args& args, const char* shape, int batch) {
    return deploy_family().launch(bound, shape, batch, &args, nullptr, record);
  };
  auto args = good_args();
  args.workspace_bytes = 1024;
  const ServeResult small = refused(args, kShape, 8);
  CHECK(small.status == ServeStatus::workspace_too_small);
  CHECK(std::string(small.what).find("workspace") != std::string::npos);
  args = good_args();
  args.b = 0;
  CHECK(refused(args, kShape, 8).status == ServeStatus::bad_arguments);
  args = good_args();
  args.a += 8;  // not 16-byte aligned
  CHECK(refused(args, kShape, 8).status == ServeStatus::bad_arguments);
  args = good_args();
  CHECK(refused(args, kShape, 0).status == ServeStatus::bad_batch);
  CHECK(refused(args, "block=128,k=7168", 8).status == ServeStatus::bad_shape);
  // K 128 is one scale group: the config's SPLIT_K 2 cannot split it.
  const ServeResult split = refused(args, "block=128,k=128,n=4096", 8);
  CHECK(split.status == ServeStatus::bad_shape);
  CHECK(std::string(split.what).find("SPLIT_K") != std::string::npos);
  const BoundConfig no_reduce = bound_config(config_with(16, 128, 2), false);
  CHECK(deploy_family().launch(no_reduce, kShape, 8, &args, nullptr, record).status ==
        ServeStatus::no_kernel);
  CHECK(recorded.empty());
}

TEST_CASE("fp8_gemm bind refuses a config without the values the geometry reads") {
  const BoundKernel kernel{fake_function(0x100), 128, 0, {}};
  CHECK_THROWS_WITH_AS(
      deploy_family().bind([&](std::string_view) { return &kernel; },
                           [](std::string_view name) -> std::optional<std::int64_t> {
                             if (name == "block_m") return 16;
                             return std::nullopt;
                           }),
      doctest::Contains("no positive block_n"), std::runtime_error);
}

TEST_CASE("fp8_gemm: a record built from the declared fields by name reads back as the struct") {
  const DeployFamily& family = deploy_family();
  REQUIRE(family.args_size == sizeof(tunedb_fp8_gemm_args));
  REQUIRE(family.fields.size() == 7);  // the struct's members, each checked below
  const std::vector<unsigned char> bytes = test::record_from_fields(family);
  tunedb_fp8_gemm_args args{};
  std::memcpy(&args, bytes.data(), sizeof args);
  CHECK(args.a == test::declared_address(family, "a"));
  CHECK(args.a_scale == test::declared_address(family, "a_scale"));
  CHECK(args.b == test::declared_address(family, "b"));
  CHECK(args.b_scale == test::declared_address(family, "b_scale"));
  CHECK(args.c == test::declared_address(family, "c"));
  CHECK(args.workspace == test::declared_address(family, "workspace"));
  CHECK(args.workspace_bytes == test::declared_address(family, "workspace_bytes"));
}
