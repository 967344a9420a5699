#!/usr/bin/env bash
# Sets up a fresh Debian machine for tuner: installs the build and test dependencies from Debian,
# configures and builds (Release). The CUDA Toolkit (NVRTC, headers) is expected at /usr/local/cuda;
# the GPU driver is optional (without it, everything but GPU timing works).
# Usage: scripts/setup.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}

packages=(
  build-essential cmake pkg-config
  libsqlite3-dev sqlite3          # the tuning store (sqlite3: the CLI used in docs and checks)
  libboost-program-options-dev    # the CLI's option parsing
  nlohmann-json3-dev              # JSON output, params and the worker protocol
  libssl-dev                      # SHA-256 for source fingerprints and the cubin cache
  doctest-dev                     # unit tests
  libbenchmark-dev                # bench/tunedb_lookup
  python3 python3-matplotlib      # scripts/plot_report.py, the tunedb ctypes test
  python3-venv python3-setuptools python3-wheel  # scripts/test_install.sh: pip install of
                                  # db/python into a fresh venv with no network
  clang-format clang-tidy         # style checks (scripts/lint.sh)
  clang libclang-rt-14-dev        # the libFuzzer target over the tunedb readers (tests/fuzz)
  slurm-wlm munge                 # tests/slurm: a real one-node Slurm cluster (tuner plan --shard)
)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -e /usr/local/cuda/include/nvrtc.h ]; then
  echo "setup: error: the CUDA Toolkit is not at /usr/local/cuda (NVRTC and cuda.h are needed);" \
       "install CUDA 13 from NVIDIA's Debian repository or pass -DCUDAToolkit_ROOT=..." >&2
  exit 1
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT=/usr/local/cuda
cmake --build "$build_dir" -j"$(nproc)"
# nvdisasm for test_sass_stage_release (best effort: offline, that test reports itself skipped).
bash scripts/fetch_nvdisasm.sh "$build_dir"
