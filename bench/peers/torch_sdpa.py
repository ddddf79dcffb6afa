#!/usr/bin/env python3
"""PyTorch scaled_dot_product_attention on the cases vkattn benchmarks, timed fairly.

Reads suite files (bench/suites/*.json) or `vkattn bench --json` output, builds
each text and vision case in PyTorch on the GPU, and times every SDPA backend
(flash, cuDNN, efficient; math only for small cases) as CUDA-graph replays:
N calls are captured into one torch.cuda.CUDAGraph, each replay is timed with
CUDA events, and the median replay time is divided by N, so launch overhead
counts for neither side (vkattn is timed by GPU timestamps around one recorded
command buffer). The best backend is kept. Writes one JSON line per case.

Like vkattn, the captured calls rotate among the case's input sets (the
"input_sets" of a `vkattn bench --json` row: enough copies of Q, K and V that
together they exceed the L2, so repeats read memory, not the cache; one set
when the input is a suite file). Replaying one set would serve a short
decode's K/V from the L2 on this side only.

What differs from vkattn's case, and is said in each row:
- Q, K and V are all stored in the case's KV dtype (SDPA takes one dtype).
- Paged cases are timed on the equivalent contiguous cache (SDPA has no page
  table); the row's "layout_note" says so. Their key joins all layouts.
- GQA/MQA uses enable_gqa=True when this PyTorch has it, else K/V repeated
  per query head before capture (more bytes read); "gqa" says which.
- Decode with a window attends to the last `window` keys (a view); prefill
  with a window, or with fewer queries than keys, uses a boolean mask.
- Softcap, audio, BDPA and int8/int4 KV cases have no SDPA equivalent and are reported as skipped.

usage (on the GPU machine):
  python3 bench/peers/torch_sdpa.py vk-decode.jsonl vk-prefill.jsonl [--runs 20] [--out torch.jsonl]
  python3 bench/peers/torch_sdpa.py bench/suites/vision.json
  python3 bench/peers/torch_sdpa.py vk-decode.jsonl --input-sets 1   # every case on one set (a warm L2 for short ones)
"""
import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite  # noqa: E402

DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}
# Score elements above which the math backend (which materialises them) is not tried.
MATH_MAX_SCORES = 1 << 27
# Warm-up replays: long after start (an idle GPU clocks down), short once it is busy.
FIRST_WARMUP_MS = 200.0
WARMUP_MS = 30.0
_warmed = False
# Replays of one graph last at least this long, so event resolution does not matter.
GRAPH_TARGET_MS = 2.0
MAX_CALLS_PER_GRAPH = 200


def backends(torch):
    from torch.nn.attention import SDPBackend
    names = [("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"),
             ("math", "MATH")]
    return [(n, getattr(SDPBackend, attr)) for n, attr in names if hasattr(SDPBackend, attr)]


def has_enable_gqa(torch, F):
    try:
        q = torch.zeros(1, 2, 1, 8, device="cuda", dtype=torch.float16)
        kv = torch.zeros(1, 1, 4, 8, device="cuda", dtype=torch.float16)
        F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
        return True
    except (TypeError, RuntimeError):  # no such argument, or no backend takes it: repeat K/V instead
        return False


def graph_ms(torch, fn, runs, sets=1):
    """Median ms of one call, from CUDA-graph replays of N captured calls;
    call i runs fn(i % sets), on input set i % sets."""
    # Eager warm-up (also compiles/initialises the backend), then an estimate to size N.
    for i in range(3):
        fn(i % sets)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(5):
        fn(i % sets)
    end.record()
    torch.cuda.synchronize()
    eager = max(start.elapsed_time(end) / 5, 1e-3)
    calls = max(1, min(MAX_CALLS_PER_GRAPH, math.ceil(GRAPH_TARGET_MS / eager)))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for i in range(2):
            fn(i % sets)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            fn(i % sets)
    # Replays until clocks are up, then the timed ones.
    global _warmed
    warmup_ms = WARMUP_MS if _warmed else FIRST_WARMUP_MS
    _warmed = True
    warm = torch.cuda.Event(enable_timing=True)
    warm.record()
    while True:
        graph.replay()
        done = torch.cuda.Event(enable_timing=True)
        done.record()
        done.synchronize()
        if warm.elapsed_time(done) >= warmup_ms:
            break
    times = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        graph.replay()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / calls)
    del graph
    return statistics.median(times), min(times), max(times), calls


