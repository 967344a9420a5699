#pragma once
// How many rotations of the GEMM operands (A, B and their scales: what one launch reads) a timing
// graph cycles through, so that one replay reads >= kL2Factor x the L2 in distinct bytes, and how
// many launches the graph has. Pure: the session allocates what this says; tests check it on the
// CPU.
#include <string>

namespace tuner::fp8_gemm {

struct OperandSets {
  int sets = 0;      // operand rotations allocated (launch i reads set i % sets)
  int launches = 0;  // launches per timing graph
};

// `set_bytes`: the bytes of one rotation; `memory_gib`: the footprint they may fill. `l2_bytes` 0
// (the L2 flushed between replays) asks for `min_launches` launches over as many sets as fit, up to
// that many. Throws InputError naming `option` when the footprint is under kL2Factor x `l2_bytes`
// or its whole sets do not reach it, or when over kMaxLaunchesPerGraph launches would be needed.
OperandSets operand_sets(double set_bytes, double memory_gib, long long l2_bytes, int min_launches,
                         const std::string& option);

}  // namespace tuner::fp8_gemm
