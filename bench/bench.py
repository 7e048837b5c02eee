#!/usr/bin/env python3
"""convcat against cuDNN, on the same tensors, in one process.

Usage (on the GPU machine, from the repository root):
    python3 bench/bench.py PROBLEMS.txt [--dtypes bf16,fp16] [--ops fprop] [--all-ops]
                           [--lib build/runtime/libconvcat.so] [--catalog build/catalog/convcat.catalog]
                           [--max-candidates N] [--json OUT.json]
    python3 bench/bench.py PROBLEMS.txt --selftest      # CPU only: no torch, no GPU

PROBLEMS.txt has the format of bench/layers.txt: a header line of column names (name op N D H W C
K T R S pad_d pad_h pad_w stride_d stride_h stride_w dil_d dil_h dil_w groups), then a problem a
line; the optional columns pad_d_hi pad_h_hi pad_w_hi give asymmetric padding.

What it does, per problem row and data type:
  1. makes the tensors once with PyTorch, random data, stored channel-innermost as convcat wants
     (x: N,D,H,W,C; w: K,T,R,S,C; y: N,Z,P,Q,K); PyTorch sees them through permuted views, which
     are channels_last / channels_last_3d for 2D/3D (for 1D, cuDNN gets contiguous N,C,W copies,
     its fastest layout);
  2. times cuDNN through torch.nn.functional.conv{1,2,3}d (or aten.convolution_backward for
     dgrad/wgrad) with cudnn.benchmark on: the kernel time (median_ms: 20 samples of 10
     back-to-back calls between CUDA events, the stream held by a GPU sleep while the host
     enqueues them, after 10 warm-ups), and one call between two events (call_ms, median of 50:
     the host's cost of the call included); its output is the reference;
  3. asks libconvcat (through the convcat package, python/convcat) for every kernel that can run
     the problem, ranked by its heuristic; for each one: plan, run once into an output poisoned
     with NaN, compare with the reference (||a-b|| / ||b|| in float64, FAIL above 2e-2), then time
     it the same way as cuDNN (the heuristic's pick both ways).
     convcat's tensors are in forward terms (convcat.h): fprop reads x, w and writes y; dgrad reads
     y = dy, w and writes x = dx; wgrad reads y = dy, x and writes w = dw.  Each plan's workspace
     (convcat_plan_info's workspace_bytes, e.g. wgrad's split-K partials) is allocated and passed;
     convcat_autotune gets the largest of the candidates';
  4. reports cuDNN, the heuristic's pick (the first ranked kernel, what CONVCAT_AUTO takes), the
     fastest correct kernel, and their ratios; the bf16 8192^3 torch.matmul rate measured at the
     start is the "peak" each row is compared with.
TFLOP/s = 2*M*N*K / median kernel time.  Exit status 1 if any check failed.

--selftest checks the package's ctypes mirror of convcat.h against the header (convcat.abicheck,
with gcc), opens the catalog and ranks the kernels for every row (convcat_query runs without a GPU).

The package is imported from the repository's python/ directory (no installation needed).
"""
import argparse
import json
import math
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import convcat  # noqa: E402
from convcat import abicheck  # noqa: E402

TOLERANCE = 2e-2
DEVICE = "cuda"
DTYPES = ("bf16", "fp16", "fp32")
OPS = ("fprop", "dgrad", "wgrad")

# ---------------------------------------------------------------------------
# Problem files


def load(path):
    """Rows of a problem file as dicts; pad_X_hi defaults to pad_X."""
    rows = []
    with open(path) as fh:
        cols = fh.readline().split()
        for line in fh:
            if not line.strip() or line.startswith("#"):
                continue
            v = dict(zip(cols, line.split()))
            r = {k: (v[k] if k in ("name", "op") else int(v[k])) for k in v}
            for ax in "dhw":
                r.setdefault(f"pad_{ax}_hi", r[f"pad_{ax}"])
            rows.append(r)
    return rows


def out_extent(i, k, lo, hi, s, d):
    return (i + lo + hi - ((k - 1) * d + 1)) // s + 1


