#pragma once
// Checking one candidate on the GPU: fresh inputs, NaN-poisoned outputs, the fp32 reference, the
// candidate, and the tolerance check.
#include <cstdint>

#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/reference.hpp"

namespace tuner::smla_family {

struct DeviceOutputs {
  std::vector<float> out;
  std::vector<float> lse;
};

DeviceOutputs download_outputs(const DeviceProblem& problem);
DeviceOutputs download_reference(const DeviceProblem& problem);

// Redraws q and the index sets from `seed`, applies `edit_indices` (may be null) to index set 0,
// runs the reference and the candidate on index set 0, and compares.
using IndexEdit = void (*)(std::vector<std::int32_t>& indices, const Shape& shape,
                           long long num_tokens);
Agreement verify_candidate(const UtilityKernels& utility, const DecodeKernels& kernels,
                           DeviceProblem& problem, std::uint64_t seed, cuda::Stream& stream,
                           IndexEdit edit_indices = nullptr);

}  // namespace tuner::smla_family
