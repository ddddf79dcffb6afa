#!/usr/bin/env python3
"""Figures of a benchmark run (matplotlib): decode bandwidth vs KV bytes, and
prefill TFLOP/s vs sequence length, vkattn and the peers on one figure each,
with the measured ceilings as lines. PNGs go to docs/ by default.

usage:
  python3 bench/plot.py out/decode-h200.jsonl out/prefill.jsonl --peer out/torch.jsonl [--out-dir docs]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import join  # noqa: E402
import suite  # noqa: E402


def ceilings(paths):
    """The ceilings and device of the first summary row of vkattn's outputs."""
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith('{"summary"'):
                    s = json.loads(line)
                    return s.get("ceilings", {}), s.get("device", "")
    return {}, ""


def plot_decode(plt, rows, ceiling, device, path):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    decode = [r for r in rows if r["family"] == "text" and r.get("seq_len") == 1 and r.get("vk_ms")]
    for layout, marker in (("contiguous", "o"), ("ring", "^"), ("paged", "s")):
        pts = [r for r in decode if r["layout"] == layout]
        if pts:
            ax.scatter([r["bytes"] for r in pts], [r["gbps"] for r in pts], marker=marker, s=18,
                       label=f"vkattn ({layout})")
    peer = [r for r in decode if r.get("peer_ms") and r["layout"] == "contiguous"]
    if peer:
        ax.scatter([r["bytes"] for r in peer], [r["bytes"] / (r["peer_ms"] * 1e-3) * 1e-9 for r in peer],
                   marker="x", s=22, color="black", label="PyTorch SDPA (best backend)")
    if ceiling.get("read_gbps"):
        ax.axhline(ceiling["read_gbps"], color="gray", linestyle="--",
                   label=f"read ceiling {ceiling['read_gbps']:.0f} GB/s ({ceiling.get('source', '')})")
    ax.set_xscale("log")
    ax.set_xlabel("bytes moved per call (Q + visible K/V + O)")
    ax.set_ylabel("effective GB/s")
    ax.set_title(f"decode bandwidth, f16 KV — {device}")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def plot_prefill(plt, rows, ceiling, device, path):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    prefill = [r for r in rows if r["family"] == "text" and (r.get("seq_len") or 1) > 1 and r.get("vk_ms")]
    for d in sorted({r["head_dim"] for r in prefill}):
        for windowed in (False, True):
            pts = sorted((r for r in prefill if r["head_dim"] == d and bool(r["window"]) == windowed),
                         key=lambda r: r["seq_len"])
            if not pts:
                continue
            tag = f"D{d}{' window' if windowed else ''}"
            line = ax.plot([r["seq_len"] for r in pts], [r["tflops"] for r in pts], marker="o",
                           linestyle=":" if windowed else "-", label=f"vkattn {tag}")[0]
            peer = [r for r in pts if r.get("peer_ms")]
            if peer:
                ax.plot([r["seq_len"] for r in peer], [r["flops"] / (r["peer_ms"] * 1e-3) * 1e-12 for r in peer],
                        marker="x", linestyle=":" if windowed else "--", color=line.get_color(),
                        label=f"PyTorch SDPA {tag}")
    if ceiling.get("fp16_tflops"):
        ax.axhline(ceiling["fp16_tflops"], color="gray", linestyle="--",
                   label=f"fp16 peak {ceiling['fp16_tflops']:.0f} TFLOP/s ({ceiling.get('source', '')})")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("sequence length (causal prefill)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"causal prefill, f16 — {device}")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vkattn", nargs="+", help="`vkattn bench --json` outputs")
    ap.add_argument("--peer", action="append", default=[], help="peer JSON lines (torch_sdpa.py --out)")
    ap.add_argument("--out-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"))
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    vk = [r for path in args.vkattn for r in suite.load(path)]
    rows = join.join(vk, [r for path in args.peer for r in suite.load(path)])
    ceiling, device = ceilings(args.vkattn)
    os.makedirs(args.out_dir, exist_ok=True)
    for name, fn in (("bench_decode.png", plot_decode), ("bench_prefill.png", plot_prefill)):
        path = os.path.join(args.out_dir, name)
        fn(plt, rows, ceiling, device, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
