#!/usr/bin/env python3
"""The ratio table: peer ms / vkattn ms per case (> 1: vkattn is faster), as markdown.

Joins `vkattn bench --json` rows with peer rows (torch_sdpa.py) on the case's
peer key (bench/peers/suite.py: the shape, so every KV layout of a shape meets
the same contiguous peer timing). Standard library only.

usage:
  python3 bench/peers/join.py vk-decode.jsonl vk-prefill.jsonl --peer torch.jsonl [--out ratios.md]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402


def join(vk_rows, peer_rows):
    """One row per vkattn case that ran: its figures, and the peer's where it timed the same key."""
    peers = {tuple(p["key"]): p for p in peer_rows if p.get("status") == "ok"}
    out = []
    for r in vk_rows:
        if r.get("family") == "probe":
            continue
        row = {"case": r["case"], "suite": r.get("suite", ""), "family": r.get("family", "text"),
               "status": r.get("status"), "variant": r.get("variant", ""), "reason": r.get("reason", ""),
               "vk_ms": r.get("ms"), "gbps": r.get("gbps"), "tflops": r.get("tflops"),
               "bw_share": r.get("bw_share"), "peak_share": r.get("peak_share"), "bytes": r.get("bytes"),
               "flops": r.get("flops"), "layout": r.get("layout", ""), "seq_len": r.get("seq_len"),
               "head_dim": r.get("head_dim"), "window": r.get("window", 0), "kv_dtype": r.get("kv_dtype", "")}
        p = peers.get(suite.peer_key(r)) if r.get("family", "text") in ("text", "vision") else None
        if p is not None:
            row["peer_ms"] = p["ms"]
            row["peer_backend"] = p.get("backend", "")
            sets = ""
            if r.get("input_sets") and p.get("input_sets") and r["input_sets"] != p["input_sets"]:
                sets = f"peer rotated {p['input_sets']} input sets where vkattn rotated {r['input_sets']}"
            row["peer_note"] = "; ".join(x for x in (p.get("layout_note", ""), p.get("gqa", ""), sets)
                                         if x and x != "none")
            if row["vk_ms"]:
                row["ratio"] = p["ms"] / row["vk_ms"]
        out.append(row)
    return out


def _num(x, spec):
    return "-" if x is None else format(x, spec)


def _share(x):
    return "-" if x is None else f"{100 * x:.1f}%"


# Decode that reads this many bytes or more should reach this share of the
# device's read ceiling: the aim decode is measured against.
DECODE_AIM_BYTES = 256 << 20
DECODE_AIM_SHARE = 0.85


def decode_summary(rows):
    """Lines under the decode table: the geometric mean per K/V dtype (where
    there are several: the peer's fused backends take no f32 K/V, so its
    ratios would swamp the others'), and how many cases that read
    DECODE_AIM_BYTES or more reach DECODE_AIM_SHARE of the read ceiling,
    naming those that do not."""
    lines = []
    dtypes = sorted({r["kv_dtype"] for r in rows if "ratio" in r and r.get("kv_dtype")})
    if len(dtypes) > 1:
        for dt in dtypes:
            ratios = [r["ratio"] for r in rows if "ratio" in r and r.get("kv_dtype") == dt]
            lines.append(f"decode, {dt} K/V: geometric mean of peer / vkattn over {len(ratios)} cases: "
                         f"{_num(geomean(ratios), '.2f')}")
    big = [r for r in rows if r["status"] == "ok" and (r.get("bytes") or 0) >= DECODE_AIM_BYTES
           and r.get("bw_share") is not None]
    if big:
        short = [r for r in big if r["bw_share"] < DECODE_AIM_SHARE]
        lines.append(f"decode reading {DECODE_AIM_BYTES >> 20} MiB or more: {len(big) - len(short)} of {len(big)} "
                     f"cases at {100 * DECODE_AIM_SHARE:.0f}% of the read ceiling or above")
        lines += [f"- below: {r['case']} ({_share(r['bw_share'])})" for r in short]
    return lines + [""] if lines else []


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def markdown(rows):
    """A table per family (decode, prefill, vision, audio, bdpa), then the geometric mean of the ratios."""
    groups = {}
    for r in rows:
        kind = r["family"] if r["family"] != "text" else ("decode" if r.get("seq_len") == 1 else "prefill")
        groups.setdefault(kind, []).append(r)
    lines = []
    for kind in ("decode", "prefill", "vision", "audio", "bdpa"):
        if kind not in groups:
            continue
        by_bytes = kind in ("decode", "bdpa")  # memory-bound: bytes per second
        figure = "GB/s (% of read ceiling)" if by_bytes else "TFLOP/s (% of peak)"
        lines += [f"### {kind}", "",
                  f"| case | variant | vkattn ms | {figure} | peer ms (backend) | peer / vkattn |",
                  "| --- | --- | ---: | ---: | ---: | ---: |"]
        for r in groups[kind]:
            if r["status"] not in ("ok", "failed"):
                lines.append(f"| {r['case']} | {r['status']}: {r['reason']} | | | | |")
                continue
            fig = (f"{_num(r['gbps'], '.0f')} ({_share(r['bw_share'])})" if by_bytes
                   else f"{_num(r['tflops'], '.1f')} ({_share(r['peak_share'])})")
            peer = f"{r['peer_ms']:.4f} ({r['peer_backend']})" if "peer_ms" in r else "-"
            ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
            status = " FAILED parity" if r["status"] == "failed" else ""
            lines.append(f"| {r['case']} | {r['variant']}{status} | {_num(r['vk_ms'], '.4f')} | {fig} | {peer} | {ratio} |")
        g = geomean([r.get("ratio") for r in groups[kind]])
        n = sum(1 for r in groups[kind] if "ratio" in r)
        lines += ["", f"{kind}: geometric mean of peer / vkattn over {n} cases: {_num(g, '.2f')}", ""]
        if kind == "decode":
            lines += decode_summary(groups[kind])
    notes = sorted({r["peer_note"] for r in rows if r.get("peer_note")})
    if notes:
        lines += ["Peer notes: " + " | ".join(notes), ""]
    return "\n".join(lines)


def write_markdown(text, out):
    """The table into file `out`, or to stdout where it is None."""
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vkattn", nargs="+", help="`vkattn bench --json` outputs")
    ap.add_argument("--peer", action="append", default=[], help="peer JSON lines (torch_sdpa.py --out)")
    ap.add_argument("--out", help="write the markdown here (default: stdout)")
    args = ap.parse_args()
    vk = [r for path in args.vkattn for r in suite.load(path)]
    peers = [r for path in args.peer for r in suite.load(path)]
    write_markdown(markdown(join(vk, peers)), args.out)


if __name__ == "__main__":
    main()
