// Compiles one sparse MLA split kernel (and the combine) with NVRTC, as the tuner does, and writes
// the cubin: for reading a kernel's SASS on a machine without a GPU (scripts/sass_identity.sh
// checks that a refactor leaves the machine code of a set of configs byte-identical). Prints
// each kernel's registers and spills from ptxas's report.
// Usage: smla_cubin BLOCK_T BLOCK_H NUM_WARPS NUM_STAGES MMA_PATH PRODUCERS KV_UNPACK CTAS_PER_SM
//                   SCHEDULE fp8_ds_mla|bf16 ARCH_SM OUT.cubin
#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "kernels/sparse_mla_decode/source.hpp"

int main(int argc, char** argv) {
  using namespace tuner::smla_family;
  if (argc != 13) {
    std::fprintf(stderr,
                 "usage: smla_cubin BLOCK_T BLOCK_H NUM_WARPS NUM_STAGES MMA_PATH PRODUCERS "
                 "KV_UNPACK CTAS_PER_SM SCHEDULE fp8_ds_mla|bf16 ARCH_SM OUT.cubin\n");
    return 2;
  }
  try {
    KernelConfig config;
    int* const fields[] = {&config.block_t,    &config.block_h,     &config.num_warps,
                           &config.num_stages, &config.mma_path,    &config.producers,
                           &config.kv_unpack,  &config.ctas_per_sm, &config.schedule};
    for (int i = 0; i < 9; ++i) *fields[i] = std::stoi(argv[1 + i]);
    const KvFormat kv = std::string(argv[10]) == "bf16" ? KvFormat::bf16 : KvFormat::fp8_ds_mla;
    const tuner::CompileResult result =
        tuner::compile(split_program(config, kv, std::stoi(argv[11])));
    std::ofstream(argv[12], std::ios::binary)
        .write(result.cubin.data(), static_cast<std::streamsize>(result.cubin.size()));
    for (const auto& [name, report] : result.ptxas) {
      std::printf("%s registers %d spills %d\n", name.c_str(), report.registers,
                  report.spill_bytes());
    }
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "smla_cubin: %s\n", error.what());
    return 1;
  }
}
