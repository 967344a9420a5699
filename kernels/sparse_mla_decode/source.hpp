#pragma once
// What NVRTC compiles for this family: the split + combine program of one compile key, and the
// utility program (reference kernel and input fills). Sources come from the embedded templates.
#include <string>
#include <vector>

#include "core/nvrtc.hpp"
#include "kernels/sparse_mla_decode/shape.hpp"
#include "kernels/sparse_mla_decode/space.hpp"

namespace tuner::smla_family {

// SHA-256 over every embedded template file (path and text): the fingerprint the DB and the cubin
// cache key on. Any edit to a kernel or a header it includes changes it.
const std::string& source_hash();

// Every embedded template file as an in-memory NVRTC header (include name = path under templates/).
std::vector<SourceFile> template_headers();

CompileRequest split_program(const KernelConfig& config, KvFormat kv_format, int arch_sm);

// Kernels: sparse_mla_decode_reference<F, 256> for both formats, fill_* (see fill.cuh).
CompileRequest utility_program(int arch_sm);
std::string reference_kernel_name(KvFormat kv_format);

}  // namespace tuner::smla_family
