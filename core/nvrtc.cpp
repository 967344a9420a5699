#include "core/nvrtc.hpp"

#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <regex>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace tuner {
namespace {

void check_nvrtc(nvrtcResult result, const char* call, const std::string& context,
                 std::string log = {}) {
  if (result == NVRTC_SUCCESS) {
    return;
  }
  throw NvrtcError(call, static_cast<int>(result), nvrtcGetErrorString(result), context,
                   std::move(log));
}

void destroy_program(nvrtcProgram* program) noexcept {
  if (*program == nullptr) {
    return;
  }
  const nvrtcResult result = nvrtcDestroyProgram(program);
  if (result != NVRTC_SUCCESS) {
    std::fprintf(stderr, "tuner: warning: nvrtcDestroyProgram failed: %s (ignored)\n",
                 nvrtcGetErrorString(result));
  }
}

// Owns one nvrtcProgram.
class Program {
 public:
  explicit Program(nvrtcProgram program) : program_(program) {}
  ~Program() { destroy_program(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  Program(Program&& other) noexcept : program_(std::exchange(other.program_, nullptr)) {}
  Program& operator=(Program&& other) noexcept {
    if (this != &other) {
      destroy_program(&program_);
      program_ = std::exchange(other.program_, nullptr);
    }
    return *this;
  }
  nvrtcProgram get() const { return program_; }
  explicit operator bool() const { return program_ != nullptr; }

 private:
  nvrtcProgram program_ = nullptr;
};

Program create_program(const CompileRequest& request) {
  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (const SourceFile& header : request.headers) {
    header_texts.push_back(header.text.c_str());
    header_names.push_back(header.name.c_str());
  }
  nvrtcProgram raw = nullptr;
  check_nvrtc(nvrtcCreateProgram(&raw, request.source_text.c_str(), request.source_name.c_str(),
                                 static_cast<int>(request.headers.size()), header_texts.data(),
                                 header_names.data()),
              "nvrtcCreateProgram", request.context);
  return Program(raw);
}

std::string program_log(const Program& program, const std::string& context) {
  std::size_t size = 0;
  check_nvrtc(nvrtcGetProgramLogSize(program.get(), &size), "nvrtcGetProgramLogSize", context);
  std::string log(size, '\0');
  check_nvrtc(nvrtcGetProgramLog(program.get(), log.data()), "nvrtcGetProgramLog", context);
  // The size counts the terminating NUL.
  while (!log.empty() && log.back() == '\0') {
    log.pop_back();
  }
  return log;
}

std::vector<char> program_cubin(const Program& program, const CompileRequest& request,
                                const std::string& log) {
  std::size_t size = 0;
  check_nvrtc(nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize", request.context, log);
  if (size == 0) {
    // NVRTC makes PTX only when the target is a virtual arch (compute_XX).
    throw NvrtcError("nvrtcGetCUBIN", NVRTC_ERROR_INVALID_OPTION, "no cubin produced",
                     request.context + "; compile for a real arch: --gpu-architecture=sm_" +
                         std::to_string(request.arch_sm),
                     log);
  }
  std::vector<char> cubin(size);
  check_nvrtc(nvrtcGetCUBIN(program.get(), cubin.data()), "nvrtcGetCUBIN", request.context, log);
  return cubin;
}

std::map<std::string, std::string> lowered_names(const Program& program,
                                                 const CompileRequest& request) {
  std::map<std::string, std::string> names;
  for (const std::string& expression : request.name_expressions) {
    const char* lowered = nullptr;
    check_nvrtc(nvrtcGetLoweredName(program.get(), expression.c_str(), &lowered),
                "nvrtcGetLoweredName", request.context + "; name expression " + expression);
    names[expression] = lowered;
  }
  return names;
}

int to_int(const std::ssub_match& match) { return std::stoi(match.str()); }

}  // namespace

std::vector<std::string> default_nvrtc_options(int arch_sm) {
  // A real arch (sm_XX) so that NVRTC hands back a cubin; ptxas -v for the resource report.
  // ptxas already optimises at -O3, and -lineinfo / --use_fast_math stay off so that the binary
  // is the one a release build would run.
  return {"-std=c++17", "--gpu-architecture=sm_" + std::to_string(arch_sm), "-default-device",
          "--ptxas-options=-v"};
}

CompileResult compile(const CompileRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  Program program = create_program(request);
  for (const std::string& expression : request.name_expressions) {
    check_nvrtc(nvrtcAddNameExpression(program.get(), expression.c_str()), "nvrtcAddNameExpression",
                request.context + "; name expression " + expression);
  }
  std::vector<std::string> options = default_nvrtc_options(request.arch_sm);
  options.insert(options.end(), request.extra_options.begin(), request.extra_options.end());
  std::vector<const char*> option_pointers;
  option_pointers.reserve(options.size());
  for (const std::string& option : options) {
    option_pointers.push_back(option.c_str());
  }

  const nvrtcResult compiled = nvrtcCompileProgram(
      program.get(), static_cast<int>(option_pointers.size()), option_pointers.data());
  CompileResult result;
  result.log = program_log(program, request.context);
  check_nvrtc(compiled, "nvrtcCompileProgram", request.context, result.log);

  result.cubin = program_cubin(program, request, result.log);
  result.lowered_names = lowered_names(program, request);
  result.ptxas = parse_ptxas_report(result.log);
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::map<std::string, PtxasReport> parse_ptxas_report(const std::string& log) {
  // ptxas -v prints, per entry function (CUDA 13 layout; older ptxas indents the second line
  // with spaces instead of "ptxas         ."):
  //   ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_90'
  //   ptxas info    : Function properties for _Z3fooPf
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 10 registers, used 1 barriers, 512 bytes smem, 360 bytes cmem[0]
  // Non-inlined device functions get "Function properties" too, but no "Compiling entry
  // function": they are left out of the result.
  static const std::regex entry_re(R"(Compiling entry function '([^']+)')");
  static const std::regex properties_re(R"(Function properties for (\S+))");
  static const std::regex frame_re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex registers_re(R"(Used (\d+) registers)");
  static const std::regex barriers_re(R"(used (\d+) barriers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");

  std::map<std::string, PtxasReport> entries;
  std::map<std::string, PtxasReport> properties;  // stack and spills of every function
  std::string current_entry;
  std::string current_properties;
  std::istringstream lines(log);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, entry_re)) {
      current_entry = match[1].str();
      entries[current_entry];
    } else if (std::regex_search(line, match, properties_re)) {
      current_properties = match[1].str();
    } else if (std::regex_search(line, match, frame_re)) {
      PtxasReport& report = properties[current_properties];
      report.stack_frame_bytes = to_int(match[1]);
      report.spill_store_bytes = to_int(match[2]);
      report.spill_load_bytes = to_int(match[3]);
    } else if (std::regex_search(line, match, registers_re) && !current_entry.empty()) {
      PtxasReport& report = entries[current_entry];
      report.registers = to_int(match[1]);
      if (std::regex_search(line, match, barriers_re)) {
        report.barriers = to_int(match[1]);
      }
      if (std::regex_search(line, match, smem_re)) {
        report.static_smem_bytes = to_int(match[1]);
      }
    }
  }
  for (auto& [name, report] : entries) {
    const auto found = properties.find(name);
    if (found == properties.end()) {
      continue;
    }
    report.stack_frame_bytes = found->second.stack_frame_bytes;
    report.spill_store_bytes = found->second.spill_store_bytes;
    report.spill_load_bytes = found->second.spill_load_bytes;
  }
  return entries;
}

std::string nvrtc_version() {
  int major = 0;
  int minor = 0;
  check_nvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion", "");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> nvrtc_supported_archs() {
  int count = 0;
  check_nvrtc(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs", "");
  std::vector<int> archs(static_cast<std::size_t>(count));
  check_nvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs", "");
  return archs;
}

}  // namespace tuner
