#!/usr/bin/env python3
"""GPU tests of convcat.torch: forward, data gradient and weight gradient against torch.nn on every op,
dims (1D/2D/3D) and dtype (f16, bf16, f32 as TF32), odd shapes included; which implementation ran each
pass against what the catalog's query says it should be; layouts and copies, autocast, fused inference,
CUDA graph capture (warm and cold), a non-default stream, torch.compile, pins, autotune with the
tune cache, and report() over a torchvision ResNet.

    CONVCAT_LIBRARY=build/runtime/libconvcat.so CONVCAT_CATALOG=build/catalog/convcat.catalog \\
        PYTHONPATH=python python3 python/tests/gpu_torch.py [--no-compile] [--only NAME]

Exit status: 0 all passed, 1 a check failed, 77 no GPU (or no torch).  Prints a summary table and
"N passed, N failed, N skipped" at the end; with $OUT set writes gpu_torch.txt (this output),
gpu_torch.json (every check) and gpu_torch_report.txt (report() of the ResNet) there.
--cpu-dry-run runs what it can on the CPU (everything falls back there), to check the script itself.

Each numeric check compares convcat's module with a float64 reference (the same inputs, upcast) by
||a - b|| / ||b||, limit 2e-2 (bench.py's), and shows cuDNN's error at the same dtype beside it.  A pass
the catalog's query says convcat runs must have run on convcat; a pass it refuses must have fallen back
with that reason reported.  Each case names the kernel family meant to run it (tma: aligned channels,
groups 1; gather: C = 3 stems, odd channel counts, grouped convolutions; direct: depthwise): a case
the query refuses is a failure only if the catalog has kernels of that family, op, dims and dtype (the
ci catalog lacks most): otherwise SKIP.  The stem, grouped and depthwise cases marked strict must run
on their family (python/tests/test_torch_cpu.py checks on the CPU that the query ranks it first).
"""
import argparse
import copy
import json
import os
import sys
import tempfile
import time
import traceback
import warnings
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))   # python/: the convcat package of this tree

TOL = 2e-2
LINES = []
RESULTS = []


def log(*args):
    s = " ".join(str(a) for a in args)
    LINES.append(s)
    print(s, flush=True)


