#pragma once
// Checking one candidate on the GPU: fresh inputs, NaN-poisoned outputs, the fp32 reference, the
// candidate, and the tolerance check, row by row.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/sparse_mla_decode/launch.hpp"
#include "kernels/sparse_mla_decode/reference.hpp"

namespace tuner::smla_family {

// The agreement of a candidate's output with the reference, judged per (batch, head) row: one
// wrong row fails the check however many right rows there are.
struct Agreement {
  // The worst row's ||out_r - ref_r|| / max(||ref_r||, floor); floor = kRowNormFloor x the RMS of
  // the reference's row norms, so a tiny row is judged on the scale of the others.
  double out_rel_error = 0.0;
  double lse_rel_error = 0.0;  // max over rows of |lse - ref| / max(|ref|, 1); -inf must match
  long long non_finite = 0;    // NaN / inf in out or lse (unwritten elements stay NaN-poisoned)
  std::string mismatch;        // the first structural problem (sizes, NaN, -inf), empty if none
  long long worst_out_row = -1;
  long long worst_lse_row = -1;
  int heads_per_batch = 0;  // names rows as (batch, head) when known
  bool passes(double out_tolerance, double lse_tolerance) const {
    return non_finite == 0 && mismatch.empty() && out_rel_error < out_tolerance &&
           lse_rel_error < lse_tolerance;
  }
};

inline constexpr double kOutTolerance = 1e-2;
inline constexpr double kLseTolerance = 1e-3;
inline constexpr double kRowNormFloor = 1e-2;

// `out` and `lse` are what the candidate wrote (out as floats already converted from bf16): rows
// = lse.size(), each of out.size() / rows values. A NaN or inf anywhere in out, lse or the
// reference (a row the reference never wrote) fails. `heads_per_batch` (0: unknown) names rows.
Agreement compare(const std::vector<float>& out, const std::vector<float>& lse,
                  const std::vector<double>& ref_out, const std::vector<double>& ref_lse,
                  int heads_per_batch = 0);

// The Agreement of rows given as their sums (smla::kRowSums a row, templates/sparse_mla_decode/
// row_errors.h), by compare's rules: compare() reduces its rows to these sums on the host,
// compare_on_device on the device.
Agreement judge_rows(const std::vector<double>& sums, const std::vector<float>& lse,
                     const std::vector<double>& ref_lse, int heads_per_batch = 0);

// compare() of the candidate's output in `problem` (out, lse) against the reference there
// (ref_out, ref_lse), with the row sums taken on the device: a check downloads 32 bytes a row
// instead of the output (tests/gpu_sparse_mla_decode.cpp checks the two against each other).
Agreement compare_on_device(const UtilityKernels& utility, const DeviceProblem& problem,
                            cuda::Stream& stream);

// "out rel err 2.1e-03 (worst row 37: batch 2, head 5), lse rel err ...", plus any problem.
std::string describe(const Agreement& agreement);

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

// The reference's answer for the inputs of one seed, kept on the host (as doubles, the form
// compare reads) so that every config verified on those inputs reuses it.
struct ReferenceAnswer {
  std::uint64_t seed = 0;
  std::vector<double> out;
  std::vector<double> lse;
};

// Redraws the inputs from `seed` (index set 0 edited by `edit_indices`, may be null) and runs the
// reference on index set 0.
ReferenceAnswer run_reference(const UtilityKernels& utility, DeviceProblem& problem,
                              std::uint64_t seed, cuda::Stream& stream,
                              IndexEdit edit_indices = nullptr);

// Runs the candidate on index set 0 of the inputs `reference` was computed on, and compares.
Agreement check_candidate(const DecodeKernels& kernels, const DeviceProblem& problem,
                          const ReferenceAnswer& reference, cuda::Stream& stream);

}  // namespace tuner::smla_family
