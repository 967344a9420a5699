// NVRTC runs on any machine: compile real kernels for sm_90 and sm_120 and read ptxas's report.
#include <cuda.h>
#include <nvrtc.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/nvrtc.hpp"
#include "db/tunedb/cubin_elf.hpp"

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const tuner::SourceFile kMultiplyHeader{
    "common/multiply.h",
    "#pragma once\n"
    "template <typename T> __device__ T multiply(T a, T b) { return a * b; }\n"};

// kBlock floats of static shared memory and one __syncthreads: both show in ptxas's report.
const char* const kReverseScaleSource = R"(
#include "common/multiply.h"
template <int kBlock, typename T>
__global__ void reverse_scale(T* data, T factor, int n) {
  __shared__ T staged[kBlock];
  const int i = blockIdx.x * kBlock + threadIdx.x;
  staged[threadIdx.x] = i < n ? data[i] : T(0);
  __syncthreads();
  if (i < n) data[i] = multiply(staged[kBlock - 1 - threadIdx.x], factor);
}
)";

tuner::CompileRequest reverse_scale_request(int arch_sm) {
  tuner::CompileRequest request;
  request.source_name = "reverse_scale.cu";
  request.source_text = kReverseScaleSource;
  request.headers = {kMultiplyHeader};
  request.name_expressions = {"reverse_scale<128, float>", "reverse_scale<256, float>"};
  request.arch_sm = arch_sm;
  request.context = "reverse_scale sm_" + std::to_string(arch_sm);
  return request;
}

// 64 live floats under a 32-register cap: ptxas has to spill.
const char* const kSpillSource = R"(
__global__ void spill(float* out, const float* in) {
  float acc[64];
#pragma unroll
  for (int k = 0; k < 64; ++k) acc[k] = in[threadIdx.x * 64 + k];
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int k = 0; k < 64; ++k) acc[k] = acc[k] * acc[(k * 7 + r) % 64] + 1.0f;
#pragma unroll
  for (int k = 0; k < 64; ++k) out[threadIdx.x * 64 + k] = acc[k];
}
)";

}  // namespace

TEST_CASE("compile resolves name expressions and reports each kernel's resources") {
  for (const int arch_sm : {90, 120}) {
    CAPTURE(arch_sm);
    const tuner::CompileResult result = tuner::compile(reverse_scale_request(arch_sm));

    REQUIRE(result.cubin.size() > 4);
    CHECK(std::string(result.cubin.begin(), result.cubin.begin() + 4) ==
          "\x7f"
          "ELF");
    CHECK(result.compile_ms > 0.0);
    CHECK(contains(result.log, "for 'sm_" + std::to_string(arch_sm) + "'"));

    REQUIRE(result.lowered_names.size() == 2);
    const std::string small = result.lowered_names.at("reverse_scale<128, float>");
    const std::string large = result.lowered_names.at("reverse_scale<256, float>");
    CHECK(contains(small, "reverse_scale"));
    CHECK(contains(small, "Li128E"));
    CHECK(contains(large, "Li256E"));

    REQUIRE(result.ptxas.count(small) == 1);
    REQUIRE(result.ptxas.count(large) == 1);
    const tuner::PtxasReport& report = result.ptxas.at(small);
    CHECK(report.registers > 0);
    CHECK(report.static_smem_bytes == 128 * 4);
    CHECK(result.ptxas.at(large).static_smem_bytes == 256 * 4);
    CHECK(report.barriers == 1);
    CHECK(report.spill_bytes() == 0);
    // The parsed figures are the ones the log states.
    CHECK(contains(result.log, "Used " + std::to_string(report.registers) +
                                   " registers, used 1 "
                                   "barriers, 512 bytes smem"));
  }
}