def result(name, status, detail="", **extra):
    r = dict(name=name, status=status, detail=detail, **extra)
    RESULTS.append(r)
    log(f"  {status:4s} {name}: {detail}")
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile check (~30-60 s)")
    ap.add_argument("--only", action="append", help="run only checks whose name contains this (repeatable)")
    ap.add_argument("--cpu-dry-run", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("gpu_torch: SKIP: torch is not installed")
        return 77
    if not args.cpu_dry_run and not torch.cuda.is_available():
        print("gpu_torch: SKIP: no CUDA GPU (torch.cuda.is_available() is False)")
        return 77
    import convcat.torch as cct
    from convcat.torch import _runtime as rt
    dev = torch.device("cpu" if args.cpu_dry_run else "cuda")
    cat = rt.catalog()
    if cat is None:
        print(f"gpu_torch: FAIL: {rt.catalog_error()}")
        return 1
    arch, sms = ("sm90a", 132) if dev.type == "cpu" else rt.arch_of(dev)
    name = "CPU (dry run)" if dev.type == "cpu" else torch.cuda.get_device_name()
    log(f"# {name}; torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}; library "
        f"{cat.lib.path}; catalog {cat.path} ({len(cat)} kernels); arch {arch}; TF32 allowed {rt.tf32_allowed()}")
    if arch is None:
        log(f"# convcat cannot run on this device ({sms}): every pass must fall back, and that is what is checked")
    if os.environ.get("OUT"):
        os.makedirs(os.environ["OUT"], exist_ok=True)
    T = Tests(torch, cct, rt, cat, dev, arch, sms, args)
    checks = [("numerics", T.numerics), ("layouts", T.layouts), ("autocast", T.autocast), ("fused", T.fused),
              ("stream", T.stream), ("graph_warm", T.graph_warm), ("graph_cold", T.graph_cold),
              ("graph_train", T.graph_train), ("pin", T.pin), ("autotune", T.autotune), ("compile", T.compile),
              ("report", T.report)]
    t0 = time.time()
    for cname, fn in checks:
        if args.only and not any(o in cname for o in args.only):
            continue
        log(f"\n## {cname}")
        t = time.time()
        try:
            fn()
        except Exception as e:   # a check that crashed is a failure; go on with the others
            result(cname, "FAIL", f"{type(e).__name__}: {e}", trace=traceback.format_exc())
            log(traceback.format_exc())
        log(f"   ({time.time() - t:.1f} s)")
    summary(time.time() - t0)
    out = os.environ.get("OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "gpu_torch.json"), "w") as fh:
            json.dump(dict(device=name, torch=torch.__version__, catalog=cat.path, results=RESULTS), fh, indent=1)
        with open(os.path.join(out, "gpu_torch.txt"), "w") as fh:
            fh.write("\n".join(LINES) + "\n")
    return 1 if any(r["status"] == "FAIL" for r in RESULTS) else 0


def summary(seconds):
    log("\n## summary")
    log(f"{'check':52s} {'status':6s} {'convcat err':>11s} {'cuDNN err':>10s}  ran / detail")
    for r in RESULTS:
        err = f"{r['err']:.1e}" if r.get("err") is not None else "-"
        ref = f"{r['cudnn_err']:.1e}" if r.get("cudnn_err") is not None else "-"
        log(f"{r['name'][:52]:52s} {r['status']:6s} {err:>11s} {ref:>10s}  {r.get('ran') or r['detail']}"[:220])
    n = {s: sum(r["status"] == s for r in RESULTS) for s in ("PASS", "FAIL", "SKIP")}
    log(f"({seconds:.0f} s)")
    log(f"{n['PASS']} passed, {n['FAIL']} failed, {n['SKIP']} skipped")


# ---------------------------------------------------------------------------
# The numeric cases: (name, module kwargs, input shape, family, strict).  `family` is the kernel family
# meant to run it; strict: the query ranks it first for every op and dtype, and it must be what ran.

CASES = {
    1: [("1d_k5", dict(in_channels=64, out_channels=64, kernel_size=5, padding=2), (4, 64, 50), "tma", False),
        ("1d_s2", dict(in_channels=48, out_channels=72, kernel_size=3, stride=2, padding=1), (3, 48, 33), "tma", False),
        ("1d_odd_c10", dict(in_channels=10, out_channels=16, kernel_size=3, padding=1), (2, 10, 17), "gather", False)],
    2: [("2d_3x3", dict(in_channels=64, out_channels=128, kernel_size=3, padding=1), (2, 64, 14, 14), "tma", False),
        ("2d_3x3_s2_tails", dict(in_channels=72, out_channels=136, kernel_size=3, stride=2, padding=1), (3, 72, 9, 11),
         "tma", False),
        ("2d_1x1_bias", dict(in_channels=64, out_channels=256, kernel_size=1), (2, 64, 7, 7), "tma", False),
        ("2d_same_even_4x4", dict(in_channels=32, out_channels=64, kernel_size=4, padding="same", bias=False),
         (2, 32, 10, 9), "tma", False),
        ("2d_dil2", dict(in_channels=32, out_channels=32, kernel_size=3, padding=2, dilation=2), (2, 32, 12, 12), "tma",
         False),
        ("2d_reflect", dict(in_channels=32, out_channels=48, kernel_size=3, padding=1, padding_mode="reflect"),
         (1, 32, 8, 8), "tma", False),
        ("2d_odd_c20_k30", dict(in_channels=20, out_channels=30, kernel_size=3, padding=1), (2, 20, 9, 9), "gather",
         False),
        ("2d_grouped_g4", dict(in_channels=64, out_channels=64, kernel_size=3, padding=1, groups=4, bias=False),
         (2, 64, 8, 8), "gather", False),
        ("2d_depthwise_tiny", dict(in_channels=32, out_channels=32, kernel_size=3, padding=1, groups=32), (2, 32, 8, 8),
         "direct", False),
        # C = 3 stem, grouped (32 groups of 4 channels), depthwise (groups == C): strict
        ("2d_stem_c3_7x7_s2", dict(in_channels=3, out_channels=64, kernel_size=7, stride=2, padding=3, bias=False),
         (2, 3, 64, 64), "gather", True),
        ("2d_grouped_g32_c4", dict(in_channels=128, out_channels=128, kernel_size=3, padding=1, groups=32, bias=False),
         (2, 128, 16, 16), "gather", True),
        ("2d_dw_3x3", dict(in_channels=64, out_channels=64, kernel_size=3, padding=1, groups=64), (4, 64, 32, 32),
         "direct", True),
        ("2d_dw_3x3_s2", dict(in_channels=64, out_channels=64, kernel_size=3, stride=2, padding=1, groups=64,
                              bias=False), (4, 64, 32, 32), "direct", True),
        ("2d_dw_7x7", dict(in_channels=64, out_channels=64, kernel_size=7, padding=3, groups=64), (4, 64, 32, 32),
         "direct", True),
        ("2d_dw_7x7_s2", dict(in_channels=64, out_channels=64, kernel_size=7, stride=2, padding=3, groups=64,
                              bias=False), (4, 64, 32, 32), "direct", True)],
    3: [("3d_3x3x3", dict(in_channels=32, out_channels=64, kernel_size=3, padding=1), (1, 32, 5, 6, 7), "tma", False),
        ("3d_1x3x3_s122", dict(in_channels=16, out_channels=32, kernel_size=(1, 3, 3), stride=(1, 2, 2),
                               padding=(0, 1, 1)), (2, 16, 4, 9, 9), "tma", False),
        ("3d_odd_c4", dict(in_channels=4, out_channels=16, kernel_size=3, padding=1), (1, 4, 4, 5, 6), "gather",
         False)],
}


def geometry_of(rt, m, x_shape):
    """convcat.torch's Geometry of module m (an nn.ConvNd) on an input of x_shape, as its forward makes it
    (a padding_mode other than zeros pads the input first)."""
    from convcat.torch.functional import padding_pairs
    dims = len(x_shape) - 2
    pad = (0,) * dims if m.padding_mode != "zeros" else m.padding
    shape = list(x_shape)
    if m.padding_mode != "zeros":
        for i in range(dims):
            shape[2 + i] += 2 * m._reversed_padding_repeated_twice[2 * (dims - 1 - i)]
    lo, hi = padding_pairs(pad, m.kernel_size, m.dilation, m.stride, dims)
    return rt.geometry(dims, shape, m.weight.shape, m.stride, lo, hi, m.dilation, m.groups)


# ---------------------------------------------------------------------------


class Tests:
    def __init__(self, torch, cct, rt, cat, dev, arch, sms, args):
        self.torch, self.cct, self.rt, self.cat, self.dev = torch, cct, rt, cat, dev
        self.arch, self.sms, self.args = arch, sms, args
        self.nn = torch.nn

    # ---- helpers
    def rel(self, a, b):
        torch = self.torch
        a, b = a.detach().double(), b.detach().double()
        den = torch.linalg.vector_norm(b)
        return float(torch.linalg.vector_norm(a - b) / (den if den > 0 else 1.0))

    def expect(self, op, geo, dtype):
        """('convcat', the query's first kernel) if the query says convcat runs it here, else
        ('fallback', reason)."""
        rt = self.rt
        tf32 = dtype == self.torch.float32 and rt.tf32_allowed()
        if self.dev.type == "cpu":
            return "fallback", "tensors on cpu"
        if self.arch is None:
            return "fallback", self.sms
        p, text = rt.problem(op, geo, dtype, tf32)
        if p is None:
            return "fallback", text
        q = self.cat.query(p, arch=self.arch, sm_count=self.sms)
        return ("convcat", q.runnable[0]) if q.runnable else ("fallback", q.why_none(p, self.cat.entries))

    def catalog_has(self, op, dims, dtype, family=None):
        names = {self.torch.float16: "f16", self.torch.bfloat16: "bf16", self.torch.float32: "tf32"}
        return any(e.arch == self.arch and e.op == op and e.dims == dims and e.a_type == names[dtype]
                   and (family is None or e.family == family) for e in self.cat.entries)

    def module_pair(self, dims, kw, dtype):
        nn = self.nn
        cls = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[dims]
        ours_cls = {1: self.cct.Conv1d, 2: self.cct.Conv2d, 3: self.cct.Conv3d}[dims]
        ref = cls(**kw).to(self.dev, dtype)
        ours = ours_cls(**kw).to(self.dev, dtype)
        with self.torch.no_grad():
            ref.weight.mul_(3.0)   # default init is small: keep outputs O(1)
        ours.load_state_dict(ref.state_dict())
        if dims > 1:
            fmt = self.torch.channels_last_3d if dims == 3 else self.torch.channels_last
            ref = ref.to(memory_format=fmt)
        return ref, ours

    def channels_last(self, t):
        if t.dim() == 3:
            return t.transpose(1, 2).contiguous().transpose(1, 2)
        return t.contiguous(memory_format=self.torch.channels_last_3d if t.dim() == 5 else self.torch.channels_last)

    def geo_of(self, m, x):
        return geometry_of(self.rt, m, x.shape)

    def judge(self, name, op, geo, dtype, rec, err, cudnn_err, family, strict):
        """PASS/FAIL/SKIP for one pass: the path (and kernel family) that ran against the query, and the error."""
        want, why = self.expect(op, geo, dtype)
        ran = f"convcat {rec.key}" if rec.ran == "convcat" else f"{rec.ran}: {rec.reason}"
        extra = dict(err=err, cudnn_err=cudnn_err, ran=ran, op=op, family=rec.family or None)
        if err is None or err != err or err > TOL:
            return result(name, "FAIL", f"rel. error {err} > {TOL}", **extra)
        if want == "convcat" and rec.ran != "convcat":
            return result(name, "FAIL", f"the query says convcat runs it; it fell back: {rec.reason}", **extra)
        if want == "convcat":
            if strict and rec.family != family:
                return result(name, "FAIL", f"a {family} case ran a {rec.family} kernel (the query ranks "
                                            f"{why.key} first)", **extra)
            if rec.key != why.key and not rec.note:
                return result(name, "PASS", f"ran the query's runner-up ({why.key} ranks first: its plan was "
                                            f"refused on this device)", **extra)
        if want == "fallback":
            if rec.ran == "convcat":
                return result(name, "FAIL", f"the query refuses it ({why}) but convcat ran {rec.key}", **extra)
            if not rec.reason:
                return result(name, "FAIL", "fell back without a reason", **extra)
            if self.dev.type == "cuda" and self.arch and self.catalog_has(op, geo.dims, dtype, family):
                return result(name, "FAIL", f"a {family} case the catalog's {family} {op} kernels refuse: "
                                            f"{rec.reason}", **extra)
            if self.dev.type == "cuda" and self.arch:
                return result(name, "SKIP", f"the catalog has no {self.arch} {family} {op} {geo.dims}D {dtype} "
                                            f"kernels", **extra)
        return result(name, "PASS", "", **extra)

    # ---- numerics: every op, dims and dtype (CASES, above)
    CASES = CASES

    def numerics(self):
        torch = self.torch
        dtypes = [torch.float16, torch.bfloat16, torch.float32]
        for dims, cases in self.CASES.items():
            for cname, kw, shape, family, strict in cases:
                for dtype in dtypes:
                    self.one_case(f"{cname} {str(dtype)[6:]}", dims, kw, shape, dtype, family, strict)

    def one_case(self, name, dims, kw, shape, dtype, family, strict):
        torch = self.torch
        torch.manual_seed(zlib.crc32(name.encode()))
        ref, ours = self.module_pair(dims, kw, dtype)
        x = self.channels_last(torch.randn(shape, device=self.dev, dtype=dtype))
        x_ref, x_ours, x64 = (x.detach().clone().requires_grad_() for _ in range(3))
        x64 = x.detach().double().requires_grad_()
        m64 = copy.deepcopy(ref).double()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y_ref = ref(x_ref)
            y = ours(x_ours)
            y64 = m64(x64)
            dy = self.channels_last(torch.randn(y64.shape, device=self.dev, dtype=dtype))
            y_ref.backward(dy)
            y.backward(dy)
            y64.backward(dy.double())
        geo = self.geo_of(ours, x)
        recs = self.rt.records(ours._convcat_tag)
        pairs = [("fprop", y, y_ref, y64), ("dgrad", x_ours.grad, x_ref.grad, x64.grad),
                 ("wgrad", ours.weight.grad, ref.weight.grad, m64.weight.grad)]
        for op, a, c, b in pairs:
            self.judge(f"{name} {op}", op, geo, dtype, recs[op], self.rel(a, b), self.rel(c, b), family, strict)
        if ours.bias is not None:
            err = self.rel(ours.bias.grad, m64.bias.grad)
            result(f"{name} dbias", "PASS" if err <= TOL else "FAIL", "", err=err,
                   cudnn_err=self.rel(ref.bias.grad, m64.bias.grad), ran="sum of dy")

    # ---- layouts: channels_last read as is; other layouts copied once with one warning
    def layouts(self):
        torch, cct = self.torch, self.cct
        m = cct.Conv2d(64, 64, 3, padding=1).to(self.dev, torch.bfloat16)
        x = torch.randn(2, 64, 12, 12, device=self.dev, dtype=torch.bfloat16)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            xc = x.to(memory_format=torch.channels_last).requires_grad_()
            y = m(xc)
            y.backward(torch.randn_like(y))
        copies = [str(w.message) for w in got if "not channel-innermost" in str(w.message)]
        result("channels_last fwd+bwd without copies", "PASS" if not copies else "FAIL", "; ".join(copies)[:200])
        self.ok(y.is_contiguous(memory_format=torch.channels_last), "output is channels_last")
        m2 = cct.Conv2d(64, 64, 3, padding=1).to(self.dev, torch.bfloat16)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            for _ in range(3):
                y2 = m2(x)   # NCHW: copied, warned once
        copies = [w for w in got if "not channel-innermost" in str(w.message)]
        self.ok(len(copies) == 1, f"NCHW input: one warning in three calls (got {len(copies)})")
        same = self.rel(y2, m2(x.to(memory_format=torch.channels_last)))   # convcat: the same kernel on the same data
        self.ok(same < (1e-6 if self.dev.type == "cuda" else TOL), f"NCHW result equals channels_last's ({same:.1e})")
        big = torch.randn(2, 72, 13, 12, device=self.dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        view = big[:, 4:68, 1:, :]   # a strided view: copied
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got_v = m(view)
        self.ok(self.rel(got_v, torch.nn.functional.conv2d(view, m.weight, m.bias, padding=1)) < TOL, "strided view")
        m1 = cct.Conv1d(64, 64, 3, padding=1).to(self.dev, torch.float16)
        x1 = torch.randn(2, 40, 64, device=self.dev, dtype=torch.float16).transpose(1, 2)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            y1 = m1(x1)
        self.ok(not [w for w in got if "not channel-innermost" in str(w.message)] and y1.stride() == (40 * 64, 1, 64),
                "1D (N, C, W) over (N, W, C) memory: no copy, output strides (Q*K, 1, K)")

    def ok(self, cond, name, detail=""):
        return result(name, "PASS" if cond else "FAIL", detail)

    def ran(self, m, op="fprop"):
        rec = self.rt.records(m._convcat_tag).get(op)
        return rec

    def want_convcat(self, name, m, op="fprop"):
        """FAIL if the layer's pass did not run on convcat where the query says it would."""
        rec = self.ran(m, op)
        if rec is None:
            return result(name, "FAIL", f"{op} did not run")
        if self.dev.type == "cpu" or self.arch is None:
            return result(name, "PASS" if rec.ran != "convcat" else "FAIL", f"fell back: {rec.reason}")
        if rec.ran != "convcat":
            return result(name, "FAIL", f"fell back: {rec.reason}", ran=f"{rec.ran}: {rec.reason}")
        return result(name, "PASS", "", ran=f"convcat {rec.key} {rec.note}")

    # ---- autocast
    def autocast(self):
        torch, cct = self.torch, self.cct
        ref = torch.nn.Conv2d(64, 128, 3, padding=1).to(self.dev).to(memory_format=torch.channels_last)
        ours = cct.Conv2d(64, 128, 3, padding=1).to(self.dev)
        ours.load_state_dict(ref.state_dict())
        x = torch.randn(2, 64, 10, 10, device=self.dev).to(memory_format=torch.channels_last)
        dt = torch.bfloat16
        with torch.autocast(self.dev.type, dtype=dt):
            y, r = ours(x), ref(x)
        self.ok(y.dtype == dt, f"output dtype under autocast is {y.dtype}")
        y.float().sum().backward()
        r.float().sum().backward()
        self.ok(ours.weight.grad.dtype == torch.float32, "f32 parameter gets an f32 gradient")
        result("autocast bf16 vs nn under autocast", "PASS" if self.rel(y, r) < TOL else "FAIL", "",
               err=self.rel(y, r), cudnn_err=None)
        self.ok(self.rel(ours.weight.grad, ref.weight.grad) < TOL, "autocast weight gradient")
        self.want_convcat("autocast fprop on convcat", ours, "fprop")
        self.want_convcat("autocast wgrad on convcat", ours, "wgrad")

    # ---- fused inference: BatchNorm folded, activation and residual in the epilogue
    def fused(self):
        torch, nn, cct = self.torch, self.nn, self.cct

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1, self.bn1 = nn.Conv2d(64, 64, 1, bias=False), nn.BatchNorm2d(64)
                self.conv2, self.bn2 = nn.Conv2d(64, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64)
                self.conv3, self.bn3 = nn.Conv2d(64, 128, 1, bias=False), nn.BatchNorm2d(128)
                self.down, self.bnd = nn.Conv2d(64, 128, 1, bias=False), nn.BatchNorm2d(128)
                self.relu, self.silu = nn.ReLU(inplace=True), nn.SiLU()

            def forward(self, x):
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.silu(self.bn2(self.conv2(out)))
                return self.relu(self.bn3(self.conv3(out)) + self.bnd(self.down(x)))

        torch.manual_seed(0)
        model = Block().to(self.dev).eval()
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.data.uniform_(0.5, 1.5)
                m.bias.data.uniform_(-0.3, 0.3)
        ref = copy.deepcopy(model).to(memory_format=torch.channels_last)
        fused = cct.convert(copy.deepcopy(model))
        x = torch.randn(4, 64, 14, 14, device=self.dev).to(memory_format=torch.channels_last)
        with torch.no_grad(), torch.autocast(self.dev.type, dtype=torch.bfloat16):
            want, got = ref(x), fused(x)
        with torch.no_grad():
            exact = ref.double()(x.double())
        result("fused block (bf16) vs nn eval", "PASS" if self.rel(got, exact) < TOL else "FAIL",
               fused._convcat_notes[0], err=self.rel(got, exact), cudnn_err=self.rel(want, exact))
        mods = dict(fused.named_modules())
        self.ok(mods["conv3"].fusion == {"bn": "bn3", "residual": "add", "activation": "relu"},
                f"conv3 fusion {mods['conv3'].fusion}")
        for nm in ("conv1", "conv2", "conv3", "down"):
            self.want_convcat(f"fused {nm} ({mods[nm].activation}) on convcat", mods[nm])
        log(str(cct.report(fused)))

    # ---- a non-default stream
    def stream(self):
        torch, cct = self.torch, self.cct
        if self.dev.type != "cuda":
            return result("stream", "SKIP", "CUDA only")
        m = cct.Conv2d(64, 64, 3, padding=1).to(self.dev, torch.float16)
        x = torch.randn(8, 64, 28, 28, device=self.dev, dtype=torch.float16).to(memory_format=torch.channels_last)
        want = m(x)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            got = m(x)
            got2 = m(got)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        self.ok(self.rel(got, want) < 1e-3 and self.rel(got2, m(want)) < 1e-3, "runs on the current (side) stream")

    # ---- CUDA graphs
    def _net(self, dtype, c=64):
        nn, cct = self.nn, self.cct
        net = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, 2 * c, 3, stride=2, padding=1),
                            nn.ReLU(), nn.Conv2d(2 * c, c, 1))
        return cct.convert(net).to(self.dev, dtype)

    def graph_warm(self):
        torch = self.torch
        if self.dev.type != "cuda":
            return result("graph_warm", "SKIP", "CUDA only")
        net = self._net(torch.bfloat16)
        static_x = torch.randn(4, 64, 16, 16, device=self.dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(3):   # warm-up: plans are made here, outside the capture
                net(static_x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(g):
            static_y = net(static_x)
        outs = []
        for _ in range(3):
            new = torch.randn_like(static_x)
            static_x.copy_(new)
            g.replay()
            with torch.no_grad():
                outs.append(self.rel(static_y, net(new)))
        self.ok(max(outs) < 1e-3, f"captured forward replays equal eager (rel. err {max(outs):.1e})")
        for i, m in enumerate(net):
            if hasattr(m, "_convcat_tag"):
                self.want_convcat(f"graph layer {i} captured as convcat's launch", m)

    def graph_cold(self):
        torch, nn, cct = self.torch, self.nn, self.cct
        if self.dev.type != "cuda":
            return result("graph_cold", "SKIP", "CUDA only")
        warm_ref = nn.Conv2d(48, 96, 3, padding=1).to(self.dev, torch.bfloat16).to(memory_format=torch.channels_last)
        x = torch.randn(2, 48, 11, 13, device=self.dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            warm_ref(x)   # cuDNN warmed up for this shape; convcat has never seen it
        torch.cuda.current_stream().wait_stream(s)
        m = cct.Conv2d(48, 96, 3, padding=1).to(self.dev, torch.bfloat16)
        m.load_state_dict(warm_ref.state_dict())
        g = torch.cuda.CUDAGraph()
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            with torch.no_grad(), torch.cuda.graph(g):
                y = m(x)
        g.replay()
        torch.cuda.synchronize()
        rec = self.ran(m)
        warned = [str(w.message) for w in got if "CUDA graph" in str(w.message)]
        self.ok(rec.ran == "cuDNN" and "CUDA graph" in rec.reason and warned,
                "first call inside a capture: cuDNN in the graph, reported and warned", rec.reason)
        with torch.no_grad():
            self.ok(self.rel(y, warm_ref(x)) < 1e-3, "the captured fallback is correct")
            m(x)   # after the capture: the plan is made now
        self.want_convcat("after the capture the layer runs convcat", m)

    def graph_train(self):
        torch = self.torch
        if self.dev.type != "cuda":
            return result("graph_train", "SKIP", "CUDA only")
        net = self._net(torch.bfloat16)
        ref = copy.deepcopy(net)
        x = torch.randn(4, 64, 16, 16, device=self.dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        params = [p for p in net.parameters()]
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                y = net(x.requires_grad_())
                torch.autograd.grad(y.float().sum(), [x] + params)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = net(x)
            grads = torch.autograd.grad(y.float().sum(), [x] + params)
        g.replay()
        torch.cuda.synchronize()
        xr = x.detach().clone().requires_grad_()
        yr = ref(xr)
        want = torch.autograd.grad(yr.float().sum(), [xr] + list(ref.parameters()))
        err = max(self.rel(a, b) for a, b in zip(grads, want))
        self.ok(err < 1e-2, f"captured forward + backward replays equal eager (worst gradient rel. err {err:.1e})")
        for op in ("fprop", "dgrad", "wgrad"):
            self.want_convcat(f"graph_train layer 2 {op} captured on convcat", net[2], op)

    # ---- pins and autotune
    def pin(self):
        torch, cct, rt = self.torch, self.cct, self.rt
        m = cct.Conv2d(64, 128, 3, padding=1).to(self.dev, torch.bfloat16)
        x = torch.randn(4, 64, 20, 20, device=self.dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        geo = self.geo_of(m, x)
        p, text = rt.problem("fprop", geo, torch.bfloat16, False)
        if self.arch is None:
            return result("pin", "SKIP", "no convcat arch here")
        q = self.cat.query(p, arch=self.arch, sm_count=self.sms)
        if len(q.runnable) < 2:
            return result("pin", "SKIP", f"{len(q.runnable)} kernels can run the problem")
        key = q.runnable[-1].key
        try:
            cct.configure(pin=key)
            y = m(x)
            rec = self.ran(m)
            if self.dev.type == "cuda":
                self.ok(rec.key == key and rec.note == "pinned", f"CONVCAT_PIN-style list pins {key}", f"ran {rec.key} {rec.note}")
            self.ok(self.rel(y, torch.nn.functional.conv2d(x, m.weight, m.bias, padding=1)) < TOL, "pinned kernel correct")
            key2 = q.runnable[-2].key
            cct.configure(pin={text: key2})
            m(x)
            rec = self.ran(m)
            if self.dev.type == "cuda":
                self.ok(rec.key == key2 and rec.note == "pinned", f"dict pin {text} -> {key2}", f"ran {rec.key}")
        finally:
            cct.configure(pin=[])

    def autotune(self):
        torch, cct = self.torch, self.cct
        if self.dev.type != "cuda" or self.arch is None:
            return result("autotune", "SKIP", "CUDA and a convcat arch only")
        out = os.environ.get("OUT") or tempfile.mkdtemp()
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, "gpu_torch_tune_cache.txt")
        if os.path.exists(path):
            os.remove(path)
        try:
            cct.configure(autotune=True, tune_cache=path)
            m = cct.Conv2d(64, 128, 3, padding=1).to(self.dev, torch.bfloat16)
            x = torch.randn(4, 64, 20, 20, device=self.dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
            x.requires_grad_()
            y = m(x)
            y.backward(torch.randn_like(y))
            recs = self.rt.records(m._convcat_tag)
            tuned = {op: r.note for op, r in recs.items()}
            self.ok(all(r.ran == "convcat" and r.note.startswith("autotuned") for r in recs.values()),
                    "every pass autotuned", str(tuned))
            self.ok(self.rel(y, torch.nn.functional.conv2d(x, m.weight, m.bias, padding=1)) < TOL, "tuned result correct")
            lines = open(path).read().splitlines() if os.path.exists(path) else []
            self.ok(len(lines) >= 4, f"tune cache written: {len(lines) - 1} winners in {path}")
            first = {op: r.key for op, r in recs.items()}
            cct.configure(tune_cache=path)   # reload: the winners come from the file
            m2 = cct.Conv2d(64, 128, 3, padding=1).to(self.dev, torch.bfloat16)
            y2 = m2(x)
            y2.backward(torch.randn_like(y2))
            again = {op: r.key for op, r in self.rt.records(m2._convcat_tag).items()}
            self.ok(again == first, "the cache's winners are reused", f"{again}")
        finally:
            cct.configure(autotune=False, tune_cache="")

    # ---- torch.compile
    def compile(self):
        torch = self.torch
        if self.args.no_compile:
            return result("compile", "SKIP", "--no-compile")
        torch._dynamo.reset()
        net = self._net(torch.bfloat16)
        ref = copy.deepcopy(net)
        x = torch.randn(4, 64, 16, 16, device=self.dev, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
        cnet = torch.compile(net, fullgraph=True)
        xa = x.detach().clone().requires_grad_()
        t = time.time()
        y = cnet(xa)
        y.float().sum().backward()
        secs = time.time() - t
        xb = x.detach().clone().requires_grad_()
        yr = ref(xb)
        yr.float().sum().backward()
        err = max(self.rel(y, yr), self.rel(xa.grad, xb.grad), self.rel(net[0].weight.grad, ref[0].weight.grad))
        self.ok(err < TOL, f"torch.compile (inductor, fullgraph) fwd+bwd equals eager ({secs:.0f} s to compile)",
                f"rel. err {err:.1e}")
        self.want_convcat("compiled layer 0 fprop on convcat", net[0])
        self.want_convcat("compiled layer 0 wgrad on convcat", net[0], "wgrad")

    # ---- report over a torchvision ResNet
    def report(self):
        torch, cct = self.torch, self.cct
        try:
            import torchvision
        except ImportError:
            return result("report", "SKIP", "torchvision is not installed")
        model = cct.convert(torchvision.models.resnet18()).to(self.dev).to(memory_format=torch.channels_last)
        x = torch.randn(2, 3, 64, 64, device=self.dev).to(memory_format=torch.channels_last)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            with torch.autocast(self.dev.type, dtype=torch.bfloat16):
                loss = model(x).float().sum()
            loss.backward()
        rep = cct.report(model)
        text = str(rep)
        out = os.environ.get("OUT")
        if out:
            with open(os.path.join(out, "gpu_torch_report.txt"), "w") as fh:
                fh.write(text + "\n")
        log(text)
        warned = {str(w.message).split(":")[1].strip().split(" (")[0] for w in got if "falls back" in str(w.message)}
        fell = {r.name for r in rep if r.fell_back}
        self.ok(len(rep) == 20, f"report lists the 20 convolutions (got {len(rep)})")
        self.ok(all(r.ops[op].reason for r in rep for op in r.ops if r.ops[op].ran != "convcat"),
                "every fallback has its reason")
        conv1 = rep[0]
        self.ok(conv1.name == "conv1", f"the first row is conv1 ({conv1.name})")
        if self.dev.type == "cuda" and self.arch:   # the C = 3 stem: what the query says, a gather kernel
            geo = self.geo_of(model.conv1, x)
            for op in ("fprop", "wgrad"):   # no dgrad: the input does not require a gradient
                rec = conv1.ops.get(op)
                want, first = self.expect(op, geo, torch.bfloat16)
                if rec is None:
                    result(f"resnet18 conv1 (C = 3) {op}", "FAIL", "did not run")
                elif want == "convcat":
                    self.ok(rec.ran == "convcat" and rec.family == first.family,
                            f"resnet18 conv1 (C = 3) {op} runs on convcat's {first.family} family",
                            f"{rec.ran} {rec.key or rec.reason}")
                else:
                    self.ok(rec.ran != "convcat" and "C = 3" in rec.reason,
                            f"resnet18 conv1 (C = 3) {op} falls back with the channel rule", rec.reason)
        self.ok(fell == warned or self.dev.type == "cpu", f"a warning per fallen-back layer ({len(fell)} layers)",
                f"reported {sorted(fell)}, warned {sorted(warned)}")
        c = rep.counts()
        result("resnet18 counts", "PASS", f"{c['convcat']} of {c['ran']} layers entirely on convcat; "
               f"fprop {c['fprop']}, dgrad {c['dgrad']}, wgrad {c['wgrad']}")


if __name__ == "__main__":
    sys.exit(main())
