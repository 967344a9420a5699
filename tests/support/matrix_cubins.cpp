// Compiles the correctness matrix's compile keys on a machine without a GPU, into the cubin cache
// that gpu_sparse_mla_decode reads through TUNER_GPU_CUBIN_CACHE (matrix_compiles.hpp): a device
// call then loads the part's cubins instead of compiling them. The keys depend on the GPU's
// arch and its opt-in shared memory per block, taken from core's arch table (sm_90: the H200).
// Usage: tuner_matrix_cubins DIR ARCH PART...   (ARCH: sm_90; PART: fp8_ds_mla:2, bf16:1, ...)
#include <cstdio>
#include <exception>
#include <string>

#include "core/arch.hpp"
#include "tests/support/matrix_compiles.hpp"

namespace {

// A whole decimal number, or an InputError naming the argument (exit 2, not std::stoi's bare
// "stoi").
int whole_number(const std::string& text, const char* what) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw tuner::InputError(std::string(what) + " '" + text + "' is not a whole number");
  }
  return value;
}

// "fp8_ds_mla:2" -> the matrix part's base shape (KV format, TP); throws on anything else.
tuner::smla_family::Shape part_shape(const std::string& part) {
  using namespace tuner::smla_family;
  const std::size_t colon = part.find(':');
  const std::string kv = part.substr(0, colon);
  Shape shape;
  if (colon == std::string::npos || (kv != "fp8_ds_mla" && kv != "bf16")) {
    throw tuner::InputError("part '" + part + "': write FORMAT:TP, e.g. fp8_ds_mla:2 or bf16:1");
  }
  shape.kv_format = kv == "bf16" ? KvFormat::bf16 : KvFormat::fp8_ds_mla;
  shape.attn_tp = whole_number(part.substr(colon + 1), "the part's TP");
  if (shape.attn_tp != 1 && shape.attn_tp != 2 && shape.attn_tp != 4) {
    throw tuner::InputError("part '" + part + "': the matrix's TP values are 1, 2 and 4");
  }
  return shape;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: tuner_matrix_cubins DIR ARCH PART...\n");
    return 2;
  }
  try {
    const tuner::CubinCache cache(argv[1]);
    const tuner::Arch arch = tuner::arch_by_name(argv[2]);  // InputError names the known ones
    for (int i = 3; i < argc; ++i) {
      const tuner::smla_family::Shape base = part_shape(argv[i]);
      const tuner::test::CompiledKeys compiled = tuner::test::compile_all(
          tuner::test::compile_keys_for(base, arch.max_smem_per_block_optin_bytes), base.kv_format,
          arch.sm, cache);
      int failed = 0;
      for (const std::string& failure : compiled.failures) failed += failure.empty() ? 0 : 1;
      std::printf("%s: %zu compile keys for sm_%d, %d from the cache, %d rejected by NVRTC\n",
                  argv[i], compiled.configs.size(), arch.sm, compiled.from_cache, failed);
    }
    return 0;
  } catch (const tuner::InputError& error) {
    std::fprintf(stderr, "tuner_matrix_cubins: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tuner_matrix_cubins: %s\n", error.what());
    return 1;
  }
}
