# shellcheck shell=bash disable=SC2154  # $began: device_call_env.sh
# Sourced by the H200 call scripts (bash).
# bench_ab LOGS BATCHES WHERE BEST_PER [OLD_WHERE] times builds of the tuner against each other
# with `tuner bench --no-default`, in rounds (every build, then every build again) on one machine,
# into LOGS/{BUILD}_{1,2}.log; each build keeps its own cubin cache. The builds are AB_BUILDS
# (default "old new"): `new` is build/tuner/tuner, any other NAME the carried
# .devcarry/bin/tuner_NAME (scripts/devcarry_old_tuner.sh makes tuner_old; other names: copy or
# rename it, e.g. one per commit). OLD_WHERE (default WHERE) filters every build but `new`, for
# values an older space lacks. AB_EXTRA: more `tuner bench` options for every build (e.g.
# --trimmed); AB_LIMIT_S: each run's limit in seconds (default 150). Expects $began
# (device_call_env.sh).
# ab_tuner BUILD: the tuner binary of BUILD (`new`: build/tuner/tuner, else
# .devcarry/bin/tuner_BUILD).
ab_tuner() {
  if [ "$1" = new ]; then echo build/tuner/tuner; else echo ".devcarry/bin/tuner_$1"; fi
}

bench_ab() {
  local logs=$1 batches=$2 where=$3 best_per=$4 old_where=${5:-$3} round build bin filter
  for build in ${AB_BUILDS:-old new}; do
    [ "$build" = new ] || [ -x ".devcarry/bin/tuner_$build" ] ||
      { echo "no .devcarry/bin/tuner_$build" >&2; return 2; }
  done
  for round in 1 2; do
    for build in ${AB_BUILDS:-old new}; do
      bin=$(ab_tuner "$build") filter=$where
      [ "$build" = new ] || filter=$old_where
      # shellcheck disable=SC2086  # AB_EXTRA: options, split into words on purpose
      XDG_CACHE_HOME=/tmp/bench_ab_cache_$build timeout "${AB_LIMIT_S:-150}" "$bin" bench \
        --batches "$batches" --where "$filter" --no-default --best-per "$best_per" ${AB_EXTRA:-} \
        >"$logs/${build}_$round.log" 2>&1
      echo "$build round $round rc=$? at $(($(date +%s) - began)) s"
    done
  done
}

# bench_ab_summary LOGS FIELD...: one line per log of bench_ab, in round order: for each best-of
# row, the batch, the named config fields (e.g. merge target_ctas) and the median in µs.
bench_ab_summary() {
  local logs=$1 round build
  shift
  for round in 1 2; do
    for build in ${AB_BUILDS:-old new}; do
      echo "== ${build}_$round (batch $* median_us)"
      grep -E "^ +[0-9]+ block_t.*best of" "$logs/${build}_$round.log" | awk -v fields="$*" '
        BEGIN { n = split(fields, want, " ") }
        { line = $1; us = ""
          for (f = 1; f <= n; f++)
            for (i = 2; i <= NF; i++) if (index($i, want[f] "=") == 1) line = line " " $i
          for (i = 2; i <= NF; i++) if (us == "" && $i ~ /^[0-9]+\.[0-9]+$/) us = $i
          print line, us }' | sort -n -s -k1,1 | tr '\n' ';'
      echo
    done
  done
}

# bench_ab_schedules LOGS: the builds of AB_BUILDS timed against each other on the fp8 winners'
# structure (call_logs' $winners, merge 4), best of schedule 0 (no q handoff: the control) and of
# schedule 2, at BATCHES (default the batches schedule 2 wins or nearly wins); the summary and the
# count of lines naming a wrong result (every config is checked against the reference first).
bench_ab_schedules() {
  local logs=$1
  bench_ab "$logs" "${BATCHES:-69,72,92,96,136,192,272,416}" \
    "$winners,merge=4,schedule=0|2,target_ctas=0|128|256,ctas_per_sm=1|2" schedule
  bench_ab_summary "$logs" schedule
  echo "lines naming a wrong result: $(grep -ciE "wrong" "$logs"/*.log | paste -sd ' ')"
}
