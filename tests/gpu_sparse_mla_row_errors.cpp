// The correctness matrix judges each check on the device (verify.hpp's compare_on_device: row
// sums by templates/sparse_mla_decode/row_errors.cuh, 32 bytes a row downloaded). Here it must give
// what the host comparison (compare) gives on the same buffers: on a right answer, on an answer
// with one row pushed off, with outputs never written, and with a reference row never written.
// The two share judge_rows (the rules on the sums); what differs is where the sums are taken, and
// that is what these cases compare.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/sparse_mla_decode/device_inputs.hpp"
#include "kernels/sparse_mla_decode/verify.hpp"
#include "templates/sparse_mla_decode/layout.h"
#include "tests/support/smla_gpu.hpp"

using namespace tuner;
using namespace tuner::smla_family;

namespace {

Agreement on_host(const DeviceProblem& problem) {
  const DeviceOutputs got = download_outputs(problem);
  const DeviceOutputs ref = download_reference(problem);
  return compare(got.out, got.lse, std::vector<double>(ref.out.begin(), ref.out.end()),
                 std::vector<double>(ref.lse.begin(), ref.lse.end()),
                 problem.spec.shape.n_local_heads());
}

void check_same(const Agreement& device_side, const Agreement& host_side, const char* what) {
  INFO(what << ": device " << describe(device_side) << " | host " << describe(host_side));
  CHECK(device_side.non_finite == host_side.non_finite);
  CHECK(device_side.mismatch == host_side.mismatch);
  CHECK(device_side.worst_out_row == host_side.worst_out_row);
  CHECK(device_side.worst_lse_row == host_side.worst_lse_row);
  CHECK(device_side.lse_rel_error == host_side.lse_rel_error);
  // The sums run in another order on the device: equal to rounding. An infinite error (a
  // reference row never written) must be infinite on both sides; inf - inf would be NaN.
  if (std::isinf(host_side.out_rel_error) || std::isinf(device_side.out_rel_error)) {
    CHECK(device_side.out_rel_error == host_side.out_rel_error);
  } else {
    const double scale = std::max(std::abs(host_side.out_rel_error), 1e-300);
    CHECK(std::abs(device_side.out_rel_error - host_side.out_rel_error) / scale < 1e-9);
  }
  CHECK(device_side.passes(kOutTolerance, kLseTolerance) ==
        host_side.passes(kOutTolerance, kLseTolerance));
}

}  // namespace

TEST_CASE("compare_on_device judges as the host comparison does") {
  test::Gpu& device = test::gpu();
  // Any config that runs right will do: the seeds' default, with the combine kernel.
  const KernelConfig config = default_config();
  Shape shape;
  shape.batch = 7;
  shape.topk = 600;
  InputSpec spec{shape, 1 << 16, 1, 30, 17};
  DeviceProblem problem = make_device_problem(device.utility, spec, 64, device.stream.get());
  const CompileResult compiled =
      compile(split_program(config, shape.kv_format, device.info.arch_sm()));
  const DecodeKernels kernels = load_decode_kernels(compiled, config, shape.kv_format);
  const ReferenceAnswer reference = run_reference(device.utility, problem, 5, device.stream);
  const Agreement right = check_candidate(kernels, problem, reference, device.stream);
  REQUIRE(right.passes(kOutTolerance, kLseTolerance));
  check_same(compare_on_device(device.utility, problem, device.stream), on_host(problem),
             "a right answer");

  // Row 9 pushed off: the top mantissa bit of every third value flipped (bf16 bits of the
  // downloaded answer, uploaded back).
  const std::size_t count = problem.out.size() / 2;
  std::vector<std::uint16_t> bits(count);
  problem.out.download(bits.data(), count * 2);
  constexpr std::size_t kWidth = smla::kLatentDim;
  for (std::size_t i = 9 * kWidth; i < 10 * kWidth; i += 3) {
    bits[i] = static_cast<std::uint16_t>(bits[i] ^ 0x0040u);
  }
  problem.out.upload(bits.data(), count * 2);
  const Agreement off_device = compare_on_device(device.utility, problem, device.stream);
  CHECK(off_device.worst_out_row == 9);
  check_same(off_device, on_host(problem), "row 9 pushed off");

  // Nothing written: the poisoned buffers as a candidate that never ran leaves them.
  poison_outputs(problem, device.stream.get());
  const Agreement unwritten = compare_on_device(device.utility, problem, device.stream);
  CHECK(unwritten.non_finite > 0);
  check_same(unwritten, on_host(problem), "outputs never written");

  // A reference row never written (row 4 of the reference NaN), the candidate right again.
  check_candidate(kernels, problem, reference, device.stream);
  std::vector<float> ref_out(count);
  problem.ref_out.download(ref_out.data(), count * sizeof(float));
  for (std::size_t i = 4 * kWidth; i < 5 * kWidth; ++i) ref_out[i] = NAN;
  problem.ref_out.upload(ref_out.data(), count * sizeof(float));
  const Agreement bad_reference = compare_on_device(device.utility, problem, device.stream);
  CHECK_FALSE(bad_reference.mismatch.empty());
  check_same(bad_reference, on_host(problem), "a reference row never written");
}
