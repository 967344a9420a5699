#include "kernels/sparse_mla_decode/verify.hpp"

#include <cmath>
#include <cstring>
#include <sstream>

#include "core/device_pointer.hpp"

#include "templates/sparse_mla_decode/layout.h"
#include "templates/sparse_mla_decode/row_errors.h"

namespace tuner::smla_family {

namespace {

constexpr std::size_t kSums = smla::kRowSums;  // row_errors.h: the sums per row

std::vector<float> download_floats(const cuda::DeviceBuffer& buffer, std::size_t count) {
  std::vector<float> values(count);
  buffer.download(values.data(), count * sizeof(float));
  return values;
}

std::size_t rows(const DeviceProblem& problem) {
  return static_cast<std::size_t>(problem.spec.shape.batch) * problem.spec.shape.n_local_heads();
}

std::string row_name(std::size_t row, int heads_per_batch) {
  std::string name = "row " + std::to_string(row);
  if (heads_per_batch > 0) {
    name += " (batch " + std::to_string(row / static_cast<std::size_t>(heads_per_batch)) +
            ", head " + std::to_string(row % static_cast<std::size_t>(heads_per_batch)) + ")";
  }
  return name;
}

void note(Agreement& agreement, const std::string& problem) {
  if (agreement.mismatch.empty()) agreement.mismatch = problem;
}

// The four sums row_errors.cuh computes on the device, per row of `width` values: sum (out -
// ref)^2 and sum ref^2 over the finite outputs, the non-finite outputs, the non-finite reference
// values.
std::vector<double> host_row_sums(const std::vector<float>& out, const std::vector<double>& ref_out,
                                  std::size_t rows, std::size_t width) {
  std::vector<double> sums(rows * kSums, 0.0);
  for (std::size_t row = 0; row < rows; ++row) {
    double* row_sums = &sums[row * kSums];
    for (std::size_t i = row * width; i < (row + 1) * width; ++i) {
      if (!std::isfinite(ref_out[i])) row_sums[3] += 1.0;
      if (!std::isfinite(out[i])) {
        row_sums[2] += 1.0;
        continue;
      }
      const double diff = static_cast<double>(out[i]) - ref_out[i];
      row_sums[0] += diff * diff;
      row_sums[1] += ref_out[i] * ref_out[i];
    }
  }
  return sums;
}

// A reference row that is NaN or inf (lse may be -inf: no valid index) was never written: the
// check would compare against garbage, so it fails instead.
void check_reference(Agreement& agreement, const std::vector<double>& sums,
                     const std::vector<double>& ref_lse) {
  for (std::size_t row = 0; row < ref_lse.size(); ++row) {
    const bool finite =
        !std::isnan(ref_lse[row]) && ref_lse[row] != HUGE_VAL && sums[row * kSums + 3] == 0.0;
    if (!finite) {
      note(agreement, "the reference's " + row_name(row, agreement.heads_per_batch) +
                          " is not finite (never written?)");
    }
  }
}

// Relative error per row, against a floor of kRowNormFloor x the RMS row norm.
void compare_out_rows(Agreement& agreement, const std::vector<double>& sums, std::size_t rows) {
  double sum_ref_squares = 0.0;
  for (std::size_t row = 0; row < rows; ++row) {
    const auto bad = static_cast<long long>(sums[row * kSums + 2]);
    if (bad > 0) {
      agreement.non_finite += bad;
      note(agreement, row_name(row, agreement.heads_per_batch) + " has " + std::to_string(bad) +
                          " NaN/inf outputs");
    }
    sum_ref_squares += sums[row * kSums + 1];
  }
  const double floor = kRowNormFloor * std::sqrt(sum_ref_squares / static_cast<double>(rows));
  for (std::size_t row = 0; row < rows; ++row) {
    const double scale = std::max(std::sqrt(sums[row * kSums + 1]), floor);
    const double error = std::sqrt(sums[row * kSums]) / (scale > 0.0 ? scale : 1.0);
    if (std::isnan(error) || error > agreement.out_rel_error || agreement.worst_out_row < 0) {
      agreement.out_rel_error = std::isnan(error) ? HUGE_VAL : error;
      agreement.worst_out_row = static_cast<long long>(row);
    }
  }
}

void compare_lse_rows(Agreement& agreement, const std::vector<float>& lse,
                      const std::vector<double>& ref_lse) {
  for (std::size_t row = 0; row < lse.size(); ++row) {
    const std::string name = row_name(row, agreement.heads_per_batch);
    if (std::isnan(lse[row]) || lse[row] == HUGE_VALF) {
      ++agreement.non_finite;
      note(agreement, name + ": lse is " + std::to_string(lse[row]));
      continue;
    }
    const bool ref_empty = std::isinf(ref_lse[row]) && ref_lse[row] < 0;
    const bool got_empty = std::isinf(lse[row]) && lse[row] < 0;
    if (ref_empty != got_empty) {
      note(agreement, name + ": lse " + std::to_string(lse[row]) + ", reference " +
                          std::to_string(ref_lse[row]));
      continue;
    }
    if (ref_empty) continue;
    const double error = std::abs(static_cast<double>(lse[row]) - ref_lse[row]) /
                         std::max(std::abs(ref_lse[row]), 1.0);
    if (!(error <= agreement.lse_rel_error) || agreement.worst_lse_row < 0) {
      agreement.lse_rel_error = std::isnan(error) ? HUGE_VAL : error;
      agreement.worst_lse_row = static_cast<long long>(row);
    }
  }
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

ReferenceAnswer run_reference(const UtilityKernels& utility, DeviceProblem& problem,
                              std::uint64_t seed, cuda::Stream& stream, IndexEdit edit_indices) {
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
  stream.synchronize("verify: the reference");
  const DeviceOutputs ref = download_reference(problem);
  return ReferenceAnswer{seed, std::vector<double>(ref.out.begin(), ref.out.end()),
                         std::vector<double>(ref.lse.begin(), ref.lse.end())};
}

Agreement check_candidate(const DecodeKernels& kernels, const DeviceProblem& problem,
                          const ReferenceAnswer& reference, cuda::Stream& stream) {
  poison_outputs(problem, stream.get());
  const LaunchGeometry geometry =
      launch_geometry(kernels.config, problem.spec.shape, kernels.clusters);
  launch_decode(kernels, geometry, problem, 0, stream.get());
  stream.synchronize("verify " + describe(to_config(kernels.config)));
  const DeviceOutputs got = download_outputs(problem);
  return compare(got.out, got.lse, reference.out, reference.lse,
                 problem.spec.shape.n_local_heads());
}

Agreement verify_candidate(const UtilityKernels& utility, const DecodeKernels& kernels,
                           DeviceProblem& problem, std::uint64_t seed, cuda::Stream& stream,
                           IndexEdit edit_indices) {
  return check_candidate(kernels, problem,
                         run_reference(utility, problem, seed, stream, edit_indices), stream);
}

Agreement judge_rows(const std::vector<double>& sums, const std::vector<float>& lse,
                     const std::vector<double>& ref_lse, int heads_per_batch) {
  Agreement agreement;
  agreement.heads_per_batch = heads_per_batch;
  if (lse.empty() || sums.size() != lse.size() * kSums || lse.size() != ref_lse.size()) {
    agreement.mismatch = "row sums for " + std::to_string(sums.size() / kSums) + " rows, " +
                         std::to_string(lse.size()) + " lse and " + std::to_string(ref_lse.size()) +
                         " reference lse do not match";
    return agreement;
  }
  check_reference(agreement, sums, ref_lse);
  compare_out_rows(agreement, sums, lse.size());
  compare_lse_rows(agreement, lse, ref_lse);
  return agreement;
}

Agreement compare_on_device(const UtilityKernels& utility, const DeviceProblem& problem,
                            cuda::Stream& stream) {
  const std::size_t row_count = rows(problem);
  const auto* out = device_pointer<const unsigned short>(problem.out.get());
  const auto* ref_out = device_pointer<const float>(problem.ref_out.get());
  auto* sums = device_pointer<double>(problem.row_sums.get());
  void* args[] = {&out, &ref_out, &sums};
  cuda::launch(utility.row_errors, {static_cast<unsigned>(row_count), 1, 1},
               {static_cast<unsigned>(smla::kRowErrorsThreads), 1, 1}, 0, stream.get(), args,
               "row errors kernel");
  stream.synchronize("compare on the device");
  std::vector<double> row_sums(row_count * kSums);
  problem.row_sums.download(row_sums.data(), row_sums.size() * sizeof(double));
  const std::vector<float> lse = download_floats(problem.lse, row_count);
  const std::vector<float> ref_lse = download_floats(problem.ref_lse, row_count);
  return judge_rows(row_sums, lse, std::vector<double>(ref_lse.begin(), ref_lse.end()),
                    problem.spec.shape.n_local_heads());
}

Agreement compare(const std::vector<float>& out, const std::vector<float>& lse,
                  const std::vector<double>& ref_out, const std::vector<double>& ref_lse,
                  int heads_per_batch) {
  Agreement agreement;
  agreement.heads_per_batch = heads_per_batch;
  if (lse.empty() || out.size() != ref_out.size() || lse.size() != ref_lse.size() ||
      out.size() % lse.size() != 0) {
    agreement.mismatch = "output sizes (" + std::to_string(out.size()) + " out, " +
                         std::to_string(lse.size()) + " lse) do not match the reference's (" +
                         std::to_string(ref_out.size()) + ", " + std::to_string(ref_lse.size()) +
                         ") in whole rows";
    return agreement;
  }
  const std::size_t width = out.size() / lse.size();
  return judge_rows(host_row_sums(out, ref_out, lse.size(), width), lse, ref_lse, heads_per_batch);
}

std::string describe(const Agreement& agreement) {
  std::ostringstream text;
  text.precision(3);
  text << std::scientific << "out rel err " << agreement.out_rel_error;
  if (agreement.worst_out_row >= 0) {
    text << " (worst "
         << row_name(static_cast<std::size_t>(agreement.worst_out_row), agreement.heads_per_batch)
         << ")";
  }
  text << ", lse rel err " << agreement.lse_rel_error;
  if (agreement.worst_lse_row >= 0) {
    text << " (worst "
         << row_name(static_cast<std::size_t>(agreement.worst_lse_row), agreement.heads_per_batch)
         << ")";
  }
  if (agreement.non_finite > 0) text << ", " << agreement.non_finite << " non-finite outputs";
  if (!agreement.mismatch.empty()) text << ", " << agreement.mismatch;
  return text.str();
}

}  // namespace tuner::smla_family
