#!/usr/bin/env bash
# Two builds of vkattn on the same cases, alternated in one session so drift
# falls on both, then one table (bench/compare.py).
#
#   bench/ab.sh BASE_BINARY NEW_BINARY OUT_DIR -- BENCH_ARGUMENTS...
#   e.g. bench/ab.sh build-base/vkattn build/vkattn ab -- --suite decode-sample --filter bf16 --runs 20
#
# ROUNDS (default 2) sets the rounds per build. Each round writes
# OUT_DIR/{base,new}-N.jsonl; the table goes to OUT_DIR/compare.md and stdout.
set -euo pipefail

if [ $# -lt 4 ] || [ "$4" != "--" ]; then
  echo "usage: $0 BASE_BINARY NEW_BINARY OUT_DIR -- BENCH_ARGUMENTS..." >&2
  exit 2
fi
base=$1
new=$2
out=$3
shift 4
here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-2}
mkdir -p "$out"
inputs=()
for r in $(seq 1 "$rounds"); do
  for label in base new; do
    bin=$base
    [ "$label" = new ] && bin=$new
    # A failing parity check makes vkattn exit 1; the rows say which case failed.
    "$bin" bench "$@" --json > "$out/$label-$r.jsonl" 2> "$out/$label-$r.log" ||
      echo "$label round $r: vkattn bench exited $? (see $out/$label-$r.log)" >&2
    inputs+=("$label=$out/$label-$r.jsonl")
  done
done
python3 "$here/compare.py" "${inputs[@]}" --out "$out/compare.md"
cat "$out/compare.md"
