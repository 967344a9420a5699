#include "kernels/sparse_mla_decode/verify.hpp"

#include <cstring>

#include "templates/sparse_mla_decode/layout.h"

namespace tuner::smla_family {

namespace {

std::vector<float> download_floats(const cuda::DeviceBuffer& buffer, std::size_t count) {
  std::vector<float> values(count);
  buffer.download(values.data(), count * sizeof(float));
  return values;
}

std::size_t rows(const DeviceProblem& problem) {
  return static_cast<std::size_t>(problem.spec.shape.batch) * problem.spec.shape.n_local_heads();
}

}  // namespace

DeviceOutputs download_outputs(const DeviceProblem& problem) {
  const std::size_t count = rows(problem) * smla::kLatentDim;
  std::vector<std::uint16_t> bits(count);
  problem.out.download(bits.data(), count * 2);
  DeviceOutputs outputs;
  outputs.out.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    outputs.out[i] = static_cast<float>(bf16_to_double(bits[i]));
  }
  outputs.lse = download_floats(problem.lse, rows(problem));
  return outputs;
}

DeviceOutputs download_reference(const DeviceProblem& problem) {
  return DeviceOutputs{download_floats(problem.ref_out, rows(problem) * smla::kLatentDim),
                       download_floats(problem.ref_lse, rows(problem))};
}

Agreement verify_candidate(const UtilityKernels& utility, const DecodeKernels& kernels,
                           DeviceProblem& problem, std::uint64_t seed, cuda::Stream& stream,
                           IndexEdit edit_indices) {
  redraw_inputs(utility, problem, seed, stream.get());
  if (edit_indices != nullptr) {
    stream.synchronize("verify: edit indices");
    std::vector<std::int32_t> indices(problem.index_set_bytes() / sizeof(std::int32_t));
    problem.indices.download(indices.data(), problem.index_set_bytes());
    edit_indices(indices, problem.spec.shape, problem.spec.num_tokens);
    problem.indices.upload(indices.data(), problem.index_set_bytes());
  }
  problem.ref_out.fill_u32(0x7fc00001u, stream.get());
  problem.ref_lse.fill_u32(0x7fc00001u, stream.get());
  launch_reference(utility, problem, 0, stream.get());
  poison_outputs(problem, stream.get());
  const LaunchGeometry geometry = launch_geometry(kernels.config, problem.spec.shape);
  launch_decode(kernels, geometry, problem, 0, stream.get());
  stream.synchronize("verify " + describe(to_config(kernels.config)));
  const DeviceOutputs got = download_outputs(problem);
  const DeviceOutputs ref = download_reference(problem);
  return compare(got.out, got.lse, std::vector<double>(ref.out.begin(), ref.out.end()),
                 std::vector<double>(ref.lse.begin(), ref.lse.end()));
}

}  // namespace tuner::smla_family
