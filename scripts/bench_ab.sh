# Sourced by the H200 call scripts (bash): bench_ab LOGS BATCHES WHERE BEST_PER [OLD_WHERE] times
# the carried old tuner (.devcarry/bin/tuner_old, scripts/devcarry_old_tuner.sh) against
# build/tuner/tuner with `tuner bench --no-default`, rounds old / new / old / new on one machine,
# into LOGS/{old,new}_{1,2}.log; each build keeps its own cubin cache. OLD_WHERE (default WHERE)
# filters the old build's space, for values it lacks. Expects $began (device_call_env.sh).
bench_ab() {
  local logs=$1 batches=$2 where=$3 best_per=$4 old_where=${5:-$3} round build bin filter
  [ -x .devcarry/bin/tuner_old ] || { echo "no .devcarry/bin/tuner_old" >&2; return 2; }
  for round in 1 2; do
    for build in old new; do
      bin=build/tuner/tuner filter=$where
      [ "$build" = old ] && bin=.devcarry/bin/tuner_old filter=$old_where
      XDG_CACHE_HOME=/tmp/bench_ab_cache_$build timeout 150 $bin bench --batches "$batches" \
        --where "$filter" --no-default --best-per "$best_per" >"$logs/${build}_$round.log" 2>&1
      echo "$build round $round rc=$? at $(($(date +%s) - began)) s"
    done
  done
}
