#!/usr/bin/env python3
"""Ceilings for the 1x1 fprop rows of resnet50.txt and layers.txt, on the GPU machine.

Usage (repository root):
    python3 bench/ceilings.py [OUT.json]

Times with bench.py's kernel-time method (median_ms): DRAM read, write and copy rates of plain PyTorch
kernels over 400 MB, and per 1x1 unit-stride row the same GEMM through cuBLAS (torch.mm of the (M, C)
pixels by the (C, K) filters), with its TFLOP/s and the rate at which it moves x, w and y once.
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench  # noqa: E402

# name, GEMM M (pixels), C, K: the 1x1 unit-stride fprop rows (resnet50 at N = 256, layers at N = 128)
ROWS = [
    ("rn50_02", 802816, 64, 64), ("rn50_04", 802816, 64, 256), ("rn50_05", 802816, 256, 64),
    ("rn50_06", 802816, 256, 128), ("rn50_08", 200704, 128, 512), ("rn50_10", 200704, 512, 128),
    ("rn50_12", 200704, 512, 256), ("rn50_14", 50176, 256, 1024), ("rn50_16", 50176, 1024, 256),
    ("rn50_18", 50176, 1024, 512), ("rn50_20", 12544, 512, 2048), ("rn50_22", 12544, 2048, 512),
    ("r50_res2_1x1up", 401408, 64, 256), ("r50_res4_1x1", 25088, 1024, 256),
]


def main():
    import torch
    torch.zeros(1, device="cuda")
    out = {}

    def rate(name, fn, nbytes, flops=0):
        ms = bench.median_ms(fn)
        out[name] = dict(ms=ms, tbps=nbytes / ms / 1e9, tflops=flops / ms / 1e9)
        extra = f"  {flops / ms / 1e9:6.1f} TFLOP/s" if flops else ""
        print(f"{name:32s} {ms * 1e3:8.1f} us  {nbytes / ms / 1e9:5.2f} TB/s{extra}", flush=True)

    n = 400 * 2**20
    src = torch.randn(n // 2, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    rate("read 400 MB (sum)", lambda: src.sum(), n)
    rate("write 400 MB (fill_)", lambda: dst.fill_(1.0), n)
    rate("copy 400 MB -> 400 MB", lambda: dst.copy_(src), 2 * n)
    for name, m, c, k in ROWS:
        x = torch.randn(m, c, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(c, k, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)
        rate(f"{name} cuBLAS", lambda: torch.mm(x, w, out=y), 2 * (m * c + c * k + m * k), 2 * m * c * k)
    if len(sys.argv) > 1:
        json.dump(out, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