def build_text(torch, c, gqa, sets):
    dt = getattr(torch, DTYPES[c["kv_dtype"]])
    b, s, h, hkv, d, L = c["batch"], c["seq_len"], c["heads"], c["kv_heads"], c["head_dim"], c["kv_len"]
    window = c.get("window", 0)
    causal = c.get("causal", True)
    mask, is_causal = None, False
    if s > 1 and causal and s == L and not window:
        is_causal = True  # queries and keys aligned: PyTorch's top-left causal mask is the same
    elif s > 1 and (causal or window):  # (a windowed decode attends to a view instead: one_set)
        qpos = torch.arange(L - s, L, device="cuda")[:, None]
        kpos = torch.arange(L, device="cuda")[None, :]
        allowed = torch.ones(s, L, dtype=torch.bool, device="cuda")
        if causal:
            allowed &= kpos <= qpos
        if window:
            allowed &= kpos > qpos - window
        mask = allowed
    note = "enable_gqa" if gqa else "repeat_interleave"
    kwargs = {"attn_mask": mask, "is_causal": is_causal, "scale": c.get("scale")}
    if h != hkv and gqa:
        kwargs["enable_gqa"] = True

    def one_set():
        q = torch.randn(b, h, s, d, device="cuda", dtype=dt)
        k = torch.randn(b, hkv, L, d, device="cuda", dtype=dt)
        v = torch.randn(b, hkv, L, d, device="cuda", dtype=dt)
        if s == 1 and window and window < L:  # the query at position L-1 sees the last `window` keys
            k, v = k[:, :, L - window:], v[:, :, L - window:]
        if h != hkv and not gqa:
            k, v = k.repeat_interleave(h // hkv, dim=1), v.repeat_interleave(h // hkv, dim=1)
        return q, k, v

    tensors = [one_set() for _ in range(sets)]
    scores = b * h * s * tensors[0][1].shape[2]
    return tensors, kwargs, scores, (note if h != hkv else "none")


def build_vision(torch, c, sets):
    dt = getattr(torch, DTYPES[c["dtype"]])
    p, h, d = c["patches"], c["heads"], c["head_dim"]
    tensors = [tuple(torch.randn(1, h, p, d, device="cuda", dtype=dt) for _ in range(3)) for _ in range(sets)]
    return tensors, {"scale": c.get("scale")}, h * p * p, "none"


def time_case(torch, F, c, runs, gqa, input_sets=None):
    family = c.get("family", "text")
    sets = max(1, int(input_sets or c.get("input_sets", 1)))
    row = {"case": c["case"], "family": family, "peer": "torch_sdpa", "torch": torch.__version__,
           "device": torch.cuda.get_device_name(), "key": list(suite.peer_key(c)), "input_sets": sets}
    if family == "text" and c.get("softcap", 0):
        return {**row, "status": "skipped", "reason": "softcap has no SDPA equivalent"}
    if family not in ("text", "vision"):
        return {**row, "status": "skipped", "reason": f"no SDPA equivalent of the {family} case"}
    if family == "text" and c["kv_dtype"] not in DTYPES:
        return {**row, "status": "skipped",
                "reason": f"no SDPA equivalent of {c['kv_dtype']} K/V (compare with the f16 case of the shape)"}
    if family == "text":
        if c.get("layout") in ("paged", "tiered"):
            row["layout_note"] = f"{c['layout']} case timed on the equivalent contiguous cache"
        row["dtype"] = c["kv_dtype"]
        tensors, kwargs, scores, row["gqa"] = build_text(torch, c, gqa, sets)
    else:
        row["dtype"] = c["dtype"]
        tensors, kwargs, scores, row["gqa"] = build_vision(torch, c, sets)
    results = {}
    for name, backend in backends(torch):
        if name == "math" and scores > MATH_MAX_SCORES:
            results[name] = "not tried: too many score elements for the math backend"
            continue
        try:
            from torch.nn.attention import sdpa_kernel
            with sdpa_kernel([backend]):
                ms = graph_ms(torch, lambda i: F.scaled_dot_product_attention(*tensors[i], **kwargs), runs, sets)
            results[name] = {"ms": ms[0], "min_ms": ms[1], "max_ms": ms[2], "calls_per_graph": ms[3]}
        except torch.cuda.OutOfMemoryError:
            raise
        except (RuntimeError, ValueError, NotImplementedError) as e:  # the backend does not take this shape, dtype or mask
            results[name] = f"unsupported: {(str(e).splitlines() or [type(e).__name__])[0][:160]}"
            torch.cuda.synchronize()
    del tensors
    timed = {n: r for n, r in results.items() if isinstance(r, dict)}
    row["backends"] = results
    if not timed:
        return {**row, "status": "skipped", "reason": "no SDPA backend ran this case"}
    best = min(timed, key=lambda n: timed[n]["ms"])
    return {**row, "status": "ok", "backend": best, **timed[best], "runs": runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", help="suite files or `vkattn bench --json` outputs")
    ap.add_argument("--runs", type=int, default=20, help="timed graph replays per backend (median)")
    ap.add_argument("--filter", default="", help="only cases whose name contains this text")
    ap.add_argument("--input-sets", type=int, default=0,
                    help="input sets to rotate among for every case (default: each row's input_sets, else 1)")
    ap.add_argument("--out", help="write JSON lines here (default: stdout)")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    cases, seen = [], set()
    for path in args.inputs:
        for c in suite.load(path):
            if c.get("status") == "skipped" or args.filter not in c["case"]:
                continue  # vkattn skipped it (too large for the device, ...): nothing to compare
            key = suite.peer_key(c)
            if key not in seen:
                seen.add(key)
                cases.append(c)
    gqa = has_enable_gqa(torch, F)
    out = open(args.out, "w") if args.out else sys.stdout
    for i, c in enumerate(cases):
        print(f"[{i + 1}/{len(cases)}] case {c['case']}", file=sys.stderr, flush=True)
        try:
            row = time_case(torch, F, c, args.runs, gqa, args.input_sets)
        except torch.cuda.OutOfMemoryError as e:
            row = {"case": c["case"], "key": list(suite.peer_key(c)), "status": "skipped",
                   "reason": f"out of memory: {str(e).splitlines()[0][:160]}"}
        torch.cuda.empty_cache()
        print(json.dumps(row), file=out, flush=True)
    if args.out:
        out.close()


if __name__ == "__main__":
    main()
