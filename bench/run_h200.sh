#!/usr/bin/env bash
# One benchmark run on the GPU machine: measured ceilings, the decode, prefill,
# vision and audio suites through vkattn, the same cases through PyTorch SDPA
# (CUDA-graph replays, best backend), the ratio tables and the figures.
#
#   bench/run_h200.sh VKATTN_BINARY OUT_DIR
#
# Needs only the vkattn binary (with a Vulkan loader it can open: on the H200
# machine `source .gpu/gpu-env.sh` first), python3 with torch (peers) and
# matplotlib (figures; skipped when missing). About 6-8 minutes on an H200.
# RUNS (default 20) sets the timed replays per case on both sides; DECODE_SUITE
# (default decode-h200) picks the decode grid (decode: every layout, longer).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 VKATTN_BINARY OUT_DIR" >&2
  exit 2
fi
vk=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
runs=${RUNS:-20}
decode=${DECODE_SUITE:-decode-h200}
mkdir -p "$out"
export VKATTN_BENCH_SUITES="${VKATTN_BENCH_SUITES:-$here/suites}"  # where --suite NAME looks first

stamp() { date -u +%H:%M:%S; }

echo "$(stamp) device and driver"
"$vk" devices | tee "$out/devices.txt"

echo "$(stamp) ceilings"
"$vk" bench --suite ceilings --runs "$runs" --json > "$out/ceilings.jsonl" 2> "$out/ceilings.log" || true
grep '"family":"probe"' "$out/ceilings.jsonl" || echo "no probe rows: shares use the known-device table" >&2
ceil=()
grep -q '"status":"ok"' "$out/ceilings.jsonl" && ceil=(--ceilings "$out/ceilings.jsonl")

# A failing parity check makes vkattn exit 1; the run goes on and the rows say which case failed.
suites=("$decode" prefill vision audio)
for s in "${suites[@]}"; do
  echo "$(stamp) vkattn suite $s"
  "$vk" bench --suite "$s" --runs "$runs" --json "${ceil[@]}" > "$out/vk-$s.jsonl" 2> "$out/vk-$s.log" ||
    echo "vkattn bench --suite $s exited $? (see $out/vk-$s.jsonl)" >&2
done

echo "$(stamp) PyTorch SDPA on the same cases"
peer=()
if python3 "$here/peers/torch_sdpa.py" "$out/vk-$decode.jsonl" "$out/vk-prefill.jsonl" "$out/vk-vision.jsonl" \
  --runs "$runs" --out "$out/torch.jsonl" 2> "$out/torch.log"; then
  peer=(--peer "$out/torch.jsonl")
else
  echo "the peer run failed (see $out/torch.log): tables without peers" >&2
  tail -3 "$out/torch.log" >&2
fi

echo "$(stamp) ratio tables"
vk_outputs=()
for s in "${suites[@]}"; do vk_outputs+=("$out/vk-$s.jsonl"); done
python3 "$here/peers/join.py" "${vk_outputs[@]}" "${peer[@]}" --out "$out/ratios.md"
cat "$out/ratios.md"

if python3 -c 'import matplotlib' 2> /dev/null; then
  python3 "$here/plot.py" "$out/vk-$decode.jsonl" "$out/vk-prefill.jsonl" "${peer[@]}" --out-dir "$out"
else
  echo "matplotlib missing: no figures (run bench/plot.py on a machine that has it)" >&2
fi
echo "$(stamp) done: $out"
