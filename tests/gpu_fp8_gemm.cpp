// GPU correctness of the fp8 block-scaled GEMM family: the fp32 GPU reference against the CPU
// fp64 one on small shapes (written separately: plain loops vs the kernel), then every survivor of
// the plan for this GPU against the GPU reference at M {1, 7, 64, 129} on a small and a
// DeepSeek-V3 shape (split-K variants included: SPLIT_K is a parameter of the space).
#include <doctest/doctest.h>

#include <cstdio>
#include <random>

#include "core/arch.hpp"
#include "core/cubin_cache.hpp"
#include "core/cuda_driver.hpp"
#include "core/nvrtc.hpp"
#include "kernels/fp8_gemm/family.hpp"
#include "kernels/fp8_gemm/reference.hpp"
#include "templates/fp8_gemm/params.h"
#include "tests/support/temp_dir.hpp"
#include "tuner/plan.hpp"

using namespace tuner;
using namespace tuner::fp8_gemm;

namespace {

struct Gpu {
  cuda::DeviceInfo info = cuda::device_info(0);
  cuda::Context context{0};
  cuda::Stream stream;
};

Gpu& gpu() {
  static Gpu instance;
  instance.context.make_current();
  return instance;
}

// Random finite e4m3 bytes (exponent 1..12) and scales, drawn on the host.
HostGemm random_gemm(int m, int n, int k, unsigned seed) {
  std::mt19937 random(seed);
  HostGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  const auto byte = [&] {
    const unsigned r = random();
    return static_cast<unsigned char>((r & 0x80) | ((1 + (r >> 8) % 12) << 3) | ((r >> 16) & 7));
  };
  const auto scale = [&] { return 0.25f + static_cast<float>(random() % 1000) / 1000.f; };
  for (int i = 0; i < m * k; ++i) g.a.push_back(byte());
  for (int i = 0; i < n * k; ++i) g.b.push_back(byte());
  for (int i = 0; i < m * k / 128; ++i) g.a_scale.push_back(scale());
  for (int i = 0; i < n / 128 * (k / 128); ++i) g.b_scale.push_back(scale());
  return g;
}

template <class T>
cuda::DeviceBuffer upload(const std::vector<T>& host, const char* what) {
  cuda::DeviceBuffer buffer(host.size() * sizeof(T), what);
  buffer.upload(host.data(), buffer.size());
  return buffer;
}

}  // namespace

TEST_CASE("fp8_gemm: the GPU fp32 reference agrees with the CPU fp64 reference") {
  Gpu& device = gpu();
  const CompileResult compiled = compile(utility_program(device.info.arch_sm()));
  const cuda::Module module(compiled.cubin, "fp8_gemm utility");
  const CUfunction reference = module.function(compiled.lowered_names.at("fp8_gemm_reference"));
  for (const auto& [m, n, k] : {std::tuple{1, 128, 128}, {5, 256, 384}, {33, 384, 1024}}) {
    CAPTURE(m);
    const HostGemm g = random_gemm(m, n, k, 17u + static_cast<unsigned>(m));
    const cuda::DeviceBuffer a = upload(g.a, "A");
    const cuda::DeviceBuffer as = upload(g.a_scale, "A scales");
    const cuda::DeviceBuffer b = upload(g.b, "B");
    const cuda::DeviceBuffer bs = upload(g.b_scale, "B scales");
    const cuda::DeviceBuffer c(static_cast<std::size_t>(m) * n * 4, "C");
    fp8gemm::ReferenceParams p{reinterpret_cast<const unsigned char*>(a.get()),
                               reinterpret_cast<const float*>(as.get()),
                               reinterpret_cast<const unsigned char*>(b.get()),
                               reinterpret_cast<const float*>(bs.get()),
                               reinterpret_cast<float*>(c.get()),
                               m,
                               n,
                               k};
    void* args[] = {&p};
    cuda::launch(reference, {static_cast<unsigned>((m * n + 255) / 256), 1, 1}, {256, 1, 1}, 0,
                 device.stream.get(), args, "fp8_gemm reference");
    device.stream.synchronize("fp8_gemm reference");
    std::vector<float> got(static_cast<std::size_t>(m) * n);
    c.download(got.data(), got.size() * 4);
    const GemmAgreement agreement = compare(got, cpu_reference(g));
    CHECK_MESSAGE(agreement.rel_error < 1e-5, describe(agreement));
  }
}

TEST_CASE("fp8_gemm: every survivor for this GPU matches the reference") {
  Gpu& device = gpu();
  const tuner::test::TempDir dir;
  const Arch arch = arch_from_device(0, nullptr);
  int checks = 0;
  int failures = 0;
  for (const auto& [n, k] : {std::pair{256, 512}, {7168, 4096}}) {
    const Shape shape = family().canonicalize(
        {{"n", std::to_string(n)}, {"k", std::to_string(k)}, {"block", "128"}});
    PlanRequest request;
    request.family = &family();
    request.shape = shape;
    request.arch = arch;
    request.allow_spills = true;  // spills are slow, not wrong
    const PlanResult plan = tuner::plan(request, CubinCache(dir.path()));
    DeviceSession session = family().open_device(
        DeviceSetup{shape, device.info.arch_sm(), dir.path().string(), 0.05, 0, 1});
    for (int m : {1, 7, 64, 129}) {
      session.prepare(m);
      for (const PlanRow& row : plan.rows) {
        if (row.fate != Fate::survivor) continue;
        const LaunchFn launch = session.load(row.config);
        const Verdict verdict = session.verify(row.config, launch, 1000u + m);
        ++checks;
        if (!verdict.passed) {
          ++failures;
          MESSAGE("n " << n << " k " << k << " m " << m << " " << describe(row.config) << ": "
                       << verdict.reason);
        }
      }
    }
  }
  MESSAGE("checks run: " << checks);
  CHECK(checks > 0);
  CHECK(failures == 0);
}
