# Sourced at the start of an H200 call script (bash): the GPU machine's NVRTC and the carried
# build's libraries (device_env.sh, device_build_link.sh), GPU tests that fail instead of skipping
# when the GPU does not answer, $out (the tool's $OUT) and $began (the call's start, in seconds).
set -u
source scripts/device_env.sh >/dev/null
source scripts/device_build_link.sh >/dev/null
export TUNER_REQUIRE_GPU=1
out=${OUT:-/tmp/tuner-out}
began=$(date +%s)
