#!/usr/bin/env bash
# Runs every libFuzzer harness in BUILD for SECONDS each on the committed seed
# corpus (fuzz/corpus/<name>/, read only: new inputs go to a temporary
# directory), two at a time. Exits non-zero on the first finding; the
# reproducer is left in the temporary directory named in the log.
set -euo pipefail
build=${1:?usage: run-fuzzers.sh BUILD SECONDS}
seconds=${2:?usage: run-fuzzers.sh BUILD SECONDS}
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/vkattn-fuzz.XXXXXX)
names=(npy caps plan_json validate_text validate_vision validate_posembed validate_audio)

run_one() {
  local name=$1
  mkdir -p "$work/$name"
  if "$build/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$work/$name-" "$work/$name" "fuzz/corpus/$name" >"$work/$name.log" 2>&1; then
    echo "fuzz_$name: $(grep -m1 '^stat::number_of_executed_units' "$work/$name.log" | awk '{print $2}') executions, no finding"
  else
    echo "fuzz_$name: FINDING (log $work/$name.log)"
    tail -40 "$work/$name.log"
    return 1
  fi
}

status=0
for ((i = 0; i < ${#names[@]}; i += 2)); do
  pids=()
  for name in "${names[@]:i:2}"; do
    run_one "$name" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
done
[ $status -eq 0 ] && rm -rf "$work"
exit $status
