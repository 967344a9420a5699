#pragma once
// NVRTC: compile CUDA C++ source (with in-memory headers) to a cubin for one arch, keep the log,
// resolve template name expressions, and parse ptxas's -v resource report.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tuner {

struct SourceFile {
  std::string name;  // include name, e.g. "<family>/layout.h"
  std::string text;
};

struct CompileRequest {
  std::string source_name;  // e.g. "<family>/program.cu"
  std::string source_text;
  std::vector<SourceFile> headers;  // every header the source may #include, by include name
  std::vector<std::string> name_expressions;  // template instantiations, e.g. "kernel<16, 4>"
  int arch_sm = 120;                          // 90 -> --gpu-architecture=sm_90 (a cubin, not PTX)
  std::vector<std::string> extra_options;     // added after the defaults
  std::string context;                        // for error messages: config, arch
};

// One kernel's figures from ptxas -v ("Used N registers, ... N bytes smem", "N bytes stack frame,
// N bytes spill stores, N bytes spill loads").
struct PtxasReport {
  int registers = 0;
  int stack_frame_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int static_smem_bytes = 0;
  int barriers = 0;
  int spill_bytes() const { return spill_store_bytes + spill_load_bytes; }
};

struct CompileResult {
  std::vector<char> cubin;
  std::string log;                                   // NVRTC's full program log (ptxas -v included)
  std::map<std::string, std::string> lowered_names;  // name expression -> mangled name
  std::map<std::string, PtxasReport> ptxas;          // mangled name -> its report
  double compile_ms = 0.0;
};

// The options every compile gets: -std=c++17, --gpu-architecture=sm_XX, -default-device,
// --ptxas-options=-v, -lineinfo off, -O3 (ptxas), --use_fast_math off.
std::vector<std::string> default_nvrtc_options(int arch_sm);

// Compiles; throws NvrtcError carrying the log when the source does not compile.
CompileResult compile(const CompileRequest& request);

// Parses ptxas -v lines from an NVRTC log, keyed by mangled function name.
std::map<std::string, PtxasReport> parse_ptxas_report(const std::string& log);

// NVRTC's version as "13.0", and the archs it supports (e.g. {75, 80, ..., 120, 121}).
std::string nvrtc_version();
std::vector<int> nvrtc_supported_archs();

}  // namespace tuner