def geometry(r):
    """The row's spatial axes (3D, 2D or 1D as convcat's kernels expect) and their extents."""
    is3d = r["D"] > 1 or r["T"] > 1
    is1d = not is3d and r["H"] == 1 and r["R"] == 1
    axes = "dhw" if is3d else ("w" if is1d else "hw")
    ext = {"d": ("D", "T"), "h": ("H", "R"), "w": ("W", "S")}
    g = dict(axes=axes, dims=len(axes),
             sp_in=[r[ext[a][0]] for a in axes], flt=[r[ext[a][1]] for a in axes],
             pad_lo=[r[f"pad_{a}"] for a in axes], pad_hi=[r[f"pad_{a}_hi"] for a in axes],
             stride=[r[f"stride_{a}"] for a in axes], dil=[r[f"dil_{a}"] for a in axes])
    g["sp_out"] = [out_extent(*v) for v in zip(g["sp_in"], g["flt"], g["pad_lo"], g["pad_hi"], g["stride"], g["dil"])]
    g["flops"] = 2.0 * r["N"] * math.prod(g["sp_out"]) * r["K"] * (r["C"] // r["groups"]) * math.prod(g["flt"])
    return g


# ---------------------------------------------------------------------------
# convcat: the package in python/convcat (the repository's binding of convcat.h)

# The package's names for bench's data types: fp32 is tf32 x tf32 -> f32 (convcat.make_problem).
CONVCAT_DTYPE = {"fp16": "f16", "bf16": "bf16", "fp32": "tf32"}


def open_convcat(lib_path, catalog_path):
    """The library at lib_path and the catalog at catalog_path, both opened as given (no search)."""
    return convcat.open_catalog(catalog_path, convcat.load_library(lib_path))


def has_kernels(cat, op, dtype):
    """Does the catalog hold any kernel of this op and input type (of any arch and dims)?"""
    a_type = CONVCAT_DTYPE[dtype]
    return any(e.op == op and e.a_type == a_type for e in cat.entries)


def problem(cat, r, op, dtype):
    """The row as a convcat_problem: axes absent from a 1D/2D problem stay 1 (padding 0)."""
    g = geometry(r)
    ext = dict(d=1, h=1, w=1, t=1, r=1, s=1)
    pad_lo, pad_hi, stride, dil = [0] * 3, [0] * 3, [1] * 3, [1] * 3
    for j, a in enumerate(g["axes"]):
        i = "dhw".index(a)   # convcat's arrays are in D, H, W order
        ext[a], ext["trs"[i]] = g["sp_in"][j], g["flt"][j]
        pad_lo[i], pad_hi[i] = g["pad_lo"][j], g["pad_hi"][j]
        stride[i], dil[i] = g["stride"][j], g["dil"][j]
    return convcat.make_problem(cat.lib, op=op, dims=g["dims"], n=r["N"], c=r["C"], k=r["K"], groups=r["groups"],
                                pad_lo=pad_lo, pad_hi=pad_hi, stride=stride, dilation=dil,
                                dtype=CONVCAT_DTYPE[dtype], **ext)


# ---------------------------------------------------------------------------
# Timing

BATCH = 10                  # launches per timed sample
SLEEP_CYCLES = 2_000_000    # ~1 ms of GPU sleep ahead of each sample (torch.cuda._sleep)


def timed_ms(fn, iters, warm, batch, sleep):
    """The median over `iters` samples of `batch` launches of fn between two CUDA events, per
    launch, after `warm` launches; `sleep`: hold the stream with a GPU sleep while the host
    enqueues each sample."""
    import torch
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if sleep:
            torch.cuda._sleep(SLEEP_CYCLES)
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / batch)
    ts.sort()
    return ts[len(ts) // 2]


def median_ms(fn, iters=20, warm=10):
    """Kernel time: 10 back-to-back launches a sample, the stream held by a GPU sleep while the
    host enqueues them, so the host's cost of a call (cuDNN through PyTorch: 16-40 us, several
    times convcat's) stays out; call_ms keeps it in."""
    return timed_ms(fn, iters, warm, BATCH, True)


def call_ms(fn, iters=50, warm=10):
    """One call between two events, the median of `iters`: the kernel
    plus whatever of the host's cost of the call the idle GPU waits for."""
    return timed_ms(fn, iters, warm, 1, False)


def gemm_peak_tflops(n=8192):
    import torch
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = median_ms(lambda: torch.matmul(a, b))
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e12


def copy_tbs(nbytes=2 << 30):
    """Device-to-device copy rate, bytes read + written per second (TB/s): the DRAM bound."""
    import torch
    a = torch.empty(nbytes // 2, device="cuda", dtype=torch.uint8).random_()
    b = torch.empty_like(a)
    ms = median_ms(lambda: b.copy_(a), iters=5, warm=3)
    return 2.0 * a.numel() / (ms * 1e-3) / 1e12


# ---------------------------------------------------------------------------
# Tensors and cuDNN


def to_torch(t):
    """Channel-innermost storage (N,*spatial,C) -> PyTorch's (N,C,*spatial) view of the same memory."""
    nd = t.dim() - 2
    return t.permute(0, nd + 1, *range(1, nd + 1))


def to_storage(t):
    """PyTorch's (N,C,*spatial) -> (N,*spatial,C), a view."""
    nd = t.dim() - 2
    return t.permute(0, *range(2, nd + 2), 1)


class Case:
    """One row, op and dtype: the tensors (made once), cuDNN's call and its output as the reference."""

    def __init__(self, r, op, dtype, g, timed=True):
        import torch
        F = torch.nn.functional
        dev, N, C, K, grp = DEVICE, r["N"], r["C"], r["K"], r["groups"]
        self.op, self.g = op, g
        # Storage is channel-innermost; x ~ N(0, 1), w ~ N(0, 0.05^2).
        self.x = torch.randn(N, *g["sp_in"], C, device=dev, dtype=dtype)
        self.w = torch.randn(K, *g["flt"], C // grp, device=dev, dtype=dtype) * 0.05
        self.y = torch.randn(N, *g["sp_out"], K, device=dev, dtype=dtype) if op != "fprop" else None   # dy
        x_t, w_t = to_torch(self.x), to_torch(self.w)
        if g["dims"] > 1:
            fmt = torch.channels_last_3d if g["dims"] == 3 else torch.channels_last
            assert x_t.is_contiguous(memory_format=fmt) and w_t.is_contiguous(memory_format=fmt)
        else:
            # 1D: cuDNN is fastest on PyTorch's contiguous N,C,W; give it copies in that layout,
            # made once, outside the timing.
            x_t, w_t = x_t.contiguous(), w_t.contiguous()
        # PyTorch has no asymmetric padding: pad x once, outside the timing, and convolve unpadded.
        self.prepadded = g["pad_lo"] != g["pad_hi"]
        pad = g["pad_lo"]
        if self.prepadded:
            pairs = [v for lo_hi in zip(reversed(g["pad_lo"]), reversed(g["pad_hi"])) for v in lo_hi]
            x_t = to_torch(to_storage(F.pad(x_t, pairs)).contiguous())
            pad = [0] * g["dims"]
        conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[g["dims"]]
        st, dil, nd = g["stride"], g["dil"], g["dims"]
        if op == "fprop":
            self.fn = lambda: conv(x_t, w_t, None, st, pad, dil, grp)
        else:
            mask = [op == "dgrad", op == "wgrad", False]
            y_t = to_torch(self.y) if g["dims"] > 1 else to_torch(self.y).contiguous()
            self.fn = lambda: torch.ops.aten.convolution_backward(
                y_t, x_t, w_t, None, st, pad, dil, False, [0] * nd, grp, mask)
        self.cudnn_ms = median_ms(self.fn) if timed else None
        self.cudnn_call_ms = call_ms(self.fn) if timed else None
        self.ref = self.reference()
        # convcat writes a fresh tensor of the output's shape; the other two are the inputs above.
        self.out = torch.empty_like(self.ref, memory_format=torch.contiguous_format)

    def reference(self):
        """cuDNN's result, as a channel-innermost view like convcat's output."""
        r = self.fn()
        if self.op == "fprop":
            return to_storage(r)
        if self.op == "wgrad":
            return to_storage(r[1])
        dx = r[0]
        if self.prepadded:
            for i, (lo, n) in enumerate(zip(self.g["pad_lo"], self.g["sp_in"])):
                dx = dx.narrow(2 + i, lo, n)
        return to_storage(dx)

    def cudnn_output_channels_last(self):
        """Did cuDNN's output come back channel-innermost (a hint of the layout it ran)?"""
        return self.ref.is_contiguous()

    def tensors(self, workspace):
        """convcat's tensors, in forward terms: the op's output is self.out (dgrad: x = dx, wgrad:
        w = dw, fprop: y); its inputs are two of x, w, y = dy; workspace: a uint8 tensor or None."""
        return convcat.make_tensors(
            x=(self.out if self.op == "dgrad" else self.x).data_ptr(),
            w=(self.out if self.op == "wgrad" else self.w).data_ptr(),
            y=(self.out if self.op == "fprop" else self.y).data_ptr(), alpha=1.0, beta=0.0,
            workspace=workspace.data_ptr() if workspace is not None else None,
            workspace_bytes=workspace.numel() if workspace is not None else 0)

    def with_workspace(self, nbytes):
        """tensors() with a fresh workspace of `nbytes` (none for 0), which the case keeps alive until
        its next with_workspace."""
        import torch
        self.workspace = torch.empty(nbytes, device=DEVICE, dtype=torch.uint8) if nbytes else None
        return self.tensors(self.workspace)


def rel_err(a, b):
    import torch
    a, b = a.double(), b.double()
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


# ---------------------------------------------------------------------------
# convcat: every runnable candidate, checked then timed


def run_candidate(cat, case, p, cand, stream, single_call=False, timed=True):
    """Plan, check against cuDNN (output poisoned with NaN first), time. A dict for the JSON."""
    import torch
    res = dict(key=cand.key, index=cand.index, predicted_us=cand.predicted_us)
    try:
        plan = cat.plan(p, cand.index)
    except convcat.ConvcatError as e:   # device limits are only checked here: not a wrong answer
        res["error"] = str(e)
        res["fatal"] = e.status != convcat.CONVCAT_ERR_NO_DEVICE
        return res
    try:
        info = plan.info
        res["workspace_bytes"] = info.workspace_bytes
        t = case.with_workspace(info.workspace_bytes)
        case.out.fill_(float("nan"))
        plan.run(t, stream)
        torch.cuda.synchronize()
        res["rel_err"] = rel_err(case.out, case.ref)
        res["grid"], res["cluster"] = info.grid, info.cluster
        if not timed:
            return res
        res["ms"] = median_ms(lambda: plan.run(t, stream))
        if single_call:
            res["call_ms"] = call_ms(lambda: plan.run(t, stream))
    except convcat.ConvcatError as e:
        res["error"], res["fatal"] = str(e), True
    finally:
        plan.destroy()
    return res


def check_auto_pick(cat, p, first):
    """CONVCAT_AUTO must take the query's first candidate; returns a warning or None."""
    plan = cat.plan(p, convcat.CONVCAT_AUTO)
    try:
        index = plan.info.index
    finally:
        plan.destroy()
    if index != first.index:
        return f"CONVCAT_AUTO took {cat.entries[index].key}, the query ranks {first.key} first"
    return None


def bench_row(cat, r, op, dtype, args, sm_count, torch_dtype):
    """Everything for one row/op/dtype, as a dict for the JSON (status: ok, FAIL, skipped: ...)."""
    import torch
    g = geometry(r)
    row = dict(name=r["name"], op=op, dtype=dtype, dims=g["dims"], gflop=g["flops"] / 1e9)
    if not has_kernels(cat, op, dtype):
        row["status"] = f"skipped: no kernels ({op} {dtype})"
        return row
    p = problem(cat, r, op, dtype)
    assert cat.lib.problem_output(p)[3 - g["dims"]:] == tuple(g["sp_out"]), "convcat and bench disagree on extents"
    assert math.isclose(cat.lib.problem_flops(p), g["flops"]), "convcat and bench disagree on FLOPs"
    q = cat.query(p, "sm90a", sm_count)
    ok = q.runnable
    row["runnable"] = len(ok)
    if not ok:
        row["status"] = f"skipped: no kernel can run it ({q.why_none(p, cat.entries)})"
        return row
    if args.check:   # the heuristic's pick against cuDNN on the same tensors, once, untimed
        case = Case(r, op, torch_dtype, g, timed=False)
        try:
            stream = torch.cuda.current_stream().cuda_stream
            c = run_candidate(cat, case, p, ok[0], stream, timed=False)
            row["candidates"] = [c]
            row["heuristic_key"] = c["key"]
            row["rel_err"] = c.get("rel_err")
            passed = "error" not in c and c["rel_err"] <= TOLERANCE
            row["status"] = "ok" if passed else f"FAIL: {c.get('error') or 'rel. error %.3e' % c['rel_err']}"
        finally:
            del case
            torch.cuda.empty_cache()
        return row
    case = Case(r, op, torch_dtype, g)
    try:
        row["cudnn_ms"], row["cudnn_call_ms"] = case.cudnn_ms, case.cudnn_call_ms
        row["cudnn_prepadded"] = case.prepadded
        row["cudnn_out_channel_innermost"] = case.cudnn_output_channels_last()
        row["auto_warning"] = check_auto_pick(cat, p, ok[0])
        stream = torch.cuda.current_stream().cuda_stream
        limit = args.max_candidates or len(ok)
        row["candidates"] = [run_candidate(cat, case, p, c, stream, i == 0) for i, c in enumerate(ok[:limit])]
        if not args.max_candidates:   # every candidate planned: the largest workspace covers autotune's
            ws_bytes = max((c.get("workspace_bytes", 0) for c in row["candidates"]), default=0)
            entry, _ = cat.autotune(p, case.with_workspace(ws_bytes), stream)   # no tune cache
            row["tuned_key"] = entry.key
        summarize(row, g["flops"])
        pair_heuristic_best(cat, case, p, row, stream)
    finally:
        del case
        torch.cuda.empty_cache()
    return row


def pair_heuristic_best(cat, case, p, row, stream, rounds=5):
    """Heuristic pick against the best kernel, timed again in alternation (`rounds` medians of
    5 samples of 10 launches each, the median of those): each candidate above was timed once, at its own
    moment of the run, and on layers of a few microseconds that drift decided the ratio."""
    row["heuristic_over_best"] = ratio(row.get("heuristic_tflops"), row.get("best_tflops"))
    if row["status"] != "ok" or not row.get("best_key") or row["best_key"] == row.get("heuristic_key"):
        return
    index = {c["key"]: c["index"] for c in row["candidates"]}
    plans = []
    try:
        plans = [cat.plan(p, index[row["heuristic_key"]]), cat.plan(p, index[row["best_key"]])]
        t = case.with_workspace(max(pl.info.workspace_bytes for pl in plans))
        ms = [[], []]
        for _ in range(rounds):
            for i, pl in enumerate(plans):
                ms[i].append(median_ms(lambda: pl.run(t, stream), iters=5, warm=3))
        h, b = (sorted(m)[rounds // 2] for m in ms)
        row["paired_heuristic_ms"], row["paired_best_ms"] = h, b
        row["heuristic_over_best"] = min(1.0, b / h)
    finally:
        for pl in plans:
            pl.destroy()


def tflops(flops, ms):
    return flops / (ms * 1e-3) / 1e12 if ms else None


def summarize(row, flops):
    """Heuristic pick (first candidate), best correct candidate, worst error, status."""
    cands = row["candidates"]
    for c in cands:
        c["tflops"] = tflops(flops, c.get("ms"))
        c["passed"] = "error" not in c and c["rel_err"] <= TOLERANCE   # NaN compares False
    row["cudnn_tflops"] = tflops(flops, row["cudnn_ms"])
    heur = cands[0]
    if heur.get("ms") is not None:
        row["heuristic_key"], row["heuristic_ms"], row["heuristic_tflops"] = heur["key"], heur["ms"], heur["tflops"]
        row["heuristic_call_ms"] = heur.get("call_ms")
    good = [c for c in cands if c["passed"]]
    if good:
        best = min(good, key=lambda c: c["ms"])
        row["best_key"], row["best_ms"], row["best_tflops"] = best["key"], best["ms"], best["tflops"]
    tuned = [c for c in cands if c["key"] == row.get("tuned_key")]
    if tuned and tuned[0].get("ms") is not None:   # the autotune pick, timed with the others
        row["tuned_tflops"] = tuned[0]["tflops"]
    errs = [c["rel_err"] for c in cands if "rel_err" in c]
    row["max_rel_err"] = max(errs, key=lambda e: math.inf if math.isnan(e) else e) if errs else None
    failed = [c for c in cands if not c["passed"] and (c.get("fatal", True))]
    row["status"] = "FAIL" if failed or row["auto_warning"] else "ok"


# ---------------------------------------------------------------------------
# Report


HEAD = (f"{'layer':32s} {'GFLOP':>8s} {'cuDNN':>7s} {'heur':>7s} {'best':>7s} {'best/':>6s} {'heur/':>6s} "
        f"{'best/':>6s} {'max rel':>8s}  best kernel")
HEAD2 = (f"{'':32s} {'':>8s} {'TFLOP/s':>7s} {'TFLOP/s':>7s} {'TFLOP/s':>7s} {'cuDNN':>6s} {'best':>6s} "
         f"{'peak':>6s} {'error':>8s}")


def fmt(v, spec):
    return format(v, spec) if v is not None else "-".rjust(int(spec.split(".")[0]))


def ratio(a, b):
    return a / b if a and b else None


def print_row(row, peak):
    name = row["name"] if row["op"] == "fprop" else f"{row['name']} {row['op']}"
    if row["status"].startswith("skipped"):
        print(f"{name:32s} {row['gflop']:8.1f}  {row['status']}", flush=True)
        return
    if "cudnn_ms" not in row:   # --check: no timing
        err = row.get("rel_err")
        print(f"{name:32s} {row['gflop']:8.1f}  {row['status']:6s} rel. error {err if err is None else '%.2e' % err}  "
              f"{row.get('heuristic_key', '-')}", flush=True)
        return
    b, c, h = row.get("best_tflops"), row["cudnn_tflops"], row.get("heuristic_tflops")
    line = (f"{name:32s} {row['gflop']:8.1f} {fmt(c, '7.1f')} {fmt(h, '7.1f')} {fmt(b, '7.1f')} "
            f"{fmt(ratio(b, c), '6.2f')} {fmt(row.get('heuristic_over_best'), '6.2f')} {fmt(ratio(b, peak), '6.2f')} "
            f"{fmt(row['max_rel_err'], '8.1e')}  {row.get('best_key', '-')}")
    if row["status"] != "ok":
        line += "  FAIL"
    if row["cudnn_prepadded"]:
        line += "  (cuDNN on a pre-padded x)"
    print(line, flush=True)
    for cand in row["candidates"]:
        if "error" in cand or not cand["passed"]:
            print(f"    {cand['key']}: {cand.get('error') or 'rel. error %.3e' % cand['rel_err']}", flush=True)
    if row["auto_warning"]:
        print(f"    {row['auto_warning']}", flush=True)


def geomean(vals):
    vals = [v for v in vals if v]
    return (math.exp(sum(map(math.log, vals)) / len(vals)), len(vals)) if vals else (None, 0)


def print_geomeans(rows):
    done = [r for r in rows if r.get("best_tflops") and r.get("heuristic_tflops")]
    if not done:
        return
    print(f"geomean over {len(done)} rows:")
    for label, f in [("cuDNN TFLOP/s", lambda r: r["cudnn_tflops"]),
                     ("convcat heuristic TFLOP/s", lambda r: r["heuristic_tflops"]),
                     ("convcat best TFLOP/s", lambda r: r["best_tflops"]),
                     ("best / cuDNN", lambda r: r["best_tflops"] / r["cudnn_tflops"]),
                     ("heuristic / cuDNN", lambda r: r["heuristic_tflops"] / r["cudnn_tflops"]),
                     ("heuristic / best (paired)", lambda r: r["heuristic_over_best"])]:
        print(f"  {label:28s} {geomean(f(r) for r in done)[0]:8.3f}")
    calls = [r for r in done if r.get("cudnn_call_ms") and r.get("heuristic_call_ms")]
    if calls:   # one call between two events: the host's cost of a call included
        print(f"  {'single call: cuDNN us':28s} {geomean(r['cudnn_call_ms'] * 1e3 for r in calls)[0]:8.1f}"
              f"  (kernel {geomean(r['cudnn_ms'] * 1e3 for r in calls)[0]:.1f})")
        print(f"  {'single call: heuristic us':28s} {geomean(r['heuristic_call_ms'] * 1e3 for r in calls)[0]:8.1f}"
              f"  (kernel {geomean(r['heuristic_ms'] * 1e3 for r in calls)[0]:.1f})")
        print(f"  {'single call: heur / cuDNN':28s} "
              f"{geomean(r['cudnn_call_ms'] / r['heuristic_call_ms'] for r in calls)[0]:8.3f}  (speed ratio)")
    tuned = [r for r in done if r.get("tuned_tflops")]
    if tuned:
        worst = min(r["tuned_tflops"] / r["best_tflops"] for r in tuned)
        print(f"  {'autotuned / best':28s} {geomean(r['tuned_tflops'] / r['best_tflops'] for r in tuned)[0]:8.3f}"
              f"  (lowest {worst:.3f}; the pick of convcat_autotune, timed with the others)")


# ---------------------------------------------------------------------------
# Main


# Classes of layers (--classes), by their shape alone.
CLASSES = {
    "depthwise": lambda r: r["groups"] > 1 and r["groups"] == r["C"],
    "grouped": lambda r: 1 < r["groups"] < r["C"],
    "stem": lambda r: r["groups"] == 1 and r["C"] <= 4 and r["H"] * r["W"] * r["D"] >= 4096,
    "odd": lambda r: r["groups"] == 1 and (r["C"] % 8 or r["K"] % 8) and not CLASSES["stem"](r),
    "dense": lambda r: r["groups"] == 1 and r["C"] % 8 == 0 and r["K"] % 8 == 0,
    "1x1": lambda r: r["groups"] == 1 and r["T"] * r["R"] * r["S"] == 1,
}


def jobs(rows, args):
    """(row, op) pairs: the row's own op if chosen by --ops, or every --ops op with --all-ops; only
    the rows of --classes if given."""
    ops = args.ops.split(",")
    classes = [CLASSES[c] for c in args.classes.split(",")] if getattr(args, "classes", None) else None
    for r in rows:
        if classes and not any(c(r) for c in classes):
            continue
        for op in (ops if args.all_ops else ([r["op"]] if r["op"] in ops else [])):
            yield r, op


def bench_all(cat, args, peak, sm_count, out):
    """One table per dtype, rows printed as they finish and appended to `out` (the JSON's rows)."""
    import torch
    dts = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    todo = [j for path in args.problems.split(",") for j in jobs(load(path), args)]
    for dtype in args.dtypes.split(","):
        print(f"\n## {dtype}\n{HEAD}\n{HEAD2}")
        rows = []
        for r, op in todo:
            try:
                row = bench_row(cat, r, op, dtype, args, sm_count, dts[dtype])
            except Exception as e:   # report, go on, exit non-zero at the end
                row = dict(name=r["name"], op=op, dtype=dtype, gflop=geometry(r)["flops"] / 1e9,
                           status=f"FAIL: {type(e).__name__}: {e}".splitlines()[0])
                print(f"{r['name']:32s} {row['status']}", flush=True)
                torch.cuda.empty_cache()
            else:
                print_row(row, peak)
            rows.append(row)
            out.append(row)
        print_geomeans(rows)


def bench(args):
    import torch
    torch.backends.cudnn.benchmark = not args.check
    torch.backends.cudnn.allow_tf32 = True
    torch.cuda.init()
    torch.zeros(1, device="cuda")   # the primary context is now current on this thread
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    cat = open_convcat(args.lib, args.catalog)
    peak = gemm_peak_tflops() if not args.check else 0.0
    copy = copy_tbs() if not args.check else 0.0
    print(f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, "
          f"cudnn {torch.backends.cudnn.version()}; catalog {args.catalog}: {len(cat.entries)} kernels")
    print(f"# bf16 GEMM 8192^3 (torch.matmul): {peak:.1f} TFLOP/s = peak below; device copy {copy:.2f} TB/s")
    # A time limit (timeout's SIGTERM) ends the run as an interrupt: the rows finished so far are
    # still written, marked partial.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    rows, partial = [], False
    try:
        bench_all(cat, args, peak, props.multi_processor_count, rows)
        cat.close()
    except KeyboardInterrupt:
        partial = True
        print(f"\ninterrupted: {len(rows)} row(s) done")
    if args.json:
        out = dict(device=props.name, sm_count=props.multi_processor_count, torch=torch.__version__,
                   cudnn=torch.backends.cudnn.version(), catalog=args.catalog, lib=args.lib,
                   problems=args.problems, gemm_peak_tflops=peak, copy_tbs=copy, tolerance=TOLERANCE, rows=rows,
                   partial=partial)
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    if partial:
        return 2
    failed = sum(r["status"].startswith("FAIL") for r in rows)
    if failed:
        print(f"\n{failed} row(s) FAILED")
    return 1 if failed else 0


# ---------------------------------------------------------------------------
# CPU self-test


def selftest(args):
    print("the package's ctypes mirror against convcat.h:")
    bad = int(abicheck.main([]) == 1)   # 77: no C compiler here, not a failure of the mirror
    try:
        open_convcat(args.lib, "/nonexistent/convcat.catalog")
        bad += 1
        print("opening a missing catalog did not fail")
    except convcat.ConvcatError as e:
        print(f"error path: {e}")
    cat = open_convcat(args.lib, args.catalog)
    print(f"catalog {args.catalog}: {len(cat.entries)} kernels")
    for r, op in jobs(load(args.problems), args):
        for dtype in args.dtypes.split(","):
            name = f"{r['name']} {op} {dtype}"
            if not has_kernels(cat, op, dtype):
                print(f"  {name:40s} skipped: no kernels")
                continue
            p, g = problem(cat, r, op, dtype), geometry(r)
            if (cat.lib.problem_output(p)[3 - g["dims"]:] != tuple(g["sp_out"])
                    or not math.isclose(cat.lib.problem_flops(p), g["flops"])):
                bad += 1
                print(f"  {name}: extents or FLOPs differ between convcat and bench")
            q = cat.query(p, "sm90a", 132)
            ok = q.runnable
            pick = f"{ok[0].key} ({ok[0].predicted_us:.1f} us)" if ok else f"none: {q.why_none(p, cat.entries)}"
            print(f"  {name:40s} {g['dims']}D {g['flops'] / 1e9:8.1f} GFLOP  {len(ok):3d} runnable  pick {pick}")
    try:
        cat.plan(problem(cat, load(args.problems)[0], "fprop", "bf16"), convcat.CONVCAT_AUTO).destroy()
        print("convcat_plan_create: succeeded (a GPU is here)")
    except convcat.ConvcatError as e:
        print(f"convcat_plan_create without a GPU fails as it should: {e}")
    cat.close()
    print("selftest", "FAILED" if bad else "passed")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("problems", help="problem file(s), comma list, e.g. bench/layers.txt")
    ap.add_argument("--dtypes", default="bf16,fp16", help="comma list of bf16, fp16, fp32 (default bf16,fp16)")
    ap.add_argument("--ops", default="fprop", help="comma list of fprop, dgrad, wgrad (default fprop)")
    ap.add_argument("--all-ops", action="store_true", help="every --ops op for every row, not the row's own")
    ap.add_argument("--lib", default="build/runtime/libconvcat.so", help="libconvcat.so to load")
    ap.add_argument("--catalog", default="build/catalog/convcat.catalog", help="catalog file to open")
    ap.add_argument("--max-candidates", type=int, default=0, help="time only the N best-ranked kernels (0: all)")
    ap.add_argument("--json", help="write every row and candidate here")
    ap.add_argument("--selftest", action="store_true", help="CPU-only check of the binding and queries")
    ap.add_argument("--classes", help=f"only rows of these classes ({', '.join(CLASSES)}), comma list")
    ap.add_argument("--check", action="store_true",
                    help="no timing: every row on the heuristic's pick once, checked against cuDNN (coverage runs)")
    args = ap.parse_args()
    for d in args.dtypes.split(","):
        if d not in DTYPES:
            ap.error(f"unknown dtype {d} ({', '.join(DTYPES)})")
    for o in args.ops.split(","):
        if o not in OPS:
            ap.error(f"unknown op {o} ({', '.join(OPS)})")
    for c in (args.classes or "").split(",") if args.classes else []:
        if c not in CLASSES:
            ap.error(f"unknown class {c} ({', '.join(CLASSES)})")
    return selftest(args) if args.selftest else bench(args)


if __name__ == "__main__":
    sys.exit(main())
