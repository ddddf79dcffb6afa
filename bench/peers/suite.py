"""Benchmark suites and vkattn's bench output, read the way `vkattn bench` reads them.

A suite file (bench/suites/*.json) lists single cases and grids whose axes
expand as a product; src/check/bench_suite.cpp is the reference and
tests/bench_py_test.py checks that both expand the same file to the same cases.
Only the standard library is used, so the GPU machine needs nothing installed.
"""
import itertools
import json

TEXT_DEFAULTS = {"batch": 1, "seq_len": 1, "layout": "contiguous", "window": 0, "causal": True,
                 "softcap": 0.0, "q_dtype": "f16"}
VISION_DEFAULTS = {"dtype": "f16", "layout": "phd"}
AUDIO_DEFAULTS = {"dtype": "f16", "chunk": 12, "max_past": 12, "max_future": 0}
BDPA_DEFAULTS = {"batch": 1, "seq_len": 1, "window": 0, "causal": True, "q_dtype": "f16", "basis_dtype": "f16",
                 "vocab": 11}
FAMILY_FIELDS = {
    "text": {"batch", "seq_len", "heads", "kv_heads", "head_dim", "kv_len", "layout", "page_size", "window",
             "causal", "softcap", "scale", "q_dtype", "kv_dtype", "out_dtype", "recorded_at", "hot_window",
             "cold_layout"},
    "vision": {"patches", "heads", "head_dim", "layout", "scale", "dtype"},
    "audio": {"frames", "heads", "head_dim", "chunk", "max_past", "max_future", "logit_cap", "dtype"},
    "bdpa": {"batch", "seq_len", "heads", "kv_heads", "head_dim", "kv_len", "window", "causal", "q_dtype",
             "out_dtype", "basis_dtype", "rotary_dim", "vocab"},
    "probe": {"probe", "bytes", "workgroups", "iterations"},
}
COMMON_FIELDS = {"family", "name", "label"}


class SuiteError(ValueError):
    pass


def _fmt_number(x):
    """A float as C++'s fmt prints it with {}: shortest round trip, no trailing .0."""
    r = repr(float(x))
    return r[:-2] if r.endswith(".0") else r


def _decoder_defaults(c):
    """What text and BDPA cases take from their other fields when a suite leaves them out."""
    c.setdefault("kv_heads", c["heads"])
    c.setdefault("kv_len", c["seq_len"])
    c.setdefault("out_dtype", c["q_dtype"])
    return c


def _resolve(fields, own, where):
    family = fields.get("family", "text")
    if family not in FAMILY_FIELDS:
        raise SuiteError(f"{where}.family: expected text, vision, audio, bdpa or probe, got {family!r}")
    for key in own:
        if key not in COMMON_FIELDS and key not in FAMILY_FIELDS[family]:
            raise SuiteError(f"{where}.{key}: does not apply to family {family}")
    allowed = FAMILY_FIELDS[family] | COMMON_FIELDS
    c = {k: v for k, v in fields.items() if k in allowed}
    c["family"] = family
    if family == "text":
        c = _decoder_defaults({**TEXT_DEFAULTS, **c})
        c.setdefault("kv_dtype", c["q_dtype"])
        if c["layout"] == "tiered":
            c.setdefault("hot_window", 256)
            c.setdefault("cold_layout", "paged")
        if slot_layout(c) == "paged":
            c.setdefault("page_size", 16)
        name = text_name(c)
    elif family == "vision":
        c = {**VISION_DEFAULTS, **c}
        name = f"vision P{c['patches']} H{c['heads']} D{c['head_dim']} {c['layout']} {c['dtype']}"
    elif family == "audio":
        c = {**AUDIO_DEFAULTS, **c}
        name = (f"audio T{c['frames']} H{c['heads']} D{c['head_dim']} W{c['chunk']} P{c['max_past']} "
                f"F{c['max_future']} {c['dtype']}")
    elif family == "bdpa":
        c = _decoder_defaults({**BDPA_DEFAULTS, **c})
        c.setdefault("rotary_dim", c["head_dim"])
        name = bdpa_name(c)
    else:
        if c["probe"] == "read_bandwidth":
            name = f"probe read_bandwidth {c.get('bytes', 1 << 30) >> 20} MiB"
        elif c["probe"] == "coopmat_fp16":
            name = f"probe coopmat_fp16 x{c.get('iterations', 4096)}"
        else:
            name = f"probe {c['probe']}"
    label = c.pop("label", "")
    c["case"] = c.pop("name", None) or (f"{label} {name}" if label else name)
    return c