// tunedb reads a cubin's SM from its ELF header; NVRTC's own output is the independent check of
// that reading (tunedb's stand-in images share its code and prove nothing about real cubins).
TEST_CASE("tunedb reads the SM of real NVRTC cubins and refuses a mismatch") {
  for (const int arch_sm : {80, 90, 100, 120}) {
    CAPTURE(arch_sm);
    const tuner::CompileResult result = tuner::compile(reverse_scale_request(arch_sm));
    const std::string arch = "sm_" + std::to_string(arch_sm);
    CHECK(tunedb::cubin_arch_problem(result.cubin.data(), result.cubin.size(), arch).empty());
    const std::string other = arch_sm == 90 ? "sm_120" : "sm_90";
    CHECK(tunedb::cubin_arch_problem(result.cubin.data(), result.cubin.size(), other) ==
          "is an ELF image for " + arch + ", not " + other);
  }
}

TEST_CASE("compile reports spills when registers are capped") {
  tuner::CompileRequest request;
  request.source_name = "spill.cu";
  request.source_text = kSpillSource;
  request.arch_sm = 90;
  request.extra_options = {"--maxrregcount=32"};
  request.context = "spill sm_90";
  const tuner::CompileResult result = tuner::compile(request);
  REQUIRE(result.ptxas.size() == 1);
  const auto& [name, report] = *result.ptxas.begin();
  CHECK(name == "_Z5spillPfPKf");
  CHECK(report.registers <= 32);
  CHECK(report.registers > 0);
  CHECK(report.spill_store_bytes > 0);
  CHECK(report.spill_load_bytes > 0);
  CHECK(report.stack_frame_bytes > 0);
  CHECK(contains(result.log, std::to_string(report.stack_frame_bytes) + " bytes stack frame, " +
                                 std::to_string(report.spill_store_bytes) +
                                 " bytes spill stores, " + std::to_string(report.spill_load_bytes) +
                                 " bytes spill loads"));
}

TEST_CASE("a syntax error throws NvrtcError carrying NVRTC's log and the context") {
  tuner::CompileRequest request;
  request.source_name = "broken.cu";
  request.source_text = "__global__ void broken(float* p) {\n  p[0] = 1.0f\n}\n";
  request.arch_sm = 90;
  request.context = "broken config sm_90";
  try {
    tuner::compile(request);
    FAIL("compile accepted a syntax error");
  } catch (const tuner::NvrtcError& error) {
    CHECK(error.call() == "nvrtcCompileProgram");
    CHECK(error.code() == NVRTC_ERROR_COMPILATION);
    CHECK(contains(error.log(), "broken.cu(3): error"));
    CHECK(contains(error.what(),
                   "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION (broken config sm_90)\n"));
    CHECK(contains(error.what(), error.log()));
  }
}

TEST_CASE("headers are found only among the request's in-memory headers") {
  tuner::CompileRequest request = reverse_scale_request(90);
  request.headers.clear();
  try {
    tuner::compile(request);
    FAIL("compile found a header that was not given");
  } catch (const tuner::NvrtcError& error) {
    CHECK(error.code() == NVRTC_ERROR_COMPILATION);
    CHECK(contains(error.log(), "common/multiply.h"));
  }
}

TEST_CASE("a bad option throws NvrtcError naming the option") {
  tuner::CompileRequest request = reverse_scale_request(90);
  request.extra_options = {"--no-such-option"};
  try {
    tuner::compile(request);
    FAIL("compile accepted an unknown option");
  } catch (const tuner::NvrtcError& error) {
    CHECK(error.code() == NVRTC_ERROR_INVALID_OPTION);
    CHECK(contains(error.log(), "--no-such-option"));
  }
}

TEST_CASE("an arch NVRTC does not support is refused") {
  CHECK_THROWS_AS(tuner::compile(reverse_scale_request(85)), tuner::NvrtcError);
}

TEST_CASE("extra options come after the defaults, so an arch-specific target can replace sm_XX") {
  tuner::CompileRequest request = reverse_scale_request(90);
  request.extra_options = {"--gpu-architecture=sm_90a"};
  const tuner::CompileResult result = tuner::compile(request);
  CHECK(contains(result.log, "for 'sm_90a'"));
  CHECK_FALSE(contains(result.log, "for 'sm_90'"));
}

TEST_CASE("default options target a real arch with ptxas -v") {
  const std::vector<std::string> options = tuner::default_nvrtc_options(120);
  const auto has = [&](const std::string& option) {
    return std::find(options.begin(), options.end(), option) != options.end();
  };
  CHECK(has("--gpu-architecture=sm_120"));
  CHECK(has("--ptxas-options=-v"));
  CHECK(has("-std=c++17"));
  CHECK(has("-default-device"));
  CHECK_FALSE(has("-lineinfo"));
  CHECK_FALSE(has("--use_fast_math"));
}

