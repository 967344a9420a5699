# shellcheck shell=bash disable=SC2154  # $began: device_call_env.sh
# Sourced by the H200 call scripts' timeline steps (bash).
# timeline_step LOGS NAME BATCH WHERE: one `tuner bench` run of the diagnostic tuner
# (.devcarry/bin/tuner_timeline, scripts/devcarry_variant_tuner.sh timeline SMLA_TIMELINE=100)
# at BATCH on the configs WHERE selects, into LOGS/NAME.log; scripts/timeline.py's summary into
# LOGS/NAME.txt, and its headline rows printed. Expects XDG_CACHE_HOME set and $began.
# TIMELINE_TUNER names another diagnostic build in .devcarry/bin (default tuner_timeline);
# TIMELINE_EXTRA: more `tuner bench` options (e.g. --trimmed, for a config the trims leave out).
timeline_step() {
  local logs=$1 name=$2 batch=$3 where=$4
  # shellcheck disable=SC2086  # TIMELINE_EXTRA: options, split into words on purpose
  timeout 100 ".devcarry/bin/${TIMELINE_TUNER:-tuner_timeline}" bench --batches "$batch" \
    --no-default --where "$where" ${TIMELINE_EXTRA:-} >"$logs/$name.log" 2>&1
  echo "== $name (batch $batch, $where) rc=$? at $(($(date +%s) - began)) s"
  python3 scripts/timeline.py "$logs/$name.log" | sed -n '1,60p' >"$logs/$name.txt"
  grep -E "launch 100|stream|written|each SM|combine|past the|end |split end|crossing|  x " \
    "$logs/$name.txt" | head -n 24
}
