#!/usr/bin/env python3
"""cuDNN and convcat's heuristic pick on chosen rows, one profiled call each, for Nsight Compute.

Usage (GPU machine, repository root):
    ncu --profile-from-start off --metrics ... python3 bench/profile_rows.py PROBLEMS.txt ROW [ROW ...]
        [--dtype bf16] [--key KEY ...] [--lib .gpu/lib/libconvcat.so] [--catalog .gpu/convcat.catalog]

Per row: both are warmed up (cudnn.benchmark picks its algorithm), then each runs once between
cudaProfilerStart/Stop, so ncu sees only those kernels (cuDNN's may be several).  Prints the
order of the profiled calls, so ncu's kernels can be told apart.  --key profiles those catalog
kernels (each that can run the row) instead of the heuristic's pick.
"""
import argparse
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "python"))   # the convcat package, uninstalled
import bench  # noqa: E402
import convcat  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problems")
    ap.add_argument("rows", nargs="+")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--key", action="append", default=[], help="a catalog kernel to profile (repeatable)")
    ap.add_argument("--lib", default=".gpu/lib/libconvcat.so")
    ap.add_argument("--catalog", default=".gpu/convcat.catalog")
    a = ap.parse_args()
    import torch
    torch.backends.cudnn.benchmark = True
    torch.zeros(1, device="cuda")
    cat = bench.open_convcat(a.lib, a.catalog)
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    rows = {r["name"]: r for r in bench.load(a.problems)}
    keys = [e.key for e in cat.entries]
    unknown = [k for k in a.key if k not in keys]
    if unknown:
        ap.error(f"not in {a.catalog}: {', '.join(unknown)}")
    for name in a.rows:
        r = rows[name]
        g = bench.geometry(r)
        case = bench.Case(r, r["op"], dt, g)   # times cuDNN: warmed up
        p = bench.problem(cat, r, r["op"], a.dtype)
        case.fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        case.fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        print(f"profiled: {name} cudnn", flush=True)
        for index in [keys.index(k) for k in a.key] or [convcat.CONVCAT_AUTO]:
            try:
                plan = cat.plan(p, index)
            except convcat.ConvcatError as e:   # this kernel cannot run the row
                print(f"skipped: {name} {e}", flush=True)
                continue
            t = case.with_workspace(plan.workspace_bytes)
            stream = torch.cuda.current_stream().cuda_stream
            for _ in range(5):
                plan.run(t, stream)
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            plan.run(t, stream)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            print(f"profiled: {name} convcat {plan.key}", flush=True)
            plan.destroy()
    cat.close()


if __name__ == "__main__":
    main()