def slot_layout(c):
    """The layout K/V slots are addressed by: a tiered cache's cold tier's."""
    return c["cold_layout"] if c["layout"] == "tiered" else c["layout"]


def text_name(c):
    """The case name vkattn gives a text case (check::text_bench_name)."""
    s = (f"{'decode' if c['seq_len'] == 1 else 'prefill'} B{c['batch']} S{c['seq_len']} "
         f"H{c['heads']}/{c['kv_heads']} D{c['head_dim']} L{c['kv_len']} {c['layout']}")
    if c["layout"] == "tiered":
        s += f" hot{c['hot_window']} cold {c['cold_layout']}"
    if slot_layout(c) == "paged":
        s += f" ps{c['page_size']}"
    s += f" {c['q_dtype']}/{c['kv_dtype']}"
    if c["out_dtype"] != c["q_dtype"]:
        s += f"->{c['out_dtype']}"
    if c["seq_len"] > 1 and not c["causal"]:
        s += " noncausal"
    if c["window"]:
        s += f" w{c['window']}"
    if c["softcap"] > 0:
        s += f" softcap{_fmt_number(c['softcap'])}"
    if "scale" in c:
        s += f" scale{_fmt_number(c['scale'])}"
    if c.get("recorded_at"):
        s += f" recorded@{c['recorded_at']}"
    return s


def bdpa_name(c):
    """The case name vkattn gives a BDPA case (bench_suite.cpp's build_bdpa)."""
    s = (f"bdpa {'decode' if c['seq_len'] == 1 else 'prefill'} B{c['batch']} S{c['seq_len']} "
         f"H{c['heads']}/{c['kv_heads']} D{c['head_dim']} L{c['kv_len']} {c['q_dtype']}/{c['basis_dtype']}")
    if c["out_dtype"] != c["q_dtype"]:
        s += f"->{c['out_dtype']}"
    s += f" rope{c['rotary_dim']} vocab{c['vocab']}"
    if c["seq_len"] > 1 and not c["causal"]:
        s += " noncausal"
    if c["window"]:
        s += f" w{c['window']}"
    return s


def expand(doc):
    """The cases of a parsed suite, in vkattn's order: grids (axes in file order, last fastest), then cases."""
    defaults = doc.get("defaults", {})
    raw = []
    for g, grid in enumerate(doc.get("grids", [])):
        fields = grid.get("fields", {})
        axes = []
        for name, values in grid["axes"].items():
            axes.append([v if isinstance(v, dict) else {name: v} for v in values])
        for n, combo in enumerate(itertools.product(*axes)):
            merged, own = dict(defaults), list(fields)
            merged.update(fields)
            for v in combo:
                merged.update(v)
                own += list(v)
            raw.append((merged, own, f"grids[{g}] case #{n}"))
    for i, case in enumerate(doc.get("cases", [])):
        raw.append(({**defaults, **case}, list(case), f"cases[{i}]"))
    out, seen = [], {}
    for fields, own, where in raw:
        c = _resolve(fields, own, where)
        if c["case"] in seen:
            raise SuiteError(f"{where}: duplicate case name {c['case']!r} (also {seen[c['case']]})")
        seen[c["case"]] = where
        out.append(c)
    return out


def is_suite(doc):
    return isinstance(doc, dict) and ("grids" in doc or "cases" in doc) and "status" not in doc


def load(path):
    """Cases from a suite file, or the case rows of `vkattn bench --json` output (summary rows dropped)."""
    with open(path) as f:
        text = f.read()
    try:
        doc = json.loads(text)
        if is_suite(doc):
            return expand(doc)
    except json.JSONDecodeError:
        pass
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            row = json.loads(line)
            if not row.get("summary"):
                rows.append(row)
    return rows


def _scale(c):
    s = c.get("scale")
    return float(f"{(s if s is not None else c['head_dim'] ** -0.5):.6g}")


def peer_key(c):
    """What makes two cases the same work for a peer: the shape, not the KV layout or page size
    (a peer times paged cases on the equivalent contiguous cache), nor Q's dtype (the peer
    stores Q, K and V in the KV dtype)."""
    family = c.get("family", "text")
    if family == "text":
        return ("text", c["batch"], c["seq_len"], c["heads"], c["kv_heads"], c["head_dim"], c["kv_len"],
                c.get("window", 0), bool(c.get("causal", True)) and c["seq_len"] > 1, float(c.get("softcap", 0.0)),
                _scale(c), c["kv_dtype"])
    if family == "vision":
        return ("vision", c["patches"], c["heads"], c["head_dim"], _scale(c), c["dtype"])
    return (family, c["case"])
