#!/usr/bin/env python3
"""Where a training step's time goes, convcat.torch against PyTorch as is: one torchvision network,
a few SGD steps (batch 64, bf16 autocast, channels_last, synthetic data), the last ones under
torch.profiler.

    CONVCAT_LIBRARY=build/runtime/libconvcat.so CONVCAT_CATALOG=build/catalog/convcat.catalog \\
        PYTHONPATH=python python3 bench/torch_profile.py [--net resnet50] [--steps 8] [--profiled 3] [--cprofile N]

Per backend: the step's time (CUDA events, median of the profiled steps), the GPU's busy time in a
step (the sum of its kernels' durations), the host's time in convcat's three operators and in
PyTorch's convolutions, and the kernels that take the most GPU time; --cprofile N adds the
host's time by Python function over N more convcat steps.  A step much longer than its
GPU time is bound by the host.  Exit status 77 without a GPU or torchvision.  Writes
torch_profile.txt and the two profiler tables to $OUT when it is set.
"""
import argparse
import os
import statistics
import sys


def step_fn(model, opt, lossf, torch):
    def step(x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def profile(backend, args, torch, torchvision, out):
    import convcat.torch as cct
    from torch.profiler import ProfilerActivity, profile as tprofile
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.net)(num_classes=1000).cuda().to(memory_format=torch.channels_last)
    if backend == "convcat":
        cct.convert(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = step_fn(model, opt, torch.nn.CrossEntropyLoss(), torch)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(args.batch, 3, 224, 224, device="cuda", generator=g).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (args.batch,), device="cuda", generator=g)
    for _ in range(args.steps - args.profiled):
        step(x, y)
    torch.cuda.synchronize()
    ms = []
    with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(args.profiled):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            step(x, y)
            b.record()
            b.synchronize()
            ms.append(a.elapsed_time(b))
    events = prof.key_averages()
    gpu_us = sum(e.self_device_time_total for e in events if e.device_type.name == "CUDA") / args.profiled
    host = {}
    for e in events:
        if e.key.startswith(("convcat::", "_EagerForward")) or e.key in ("aten::convolution",
                                                                          "aten::convolution_backward"):
            host[e.key] = (e.cpu_time_total / args.profiled / 1e3, e.count // args.profiled)
    out.append(f"\n## {args.net} {backend}: step {statistics.median(ms):.2f} ms, GPU busy {gpu_us / 1e3:.2f} ms a step")
    for k, (t, n) in sorted(host.items()):
        out.append(f"  host: {k:32s} {t:8.2f} ms a step over {n} calls ({t * 1e3 / max(n, 1):.1f} us a call)")
    table = events.table(sort_by="self_device_time_total", row_limit=12)
    out.append(table)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], f"torch_profile_{backend}.txt"), "w") as f:
            f.write(events.table(sort_by="self_cpu_time_total", row_limit=40))
    if backend == "convcat" and args.cprofile:
        out.append(host_profile(step, x, y, args.cprofile, torch))
    del model, opt
    torch.cuda.empty_cache()


def host_profile(step, x, y, steps, torch):
    """The host's time in `steps` steps by Python function (cProfile, own time first)."""
    import cProfile
    import io
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(steps):
        step(x, y)
    torch.cuda.synchronize()
    pr.disable()
    text = io.StringIO()
    pstats.Stats(pr, stream=text).sort_stats("tottime").print_stats(30)
    return f"\n## cProfile of {steps} convcat steps (own time first)\n" + text.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--net", default="resnet50")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--profiled", type=int, default=3)
    ap.add_argument("--cprofile", type=int, default=0, metavar="STEPS",
                    help="also run STEPS convcat steps under cProfile and list the host's time by function")
    args = ap.parse_args()
    try:
        import torch
        import torchvision
    except ImportError as e:
        print(f"torch_profile: {e}: skipped")
        return 77
    if not torch.cuda.is_available():
        print("torch_profile: no GPU: skipped")
        return 77
    torch.backends.cudnn.benchmark = True
    out = [f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}"]
    for backend in ("cudnn", "convcat"):
        profile(backend, args, torch, torchvision, out)
    text = "\n".join(out)
    print(text)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "torch_profile.txt"), "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
