#!/usr/bin/env python3
"""CPU check of bench.py's PyTorch side, for a machine with torch (a CPU build is enough) but no GPU.

    python3 bench/mock_check.py [--lib build/runtime/libconvcat.so] [--catalog build/catalog/convcat.catalog]
                                [--bad-rank N]

A fake convcat (the real library ranks the kernels; plan/run are replaced) computes each "kernel" from
the raw pointers bench.py hands it, reading x as NDHWC, w as KTRSC and y as NZPQK as convcat.h says,
with a float64 3D reference of its own.  bench_all then checks it against PyTorch's conv on CPU for
1D/2D/3D, strided, dilated and asymmetrically padded rows, fprop, dgrad and wgrad, fp16 and fp32.
So it checks tensor layouts, pointer roles, the dgrad crop and the error check, not speed.
--bad-rank N makes the N-th ranked kernel leave its output unwritten: those rows must FAIL.
Exit status: 0 when no row failed (or, with --bad-rank, when every row failed).
"""
import argparse
import ctypes
import os
import random
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import bench  # noqa: E402

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
"""

bench.DEVICE = "cpu"
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
    npt = NP[p.a_type]
    z, pp, q = bench.Convcat.output_extents(CC, p)
    x = view(t.x, (p.n, p.d, p.h, p.w, p.c), npt)
    w = view(t.w, (p.k, p.t, p.r, p.s, p.c), npt)
    y = view(t.y, (p.n, z, pp, q, p.k), npt)
    X = x.double().permute(0, 4, 1, 2, 3).requires_grad_()
    W = w.double().permute(0, 4, 1, 2, 3).requires_grad_()
    pads = [p.pad_lo[2], p.pad_hi[2], p.pad_lo[1], p.pad_hi[1], p.pad_lo[0], p.pad_hi[0]]
    Y = F.conv3d(F.pad(X, pads), W, None, list(p.stride), 0, list(p.dilation))
    if skip:
        return
    if p.op == 0:
        y.copy_(Y.permute(0, 2, 3, 4, 1))
        return
    Y.backward(y.double().permute(0, 4, 1, 2, 3))
    if p.op == 1:
        x.copy_(X.grad.permute(0, 2, 3, 4, 1))
    else:
        w.copy_(W.grad.permute(0, 2, 3, 4, 1))


class Fake(bench.Convcat):
    bad_rank = None

    def has_kernels(self, op, dtype):
        return True

    def query(self, p, sm_count):   # rank as the real fprop bf16 query would
        p2 = bench.Problem.from_buffer_copy(p)
        p2.op, p2.a_type, p2.b_type, p2.out_type = 0, 2, 2, 2
        return super().query(p2, sm_count)

    def plan(self, p, index):
        ok = [c["index"] for c in self.query(p, 132)[0]]
        index = ok[0] if index == bench.CONVCAT_AUTO else index
        return dict(p=bench.Problem.from_buffer_copy(p), index=index, rank=ok.index(index))

    def plan_info(self, plan):
        return bench.PlanInfo(index=plan["index"], grid=1, cluster=1)

    def destroy(self, plan):
        pass

    def run(self, plan, tref, stream):
        compute(plan["p"], tref._obj, plan["rank"] == self.bad_rank)


CC = None


def main():
    global CC
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--lib", default="build/runtime/libconvcat.so")
    ap.add_argument("--catalog", default="build/catalog/convcat.catalog")
    ap.add_argument("--bad-rank", type=int)
    a = ap.parse_args()
    Fake.bad_rank = a.bad_rank
    CC = Fake(a.lib, a.catalog)
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as fh:
        fh.write(PROBLEMS)
        fh.flush()
        args = types.SimpleNamespace(problems=fh.name, ops="fprop,dgrad,wgrad", all_ops=True,
                                     dtypes="fp16,fp32", max_candidates=3)
        rows = bench.bench_all(CC, args, 700.0, 132)
    failed = sum(r["status"].startswith("FAIL") for r in rows)
    print(f"{len(rows) - failed} passed, {failed} failed")
    return int(failed != (len(rows) if a.bad_rank is not None else 0))


if __name__ == "__main__":
    sys.exit(main())
