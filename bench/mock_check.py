#!/usr/bin/env python3
"""CPU check of bench.py's PyTorch side, for a machine with torch (a CPU build is enough) but no GPU.

    python3 bench/mock_check.py [--lib build/runtime/libconvcat.so] [--catalog build/catalog/convcat.catalog]
                                [--bad-rank N]

A fake catalog (the real library, through the convcat package, ranks the kernels; its plans are
replaced) computes each "kernel" from the raw pointers of the convcat.make_tensors that bench.py
hands Plan.run, reading x as NDHWC, w as KTRSC and y as NZPQK as convcat.h says, with a float64 3D
reference of its own.  bench_all then checks it against PyTorch's conv on CPU for 1D/2D/3D,
strided, dilated and asymmetrically padded rows, fprop, dgrad and wgrad, fp16 and fp32 (the best 3
ranked kernels each), then the fp32 rows again on every ranked kernel, with autotune (the fake
picks the second-ranked kernel) and the paired re-timing of the heuristic's pick against the best,
then the fp16 rows as --check runs them (the first-ranked kernel once, untimed).  The row "none"
no kernel runs: it must be skipped with the query's reason.
So it checks tensor layouts, pointer roles, workspaces, the dgrad crop and the error check, not speed.
--bad-rank N makes the N-th ranked kernel leave its output unwritten: those rows must FAIL.
Exit status: 0 when no row failed (or, with --bad-rank, when every row failed; --check rows fail
with --bad-rank 0 only).
"""
import argparse
import ctypes
import json
import os
import random
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import bench  # noqa: E402  (puts the repository's python/ on sys.path)
import convcat  # noqa: E402

PROBLEMS = """\
name op N D H W C K T R S pad_d pad_h pad_w stride_d stride_h stride_w dil_d dil_h dil_w groups pad_d_hi pad_h_hi pad_w_hi
s2d fprop 2 1 9 11 16 24 1 3 3 0 1 1 1 1 1 1 1 1 1 0 1 1
s2d_s2 fprop 2 1 10 12 16 8 1 3 3 0 1 1 1 2 2 1 1 1 1 0 1 1
s2d_dil fprop 2 1 10 12 16 8 1 3 3 0 2 2 1 1 1 1 2 2 1 0 2 2
s2d_1x1 fprop 3 1 5 7 32 16 1 1 1 0 0 0 1 1 1 1 1 1 1 0 0 0
s2d_asym fprop 2 1 10 12 16 8 1 3 3 0 0 1 1 2 2 1 1 1 1 0 1 0
s2d_rect fprop 2 1 10 12 16 8 1 3 5 0 1 2 1 1 2 1 1 1 1 0 1 2
s1d fprop 2 1 1 33 16 16 1 1 3 0 0 1 1 1 1 1 1 1 1 0 0 1
s1d_asym fprop 2 1 1 33 16 16 1 1 4 0 0 1 1 1 2 1 1 1 1 0 0 2
s3d fprop 2 4 6 7 16 8 3 3 3 1 1 1 1 1 1 1 1 1 1 1 1 1
s3d_asym fprop 2 5 6 7 16 8 3 3 3 1 0 1 2 1 2 1 1 1 1 0 1 0
none fprop 2 1 9 11 13 24 1 3 3 0 1 1 1 1 1 1 1 1 1 0 1 1
"""
NONE_C = 13   # the row "none": the fake query finds no kernel for it (bench.py's skipped row)

bench.DEVICE = "cpu"
bench.has_kernels = lambda cat, op, dtype: True   # every op and type is ranked as fprop bf16 (Fake.query)
bench.median_ms = lambda fn, iters=20, warm=10: (fn(), random.uniform(0.5, 1.5))[1]
bench.call_ms = lambda fn, iters=50, warm=10: (fn(), random.uniform(0.5, 1.5))[1]
torch.cuda.synchronize = lambda: None
torch.cuda.current_stream = lambda: types.SimpleNamespace(cuda_stream=0)
NP = {1: np.float16, 2: None, 3: np.float32, 4: np.float32}
CT = {np.float16: ctypes.c_uint16, np.float32: ctypes.c_float}


