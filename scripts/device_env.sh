#!/usr/bin/env bash
# Sourced on the lent GPU machine: finds the CUDA 13 NVRTC there and puts the carried libraries
# (built on the CPU machine, .devcarry/lib) on the library path.
nvrtc=$(ls /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda*/lib64/libnvrtc.so.13 /usr/local/cuda*/targets/x86_64-linux/lib/libnvrtc.so.13 2>/dev/null | head -n 1)
[ -z "$nvrtc" ] && nvrtc=$(find / -name 'libnvrtc.so.13' -not -path '*/proc/*' 2>/dev/null | head -n 1)
export LD_LIBRARY_PATH="$PWD/.devcarry/lib:$(dirname "${nvrtc:-/usr/local/cuda/lib64/x}"):${LD_LIBRARY_PATH:-}"
echo "device_env: nvrtc at ${nvrtc:-NOT FOUND}"
