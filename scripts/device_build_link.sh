#!/usr/bin/env bash
# Sourced on the lent GPU machine: the carried slim build (.devcarry/build: binaries, libraries,
# CTest files; no objects) is made reachable at the absolute paths compiled into the tests
# (/work/main/build/...), so ctest and the GPU tests that start `tuner` run as they do here.
repo=$PWD
if [ ! -e /work/main ]; then mkdir -p /work && ln -sfn "$repo" /work/main; fi
[ -e "$repo/build" ] || ln -sfn "$repo/.devcarry/build" "$repo/build"
echo "device_build_link: /work/main -> $(readlink -f /work/main), build -> $(readlink -f "$repo/build")"