def view(ptr, shape, npt):
    n = int(np.prod(shape))
    a = np.ctypeslib.as_array((CT[npt] * n).from_address(ptr))
    return torch.from_numpy(a.view(npt).reshape(shape))


def compute(p, t, skip):
    """Run the problem p on the convcat_tensors t (forward terms, channel-innermost storage)."""
    npt = NP[p.a_type]
    z, pp, q = CC.lib.problem_output(p)
    x = view(t.x, (p.n, p.d, p.h, p.w, p.c), npt)
    w = view(t.w, (p.k, p.t, p.r, p.s, p.c), npt)
    y = view(t.y, (p.n, z, pp, q, p.k), npt)
    X = x.double().permute(0, 4, 1, 2, 3).requires_grad_()
    W = w.double().permute(0, 4, 1, 2, 3).requires_grad_()
    pads = [p.pad_lo[2], p.pad_hi[2], p.pad_lo[1], p.pad_hi[1], p.pad_lo[0], p.pad_hi[0]]
    Y = F.conv3d(F.pad(X, pads), W, None, list(p.stride), 0, list(p.dilation))
    if skip:
        return
    if p.op == convcat.CONVCAT_FPROP:
        y.copy_(Y.permute(0, 2, 3, 4, 1))
        return
    Y.backward(y.double().permute(0, 4, 1, 2, 3))
    if p.op == convcat.CONVCAT_DGRAD:
        x.copy_(X.grad.permute(0, 2, 3, 4, 1))
    else:
        w.copy_(W.grad.permute(0, 2, 3, 4, 1))


class FakePlan:
    """A convcat.Plan's interface (info, key, workspace_bytes, run, destroy) over compute()."""

    def __init__(self, p, entry, rank):
        self.problem, self.rank = type(p).from_buffer_copy(p), rank
        self.info = convcat.PlanInfo(entry.index, entry.key, grid=1, cluster=1, threads=128, smem_bytes=0,
                                     workspace_bytes=256 * (rank % 2))   # some plans ask for a workspace
        self.destroyed = False

    @property
    def key(self):
        return self.info.key

    @property
    def workspace_bytes(self):
        return self.info.workspace_bytes

    def run(self, tensors, stream=None):
        assert not self.destroyed, "run after destroy"
        assert isinstance(tensors, convcat.binding._capi.Tensors), type(tensors)
        if self.info.workspace_bytes:
            assert tensors.workspace and tensors.workspace_bytes >= self.info.workspace_bytes, "no workspace"
        assert (tensors.alpha, tensors.beta, tensors.c, tensors.bias) == (1.0, 0.0, None, None)
        compute(self.problem, tensors, self.rank == Fake.bad_rank)

    def destroy(self):
        self.destroyed = True


