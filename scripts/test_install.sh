#!/usr/bin/env bash
# What a deployment consumes, checked from outside the tree (CTest: test_install):
#   1. `cmake --install BUILD --prefix TMP`: the tuner CLI, libtunedb + libtunedb_cuda with their
#      SONAMEs, the public headers, the CMake package and the pkg-config files;
#   2. examples/serve built out of tree with find_package(tunedb CONFIG) (tunedb::tunedb,
#      tunedb::cuda), and the C launcher example once more through pkg-config;
#   3. the installed lookup example answering from the fixture's frozen DB; the launcher example
#      exits 3 naming why where there is no GPU, 0 where there is one;
#   4. the Python packages (db/python and each family's kernels/<family>/python) installed with
#      pip into a fresh venv, no network (--no-index --no-build-isolation), imported with only the
#      installed libraries on the loader's path.
# Each family's serving headers (kernels/<family>/serve_args.h, client.h) must be installed and
# compile as C through pkg-config.
# Usage: scripts/test_install.sh BUILD_DIR     Exit 0 when every check passes.
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
fail() { echo "test_install: FAILED: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log"
libdir=$(dirname "$(find "$prefix" -name libtunedb.so.0 | head -n 1)")
[ -n "$libdir" ] || fail "libtunedb.so.0 not installed"
for file in bin/tuner include/tunedb/db/tunedb/tunedb.h include/tunedb/deploy/tunedb_cuda.h \
            include/tunedb/deploy/launcher.hpp; do
  [ -f "$prefix/$file" ] || fail "$file not installed"
done
for lib in libtunedb.so.0 libtunedb_cuda.so.0; do
  [ -e "$libdir/$lib" ] || fail "$lib not installed"
  readelf -d "$libdir/$lib" | grep -q "SONAME.*\[$lib\]" || fail "$lib has no SONAME $lib"
done
readelf -d "$libdir/libtunedb_cuda.so.0" | grep -q "NEEDED.*nvrtc" && fail "libtunedb_cuda links NVRTC"
clients=0
for client in "$source_dir"/kernels/*/client.h; do
  family_dir=kernels/$(basename "$(dirname "$client")")
  for file in client.h serve_args.h; do
    [ -f "$prefix/include/tunedb/$family_dir/$file" ] || fail "$family_dir/$file not installed"
  done
  clients=$((clients + 1))
done
[ "$clients" -ge 2 ] || fail "fewer than two family client headers in the tree ($clients)"
[ -f "$libdir/cmake/tunedb/tunedbConfig.cmake" ] || fail "CMake package not installed"

cmake -S "$source_dir/examples/serve" -B "$tmp/examples" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCUDAToolkit_ROOT=/usr/local/cuda -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "find_package(tunedb CONFIG) example did not configure"; }
cmake --build "$tmp/examples" -j2 >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "the examples did not build against the installed package"; }
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# shellcheck disable=SC2046
cc -std=c99 "$source_dir/deploy/tools/serve_example.c" $(pkg-config --cflags --libs tunedb_cuda) \
  -o "$tmp/serve_c_pkgconfig" || fail "the C example did not build through pkg-config"
for client in "$prefix"/include/tunedb/kernels/*/client.h; do
  header=${client#"$prefix/include/tunedb/"}
  # shellcheck disable=SC2046
  printf '#include "%s"\nint main(void) { return 0; }\n' "$header" |
    cc -std=c99 -Wall -Werror -x c - $(pkg-config --cflags --libs tunedb_cuda) -o "$tmp/client_c" ||
    fail "$header does not compile as C against the installed package"
done

export LD_LIBRARY_PATH="$libdir"
"$build/tests/tunedb_make_fixture" "$tmp/fixture" >/dev/null
# The fixture's family and shape (tests/support/fixture.hpp: kFamily, kShape).
"$tmp/examples/lookup_c" "$tmp/fixture/frozen.db" sparse_mla_decode \
  "kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048" |
  grep -q "how=exact tuned_batch=8" || fail "the installed lookup example gave the wrong answer"
set +e
"$tmp/examples/serve_c" "$tmp/fixture/frozen.db" >"$tmp/serve_c.log" 2>&1
serve_rc=$?
set -e
# Before opening, the example lists every family's argument record through the C API.
[ "$(grep -c "^family [a-z0-9_]*: [0-9]* bytes: " "$tmp/serve_c.log")" -eq "$clients" ] ||
  fail "the C example did not describe every family's record: $(cat "$tmp/serve_c.log")"
case $serve_rc in
  3) grep -q "no usable NVIDIA GPU" "$tmp/serve_c.log" || fail "exit 3 without saying why" ;;
  2) grep -q "holds no cubin for this device's arch" "$tmp/serve_c.log" ||
       fail "$(cat "$tmp/serve_c.log")" ;;  # a GPU, but the fixture's images are stand-ins
  *) fail "serve_c exited $serve_rc: $(cat "$tmp/serve_c.log")" ;;
esac

# Debian's interpreter (scripts/setup.sh: python3-venv, python3-setuptools, python3-wheel): the
# venv sees its setuptools and wheel, so pip builds the pure-Python wheel without the network.
python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" -m venv --system-site-packages "$tmp/venv"
mkdir -p "$tmp/python_src"
for package in "$source_dir/db/python" "$source_dir"/kernels/*/python; do
  copy="$tmp/python_src/$(basename "$(dirname "$package")")"
  cp -r "$package" "$copy"  # setuptools writes build/ next to its input
  "$tmp/venv/bin/pip" install --no-index --no-build-isolation --quiet "$copy" \
    >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log"; fail "pip could not install $package"; }
done
(cd "$tmp" && env -u PYTHONPATH -u TUNEDB_LIBRARY -u TUNEDB_CUDA_LIBRARY "$tmp/venv/bin/python" - \
  "$tmp/fixture/frozen.db" <<'PY') || fail "the installed Python package did not work"
import sys
import tunedb
import tunedb.launch
assert "site-packages" in tunedb.__file__, tunedb.__file__
with tunedb.TuningDb(sys.argv[1]) as db:
    found = db.lookup("sparse_mla_decode", "sm_120", shape="kv_format=fp8_ds_mla,local_heads=16,page_size=64,topk=2048", batch=8)
    assert found.how == "exact" and found.tuned_batch == 8, found
served = tunedb.launch.families()
import tunedb_sparse_mla_decode
assert "site-packages" in tunedb_sparse_mla_decode.__file__, tunedb_sparse_mla_decode.__file__
assert tunedb_sparse_mla_decode.FAMILY in served, served
for family in served:
    assert tunedb.launch.args_layout(family).fields, family
for module in ("tunedb.torch", "tunedb_sparse_mla_decode.torch"):
    try:
        __import__(module)
    except ModuleNotFoundError as error:
        assert error.name == "torch", error  # torch is optional: only the torch ops need it
print("python ok")
PY
echo "test_install: OK (prefix layout, find_package and pkg-config builds, C, Python)"