TEST_CASE("parse_ptxas_report reads the CUDA 13 layout and skips non-entry functions") {
  const std::string log =
      "ptxas info    : 4 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z3fooILi128EEvPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z3fooILi128EEvPf\n"
      "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 1 barriers, 512 bytes smem\n"
      "ptxas info    : Compile time = 9.378 ms\n"
      "ptxas info    : Compiling entry function 'plain' for 'sm_90'\n"
      "ptxas info    : Function properties for plain\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 1.014 ms\n"
      "ptxas info    : Function properties for _Z6calleePfi\n"
      "ptxas         .     256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  const auto reports = tuner::parse_ptxas_report(log);
  REQUIRE(reports.size() == 2);
  const tuner::PtxasReport& foo = reports.at("_Z3fooILi128EEvPf");
  CHECK(foo.registers == 10);
  CHECK(foo.barriers == 1);
  CHECK(foo.static_smem_bytes == 512);
  CHECK(foo.stack_frame_bytes == 16);
  CHECK(foo.spill_store_bytes == 8);
  CHECK(foo.spill_load_bytes == 4);
  CHECK(foo.spill_bytes() == 12);
  const tuner::PtxasReport& plain = reports.at("plain");
  CHECK(plain.registers == 8);
  CHECK(plain.barriers == 0);
  CHECK(plain.static_smem_bytes == 0);
  CHECK(plain.stack_frame_bytes == 0);
  CHECK(reports.count("_Z6calleePfi") == 0);
}

TEST_CASE("parse_ptxas_report reads older layouts: indented properties, cmem, no barriers") {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z3fooPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, 360 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z3barPf' for 'sm_80'\n"
      "ptxas info    : Function properties for _Z3barPf\n"
      "    40 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 1024 bytes smem, 360 bytes cmem[0], "
      "4 bytes cmem[2]\n";
  const auto reports = tuner::parse_ptxas_report(log);
  REQUIRE(reports.size() == 2);
  const tuner::PtxasReport& foo = reports.at("_Z3fooPf");
  CHECK(foo.registers == 12);
  CHECK(foo.barriers == 0);
  CHECK(foo.static_smem_bytes == 0);
  const tuner::PtxasReport& bar = reports.at("_Z3barPf");
  CHECK(bar.registers == 255);
  CHECK(bar.barriers == 1);
  CHECK(bar.static_smem_bytes == 1024);
  CHECK(bar.stack_frame_bytes == 40);
  CHECK(bar.spill_store_bytes == 40);
  CHECK(bar.spill_load_bytes == 36);
}

TEST_CASE("parse_ptxas_report finds nothing in a log without ptxas -v output") {
  CHECK(tuner::parse_ptxas_report("").empty());
  CHECK(tuner::parse_ptxas_report("x.cu(3): warning #177-D: variable \"k\" was declared but never "
                                  "referenced\n")
            .empty());
}

TEST_CASE("NvrtcError appends the log to what()") {
  const tuner::NvrtcError error("nvrtcCompileProgram", NVRTC_ERROR_COMPILATION,
                                "NVRTC_ERROR_COMPILATION", "split sm_90", "x.cu(1): error: boom");
  CHECK(std::string(error.what()) ==
        "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION (split sm_90)\nx.cu(1): error: boom");
  CHECK(error.log() == "x.cu(1): error: boom");
  CHECK(error.code() == NVRTC_ERROR_COMPILATION);
}

TEST_CASE("NVRTC reports its version and supports the target archs") {
  const std::string expected =
      std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10);
  CHECK(tuner::nvrtc_version() == expected);
  const std::vector<int> archs = tuner::nvrtc_supported_archs();
  CHECK(std::find(archs.begin(), archs.end(), 90) != archs.end());
  CHECK(std::find(archs.begin(), archs.end(), 120) != archs.end());
  CHECK(std::is_sorted(archs.begin(), archs.end()));
}