class Fake:
    """A convcat.Catalog's interface as bench.py uses it: the real catalog's entries and library (its
    problem_output, problem_flops), its query (every problem ranked as fprop bf16 would be), fake
    plans and autotune."""
    bad_rank = None

    def __init__(self, cat):
        self.cat, self.lib, self.entries = cat, cat.lib, cat.entries
        self.plans = []

    def query(self, p, arch="sm90a", sm_count=0):   # rank as the real fprop bf16 query would
        p2 = type(p).from_buffer_copy(p)
        p2.op = convcat.CONVCAT_FPROP
        p2.a_type = p2.b_type = p2.out_type = convcat.binding.dtype_value("bf16")
        q = self.cat.query(p2, arch, sm_count)
        if p.c == NONE_C:   # every kernel refuses it, with the reasons of the real query's refused rows
            return convcat.QueryResult([], q.refused)
        return q

    def ranked(self, p):
        return [c.index for c in self.query(p, "sm90a", 132).runnable]

    def plan(self, p, index=convcat.CONVCAT_AUTO):
        ok = self.ranked(p)
        index = ok[0] if index == convcat.CONVCAT_AUTO else index
        if index not in ok:   # as convcat_plan_create refuses a kernel that cannot run p
            raise convcat.ConvcatError(f"convcat_plan_create {self.entries[index].key}",
                                       convcat.CONVCAT_ERR_UNSUPPORTED, "unsupported", "the fake query refuses it")
        plan = FakePlan(p, self.entries[index], ok.index(index))
        self.plans.append(plan)
        return plan

    def autotune(self, p, tensors, stream=None, iterations=20, cache=None):
        assert tensors.x and tensors.w and tensors.y
        return self.entries[self.ranked(p)[1]], 1.0   # the second-ranked: it must be found among the timed

    def close(self):
        self.cat.close()


CC = None


def main():
    global CC
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--lib", default="build/runtime/libconvcat.so")
    ap.add_argument("--catalog", default="build/catalog/convcat.catalog")
    ap.add_argument("--bad-rank", type=int)
    a = ap.parse_args()
    Fake.bad_rank = a.bad_rank
    CC = Fake(bench.open_convcat(a.lib, a.catalog))
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as fh:
        fh.write(PROBLEMS)
        fh.flush()
        args = types.SimpleNamespace(problems=fh.name, ops="fprop,dgrad,wgrad", all_ops=True, classes=None,
                                     dtypes="fp16,fp32", max_candidates=3, check=False)
        rows, every, checked = [], [], []
        bench.bench_all(CC, args, 700.0, 132, rows)
        args.dtypes, args.max_candidates = "fp32", 0   # every candidate, autotune, the paired re-timing
        bench.bench_all(CC, args, 700.0, 132, every)
        args.dtypes, args.check = "fp16", True   # --check: the heuristic's pick once, untimed
        bench.bench_all(CC, args, 0.0, 132, checked)
    rows += every
    json.dumps(rows + checked)   # what bench.py --json writes: plain values only
    skipped = [r for r in rows + checked if r["status"].startswith("skipped")]
    bad_skips = [r["name"] for r in skipped
                 if r["name"] != "none" or not r["status"].startswith("skipped: no kernel can run it (")]
    print(f"skipped: {len(skipped)} rows, e.g. {skipped[0]['status'] if skipped else '-'}")
    if bad_skips or len(skipped) != 3 * (2 + 1 + 1):   # row "none": three ops, four dtypes over the runs
        return 1
    rows = [r for r in rows if r["name"] != "none"]
    checked = [r for r in checked if r["name"] != "none"]
    want = "FAIL" if a.bad_rank == 0 else "ok"   # --check runs the first-ranked kernel only
    wrong = [r["name"] for r in checked if not r["status"].startswith(want)]
    print(f"--check: {len(checked) - len(wrong)}/{len(checked)} rows {want}")
    if wrong:
        return 1
    leaked = [pl.key for pl in CC.plans if not pl.destroyed]
    if leaked:
        print(f"{len(leaked)} plan(s) never destroyed: {', '.join(sorted(set(leaked)))}")
    if a.bad_rank is None:   # what the JSON would hold: the autotune pick timed, the pairs re-timed
        every = [r for r in every if r["name"] != "none"]
        tuned = [r for r in every if r.get("tuned_tflops")]
        paired = [r for r in every if "paired_best_ms" in r]
        print(f"autotune pick timed in {len(tuned)}/{len(every)} rows; paired re-timing in {len(paired)}")
        if len(tuned) != len(every) or not paired:
            return 1
    CC.close()
    failed = sum(r["status"].startswith("FAIL") for r in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return int(failed != (len(rows) if a.bad_rank is not None else 0))


if __name__ == "__main__":
    sys.exit(main())
