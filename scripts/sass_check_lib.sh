# shellcheck shell=bash
# Sourced by the SASS checks (check_stage_release.sh, check_producer_ids.sh).
# sass_check_start SMLA_CUBIN NVDISASM: sets $smla_cubin, $nvdisasm and $work (a temporary folder,
# removed on exit); without nvdisasm it says so and exits 77 (CTest: skipped).
sass_check_start() {
  smla_cubin=$1
  nvdisasm=$2
  if [ ! -x "$nvdisasm" ]; then
    echo "SKIPPED: no nvdisasm at $nvdisasm; scripts/fetch_nvdisasm.sh fetches it"
    exit 77
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
}

# sass_of CONFIG OUT [NVDISASM_FLAG...]: CONFIG (smla_cubin's arguments) compiled through NVRTC and
# disassembled into OUT; on failure prints FAIL with the reason and returns 1.
sass_of() {
  local config=$1 out=$2
  shift 2
  # shellcheck disable=SC2086  # CONFIG is smla_cubin's argument list
  if ! "$smla_cubin" $config "$work/k.cubin" >"$work/ptxas.txt" 2>&1; then
    echo "FAIL $config: did not compile"
    cat "$work/ptxas.txt"
    return 1
  fi
  if ! "$nvdisasm" -c "$@" "$work/k.cubin" >"$out" 2>"$work/err.txt"; then
    echo "FAIL $config: nvdisasm: $(cat "$work/err.txt")"
    return 1
  fi
}
