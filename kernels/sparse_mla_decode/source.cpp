#include "kernels/sparse_mla_decode/source.hpp"

#include "core/hash.hpp"
#include "core/templates.hpp"

namespace tuner::smla_family {

// The family's folder and common/: an edit elsewhere (another family) leaves the hash alone.
std::vector<SourceFile> template_headers() {
  return template_files({"common/", "sparse_mla_decode/"});
}

// The templates, the split rule (deploy.cpp) and where the timed launch keeps its partials:
// trials timed under another rule launched other grids, and trials timed with the partials in two
// separate buffers (before the tuner placed them as the serving launcher does, in one workspace)
// timed another memory layout, so a change of any must not resume them.
const std::string& source_hash() {
  static const std::string hash = sha256_hex(templates_hash({"common/", "sparse_mla_decode/"}) +
                                             " split rule 3: floor(TARGET_CTAS / CTAs per split)"
                                             ", the cluster merge within the device's clusters"
                                             "; partials: the serving workspace layout");
  return hash;
}

CompileRequest split_program(const KernelConfig& config, KvFormat kv_format, int arch_sm) {
  CompileRequest request;
  request.source_name = "sparse_mla_decode/program.cu";
  request.source_text =
      "#include \"sparse_mla_decode/split_pipelined.cuh\"\n"
      "#include \"sparse_mla_decode/combine.cuh\"\n";
  request.headers = template_headers();
  request.name_expressions = {split_kernel_name(config, kv_format), combine_kernel_name(),
                              combine_whole_row_kernel_name()};
  request.arch_sm = arch_sm;
  request.context = std::string(kFamilyName) + " " + describe(to_config(config)) +
                    " kv=" + std::string(to_string(kv_format)) + " sm_" + std::to_string(arch_sm);
  return request;
}

std::string reference_kernel_name(KvFormat kv_format) {
  return "sparse_mla_decode_reference<" + std::to_string(static_cast<int>(kv_format)) + ", 256>";
}

CompileRequest utility_program(int arch_sm) {
  CompileRequest request;
  request.source_name = "sparse_mla_decode/utility.cu";
  request.source_text =
      "#include \"sparse_mla_decode/reference.cuh\"\n#include \"common/fill.cuh\"\n"
      "#include \"sparse_mla_decode/row_errors.cuh\"\n";
  request.headers = template_headers();
  request.name_expressions = {reference_kernel_name(KvFormat::fp8_ds_mla),
                              reference_kernel_name(KvFormat::bf16),
                              "fill_bf16_normal",
                              "fill_kv_fp8_ds_mla",
                              "fill_kv_bf16",
                              "fill_indices",
                              "sparse_mla_decode_row_errors"};
  request.arch_sm = arch_sm;
  request.context = std::string(kFamilyName) + " utility program sm_" + std::to_string(arch_sm);
  return request;
}

}  // namespace tuner::smla_family
