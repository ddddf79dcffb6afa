#!/usr/bin/env python3
"""Peer timings for `vkattn bench --json`: PyTorch's scaled_dot_product_attention
(FlashAttention-2 / cuDNN / efficient backends, whichever PyTorch picks) on the
same shapes and GPU, then the ratio peer_ms / vkattn_ms per case (> 1: vkattn
is faster).

usage (on the GPU machine):
  build/vkattn bench --json > vk.jsonl
  python3 bench/peers/torch_sdpa.py vk.jsonl [--runs 50]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def time_ms(fn, runs):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def peer_case(c, runs):
    b, s, h, hkv, d, L = c["batch"], c["seq_len"], c["heads"], c["kv_heads"], c["head_dim"], c["kv_len"]
    # PyTorch wants one dtype for Q, K and V: the KV dtype (f16) for all.
    dt = torch.float16 if c["kv_dtype"] == "f16" else torch.float32
    q = torch.randn(b, h, s, d, device="cuda", dtype=dt)
    k = torch.randn(b, hkv, L, d, device="cuda", dtype=dt)
    v = torch.randn(b, hkv, L, d, device="cuda", dtype=dt)
    # Decode (S=1, last position) sees every key; prefill with S == L is causal
    # with aligned corners, which is what PyTorch's is_causal means.
    causal = c["causal"] and s == L
    fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=(h != hkv))
    return time_ms(fn, runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vk_jsonl")
    ap.add_argument("--runs", type=int, default=50)
    args = ap.parse_args()
    cases = [json.loads(line) for line in open(args.vk_jsonl) if line.startswith("{")]
    print(f"peer: torch {torch.__version__} scaled_dot_product_attention on {torch.cuda.get_device_name()}")
    print(f"{'case':<52} {'vkattn ms':>10} {'torch ms':>10} {'torch/vkattn':>13}")
    for c in cases:
        if c.get("error"):
            continue
        peer = peer_case(c, args.runs)
        print(f"{c['case']:<52} {c['ms']:>10.4f} {peer:>10.4f} {peer / c['ms']:>13.2f}")


if __name__ == "__main__":
    main()
