#!/usr/bin/env python3
"""The pure parts of the benchmark scripts (run by ctest when python3 is there):
suite expansion agrees with vkattn's own (names and shapes of every shipped
suite, through `vkattn bench --dry-run --json`), peer keys join the layouts of
one shape, join.py's ratio table on a fixture, and compare.py's table of
builds (on a fixture, and through ab.sh on the binary).

usage: bench_py_test.py VKATTN_BINARY
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
import join  # noqa: E402
import suite  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
import compare  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures")
VKATTN = None
SHAPE_FIELDS = ("family", "batch", "seq_len", "heads", "kv_heads", "head_dim", "kv_len", "layout", "page_size",
                "window", "causal", "q_dtype", "kv_dtype", "out_dtype", "patches", "frames", "dtype", "probe",
                "basis_dtype", "rotary_dim", "vocab")


class SuiteExpansion(unittest.TestCase):
    def test_every_shipped_suite_expands_as_vkattn_does(self):
        suites = sorted(f for f in os.listdir(os.path.join(ROOT, "bench", "suites")) if f.endswith(".json"))
        self.assertIn("decode.json", suites)
        for name in suites:
            path = os.path.join(ROOT, "bench", "suites", name)
            mine = suite.load(path)
            out = subprocess.run([VKATTN, "bench", "--suite", path, "--dry-run", "--json"], capture_output=True,
                                 text=True, check=True).stdout
            theirs = [json.loads(l) for l in out.splitlines() if l.startswith("{") and '"summary"' not in l]
            self.assertEqual([c["case"] for c in mine], [c["case"] for c in theirs], name)
            for m, t in zip(mine, theirs):
                for f in SHAPE_FIELDS:
                    if f in t:
                        self.assertEqual(m.get(f), t[f], f"{name}: {t['case']}: {f}")

    def test_grid_product_and_errors(self):
        doc = {"defaults": {"heads": 8, "head_dim": 64},
               "grids": [{"axes": {"batch": [1, 2], "l": [{"layout": "contiguous"},
                                                           {"layout": "paged", "page_size": 32}]}}]}
        names = [c["case"] for c in suite.expand(doc)]
        self.assertEqual(names, ["decode B1 S1 H8/8 D64 L1 contiguous f16/f16",
                                 "decode B1 S1 H8/8 D64 L1 paged ps32 f16/f16",
                                 "decode B2 S1 H8/8 D64 L1 contiguous f16/f16",
                                 "decode B2 S1 H8/8 D64 L1 paged ps32 f16/f16"])
        with self.assertRaisesRegex(suite.SuiteError, r"cases\[0\].patches: does not apply to family text"):
            suite.expand({"cases": [{"heads": 1, "head_dim": 8, "patches": 3}]})
        with self.assertRaisesRegex(suite.SuiteError, "duplicate case name"):
            suite.expand({"cases": [{"heads": 1, "head_dim": 8}, {"heads": 1, "head_dim": 8}]})

    def test_peer_key_joins_layouts_and_query_dtypes(self):
        rows = suite.load(os.path.join(FIXTURES, "bench_vk.jsonl"))
        self.assertEqual(len(rows), 6)  # the summary row is dropped
        self.assertEqual(suite.peer_key(rows[0]), suite.peer_key(rows[1]))  # contiguous and paged
        self.assertNotEqual(suite.peer_key(rows[0]), suite.peer_key(rows[3]))
        f32q = dict(rows[0], q_dtype="f32")
        self.assertEqual(suite.peer_key(f32q), suite.peer_key(rows[0]))


class Join(unittest.TestCase):
    def test_ratio_table(self):
        vk = suite.load(os.path.join(FIXTURES, "bench_vk.jsonl"))
        peers = suite.load(os.path.join(FIXTURES, "bench_peer.jsonl"))
        rows = join.join(vk, peers)
        self.assertEqual(len(rows), 5)  # probes are not compared
        by_case = {r["case"]: r for r in rows}
        self.assertAlmostEqual(by_case["decode B1 S1 H32/8 D128 L4096 contiguous f16/f16"]["ratio"], 0.5)
        self.assertAlmostEqual(by_case["decode B1 S1 H32/8 D128 L4096 paged ps16 f16/f16"]["ratio"], 0.25)
        self.assertAlmostEqual(by_case["prefill B1 S2048 H32/8 D128 L2048 contiguous f16/f16"]["ratio"], 0.25)
        self.assertAlmostEqual(by_case["vision P2304 H12 D64 phd f16"]["ratio"], 0.5)
        md = join.markdown(rows)
        self.assertIn("### decode", md)
        self.assertIn("| decode B1 S1 H32/8 D128 L4096 contiguous f16/f16 | decode_a | 0.0200 | 1680 (37.5%) | "
                      "0.0100 (cudnn) | 0.50 |", md)
        self.assertIn("| decode B64 S1 H32/32 D256 L131072 contiguous f16/f16 | skipped: K (and V) is 128.00 GiB", md)
        self.assertIn("decode: geometric mean of peer / vkattn over 2 cases: 0.35", md)
        self.assertIn("| prefill B1 S2048 H32/8 D128 L2048 contiguous f16/f16 | prefill_b | 1.0000 | 51.5 (13.2%) | "
                      "0.2500 (flash) | 0.25 |", md)
        self.assertIn("### vision", md)
        # A peer that replayed other input sets than vkattn rotated is named in the notes.
        self.assertIn("peer rotated 1 input sets where vkattn rotated 8", by_case[
            "decode B1 S1 H32/8 D128 L4096 contiguous f16/f16"]["peer_note"])
        self.assertNotIn("input sets", by_case["decode B1 S1 H32/8 D128 L4096 paged ps16 f16/f16"]["peer_note"])

    def test_decode_summary_per_kv_dtype_and_read_aim(self):
        def pair(case, kv, kv_len, share, size, peer_ms):
            vk = {"case": case, "family": "text", "status": "ok", "variant": "v", "ms": 1.0, "batch": 1,
                  "seq_len": 1, "heads": 8, "kv_heads": 1, "head_dim": 128, "kv_len": kv_len, "kv_dtype": kv,
                  "bytes": size, "bw_share": share}
            return vk, {"key": list(suite.peer_key(vk)), "status": "ok", "ms": peer_ms}
        big, small = join.DECODE_AIM_BYTES, join.DECODE_AIM_BYTES - 1
        pairs = [pair("a f16", "f16", 1, 0.90, big, 0.5), pair("b f16", "f16", 2, 0.80, big, 2.0),
                 pair("c f32", "f32", 3, 0.50, small, 8.0)]
        md = join.markdown(join.join([p[0] for p in pairs], [p[1] for p in pairs]))
        self.assertIn("decode, f16 K/V: geometric mean of peer / vkattn over 2 cases: 1.00", md)
        self.assertIn("decode, f32 K/V: geometric mean of peer / vkattn over 1 cases: 8.00", md)
        # Only the cases at or past the aim's bytes count; the one below its share is named.
        self.assertIn("decode reading 256 MiB or more: 1 of 2 cases at 85% of the read ceiling or above", md)
        self.assertIn("- below: b f16 (80.0%)", md)
        self.assertNotIn("- below: c f32", md)


class Compare(unittest.TestCase):
    def write_rows(self, rows, name):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))
        return path

    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_rounds_mean_and_speedup(self):
        vk = suite.load(os.path.join(FIXTURES, "bench_vk.jsonl"))
        decode = "decode B1 S1 H32/8 D128 L4096 contiguous f16/f16"
        faster = [dict(r, ms=r["ms"] / 2, variant="decode_b") if r["case"] == decode else r for r in vk]
        slower = [dict(r, ms=r["ms"] / 4) if r["case"] == decode else r for r in vk]
        inputs = [("base", self.write_rows(vk, "b1.jsonl")), ("new", self.write_rows(faster, "n1.jsonl")),
                  ("base", self.write_rows(vk, "b2.jsonl")), ("new", self.write_rows(slower, "n2.jsonl"))]
        labels, cases, rows = compare.collect(inputs)
        self.assertEqual(labels, ["base", "new"])
        self.assertNotIn("probe", " ".join(cases))  # probes are not compared
        md = compare.markdown(labels, cases, rows)
        # new: rounds 0.01 and 0.005, mean 0.0075; base 0.02: 2.667x
        self.assertIn(f"| {decode} | decode_a / decode_b | 0.0200 (0.0200, 0.0200) | 0.0075 (0.0100, 0.0050) | 2.667 |",
                      md)
        self.assertIn("| decode B64 S1 H32/32 D256 L131072 contiguous f16/f16 | - | skipped: K (and V) is", md)
        self.assertIn("base / new: geometric mean over 4 cases:", md)
        with self.assertRaises(SystemExit):
            compare.parse_inputs(["no-label.jsonl"])

    def test_ab_script_alternates_two_builds(self):
        out = os.path.join(self.dir, "ab")
        r = subprocess.run([os.path.join(ROOT, "bench", "ab.sh"), VKATTN, VKATTN, out, "--", "--suite", "smoke",
                            "--filter", "decode B2 S1 H8/2 D64 L200 contiguous", "--runs", "2",
                            "--max-run-ms", "1e9"],  # a loaded machine must not turn the case into a skip
                           capture_output=True, text=True, env=dict(os.environ, ROUNDS="2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["base-1.jsonl", "base-1.log", "base-2.jsonl", "base-2.log",
                                                   "compare.md", "new-1.jsonl", "new-1.log", "new-2.jsonl",
                                                   "new-2.log"])
        self.assertRegex(r.stdout, r"\| decode B2 S1 H8/2 D64 L200 contiguous f16/f16 \| \S+ \| [0-9.]+ \([0-9.]+, "
                                   r"[0-9.]+\) \| [0-9.]+ \([0-9.]+, [0-9.]+\) \| [0-9.]+ \|")
        self.assertIn("base / new: geometric mean over 1 cases:", r.stdout)


if __name__ == "__main__":
    VKATTN = sys.argv.pop(1)
    unittest.main()
