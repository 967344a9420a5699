#!/usr/bin/env bash
# On the CPU machine: refreshes .devcarry (git-ignored) from build/ for the `device` tool's carry:
# bin/tuner, the shared libraries the binaries need, and a slim copy of build/ (binaries, CTest
# files; no objects, archives, CPU-only tests or benchmarks, nor the fuzzer and the CPU test's
# nvdisasm: 13 MB the device never runs), within the tool's 64 MiB beside the tracked tree.
set -eu
cd "$(dirname "$0")/.."
mkdir -p .devcarry/bin .devcarry/lib
cp build/tuner/tuner .devcarry/bin/tuner
cp -a build/db/libtunedb.so* build/deploy/libtunedb_cuda.so* .devcarry/lib/
for lib in libboost_program_options.so.1.74.0 libcrypto.so.3 libsqlite3.so.0; do
  cp -L "$(ldconfig -p | awk -v l="$lib" '$1 == l {print $NF; exit}')" .devcarry/lib/
done
rm -rf .devcarry/build
mkdir -p .devcarry/build
tar -C build --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' --exclude='tests/test_*' \
  --exclude=Testing --exclude='bench/*' --exclude='_deps' --exclude=tests/fuzz_tunedb \
  --exclude=./tools -cf - . | tar -C .devcarry/build -xf -
du -sh .devcarry
