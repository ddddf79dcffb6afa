#!/usr/bin/env python3
"""Builds of vkattn against each other: one table from `vkattn bench --json` outputs.

Each argument is LABEL=FILE; a label given more than once is rounds of the same
build (alternate the builds' runs in one session, so clock and thermal drift
fall on both). The first label is the baseline. Per case and label the table
gives the mean of the rounds' medians (each round's in brackets) and the
baseline's time over the label's: above 1 the label is faster. Cases a label
did not run, or ran but skipped or failed, say so instead.

usage:
  python3 bench/compare.py base=base-1.jsonl new=new-1.jsonl base=base-2.jsonl new=new-2.jsonl [--out table.md]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import join  # noqa: E402
import suite  # noqa: E402


def parse_inputs(args):
    """[(label, path)] from LABEL=FILE arguments, labels in first-seen order."""
    out = []
    for a in args:
        label, sep, path = a.partition("=")
        if not sep or not label or not path:
            raise SystemExit(f"compare.py: expected LABEL=FILE, got {a!r}")
        out.append((label, path))
    return out


def collect(inputs):
    """labels in order, case names in first-seen order, and per (case, label) the rows of its rounds."""
    labels, cases, rows = [], [], {}
    for label, path in inputs:
        if label not in labels:
            labels.append(label)
        for r in suite.load(path):
            if r.get("family") == "probe":
                continue
            if r["case"] not in rows:
                cases.append(r["case"])
                rows[r["case"]] = {}
            rows[r["case"]].setdefault(label, []).append(r)
    return labels, cases, rows


def mean_ms(rounds):
    """The mean of the rounds' medians, or None where a round did not time the case."""
    ms = [r.get("ms") for r in rounds]
    if not ms or any(m is None or r.get("status") != "ok" for m, r in zip(ms, rounds)):
        return None
    return sum(ms) / len(ms)


def markdown(labels, cases, rows):
    base = labels[0]
    others = labels[1:]
    head = f"| case | variant | {base} ms |" + "".join(f" {o} ms | {base} / {o} |" for o in others)
    lines = [head, "| --- | --- | ---: |" + " ---: | ---: |" * len(others)]
    speedups = {o: [] for o in others}
    for case in cases:
        by = rows[case]

        def cell(label):
            rounds = by.get(label)
            if not rounds:
                return "-", None
            m = mean_ms(rounds)
            if m is None:
                bad = next(r for r in rounds if r.get("status") != "ok" or r.get("ms") is None)
                return f"{bad.get('status', '?')}: {bad.get('reason', '')}".strip(), None
            each = ", ".join(f"{r['ms']:.4f}" for r in rounds)
            flag = " FAILED parity" if any(r.get("parity") == "fail" for r in rounds) else ""
            return (f"{m:.4f} ({each}){flag}" if len(rounds) > 1 else f"{m:.4f}{flag}"), m

        base_text, base_ms = cell(base)
        variants = sorted({r.get("variant", "") for label in labels for r in by.get(label, []) if r.get("variant")})
        line = f"| {case} | {' / '.join(variants) or '-'} | {base_text} |"
        for o in others:
            text, ms = cell(o)
            ratio = base_ms / ms if base_ms and ms else None
            if ratio:
                speedups[o].append(ratio)
            line += f" {text} | {'-' if ratio is None else f'{ratio:.3f}'} |"
        lines.append(line)
    lines.append("")
    for o in others:
        g = join.geomean(speedups[o])
        lines.append(f"{base} / {o}: geometric mean over {len(speedups[o])} cases: {'-' if g is None else f'{g:.3f}'}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="LABEL=FILE: `vkattn bench --json` output of one build's round")
    ap.add_argument("--out", help="write the markdown here (default: stdout)")
    args = ap.parse_args()
    inputs = parse_inputs(args.inputs)
    labels, cases, rows = collect(inputs)
    if len(labels) < 2:
        raise SystemExit("compare.py: expected at least two labels (the baseline first)")
    join.write_markdown(markdown(labels, cases, rows), args.out)


if __name__ == "__main__":
    main()
