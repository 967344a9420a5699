#!/usr/bin/env bash
# Fetches NVIDIA's nvdisasm (the PyPI wheel nvidia-cuda-nvdisasm, ~5 MB; the CUDA packages here
# carry no disassembler) into BUILD_DIR/tools/nvdisasm, for test_sass_stage_release. Best effort:
# without network it says so and exits 0, and that test then reports itself skipped.
# Usage: scripts/fetch_nvdisasm.sh [BUILD_DIR]
set -uo pipefail
cd "$(dirname "$0")/.."
tools=${1:-build}/tools
version=13.5.37
[ -x "$tools/nvdisasm" ] && exit 0
mkdir -p "$tools"
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT
if ! timeout 120 python3 -m pip download -q --no-deps --only-binary=:all: \
  "nvidia-cuda-nvdisasm==$version" -d "$download" >/dev/null 2>&1; then
  echo "setup: note: could not download nvidia-cuda-nvdisasm $version from PyPI (offline?);" \
    "test_sass_stage_release will be skipped"
  exit 0
fi
python3 - "$download" "$tools" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], '*.whl'))[0]
with zipfile.ZipFile(wheel) as archive:
    data = archive.read('nvidia/cu13/bin/nvdisasm')
target = os.path.join(sys.argv[2], 'nvdisasm')
with open(target + '.part', 'wb') as out:
    out.write(data)
os.chmod(target + '.part', 0o755)
os.replace(target + '.part', target)
PY
echo "setup: nvdisasm $version in $tools"
