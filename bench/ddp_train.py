#!/usr/bin/env python3
"""Data-parallel training on convcat: a torchvision network under PyTorch DDP, one process per GPU,
convcat against cuDNN.

    CONVCAT_LIBRARY=build/runtime/libconvcat.so CONVCAT_CATALOG=build/catalog/convcat.catalog PYTHONPATH=python \\
        torchrun --nproc_per_node=2 bench/ddp_train.py [--net resnet50] [--steps 30] [--global-batch 128] \\
                                                        [--backends cudnn,convcat] [--json ddp-2.json]
    # the same global batch on one GPU, the curve to compare with, and the comparison:
    ... torchrun --nproc_per_node=1 bench/ddp_train.py --json ddp-1.json
    python3 bench/ddp_train.py --compare ddp-2.json ddp-1.json

Each process takes one GPU (LOCAL_RANK) and joins an NCCL group; NVLink multicast (NVLS) is
turned off (NCCL_NVLS_ENABLE=0) unless the environment says otherwise.  For each backend in turn
the network is built from one seed (the same weights on every rank and in every launch), its
BatchNorm layers made SyncBatchNorm when there are two processes or more (so that a step of W
processes computes what one process computes on the whole global batch), converted with
convcat.torch.convert for the convcat run, and wrapped in DistributedDataParallel.  Every step
draws the global batch of synthetic 224x224 images and labels from one seeded generator (the
same batches for every backend and every world size) and each rank trains on its slice: SGD
(lr 0.01, momentum 0.9), bf16 autocast, channels_last.

Reported (rank 0, JSON and a table): per backend the loss of every step (the global batch's mean,
averaged over the ranks), the time of a step (CUDA events on each rank; the median over the steps
after the first 5, the slowest rank's; the first step, where plans are made or cuDNN benchmarks,
separately) and how many convolution layers fell back to cuDNN; the largest relative difference
between the two backends' loss curves.  --compare prints the same for several result files, with
every curve against the first file's cuDNN curve.

Exit status 77 without a GPU, torchvision or torch.distributed.
"""
import argparse
import datetime
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def curve_diff(a, b):
    """The largest |a_i - b_i| / |b_i| over the steps both curves have."""
    n = min(len(a), len(b))
    return max(abs(a[i] - b[i]) / max(abs(b[i]), 1e-12) for i in range(n)) if n else float("nan")


def compare(paths):
    runs = []
    for p in paths:
        with open(p) as f:
            runs.append((p, json.load(f)))
    ref = runs[0][1]["backends"].get("cudnn", next(iter(runs[0][1]["backends"].values())))["losses"]
    print(f"curves against {runs[0][0]}'s cuDNN curve")
    print("| file | GPUs | global batch | backend | ms/step (median, slowest rank) | first step ms | "
          "loss curve vs the reference, largest rel. difference | layers on cuDNN |")
    print("|---|---|---|---|---|---|---|---|")
    for p, r in runs:
        for name, b in r["backends"].items():
            print(f"| {os.path.basename(p)} | {r['world_size']} | {r['global_batch']} | {name} | "
                  f"{b['median_step_ms']:.2f} | {b['first_step_ms']:.0f} | {curve_diff(b['losses'], ref):.1e} | "
                  f"{b.get('fallbacks', '-')} |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--net", default="resnet50", help="a torchvision classification model (default resnet50)")
    ap.add_argument("--steps", type=int, default=30, help="SGD steps per backend (default 30)")
    ap.add_argument("--global-batch", type=int, default=128, help="images a step over all GPUs (default 128)")
    ap.add_argument("--backends", default="cudnn,convcat", help="comma list of cudnn, convcat (default both)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-sync-bn", action="store_true", help="keep per-rank BatchNorm statistics")
    ap.add_argument("--json", help="result file (rank 0; default $OUT/ddp_train_<W>gpu.json)")
    ap.add_argument("--compare", nargs="+", metavar="JSON", help="print the table of earlier result files and exit")
    ap.add_argument("--image", type=int, default=224, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compare:
        return compare(args.compare)
    try:
        import torch
        import torch.distributed as dist
        import torchvision
    except ImportError as e:
        print(f"ddp_train: SKIP: {e}")
        return 77
    if not torch.cuda.is_available() or not dist.is_available():
        print("ddp_train: SKIP: no CUDA GPU or no torch.distributed")
        return 77
    # Without torchrun: one process.
    for k, v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                 ("MASTER_PORT", "29511")):
        os.environ.setdefault(k, v)
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    if args.global_batch % world:
        print(f"ddp_train: --global-batch {args.global_batch} is not a multiple of {world} processes")
        return 2
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=device, timeout=datetime.timedelta(minutes=10))
    import warnings
    import convcat.torch as cct
    warnings.simplefilter("ignore", cct.ConvcatTorchWarning)   # the report counts the fallbacks
    torch.backends.cudnn.benchmark = True
    local_batch = args.global_batch // world

    def log(*a):
        if rank == 0:
            print(*a, flush=True)

    log(f"# {torch.cuda.get_device_name(device)} x {world}, torch {torch.__version__}, cuDNN "
        f"{torch.backends.cudnn.version()}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
        f"NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']}; {args.net}, global batch {args.global_batch} "
        f"({local_batch} a GPU), {args.steps} steps")

    # The same global batches for every backend and world size; each rank keeps its slice.
    g = torch.Generator(device=device).manual_seed(args.seed + 1)
    data = []
    for _ in range(args.steps):
        x = torch.randn(args.global_batch, 3, args.image, args.image, device=device, generator=g)
        y = torch.randint(0, 1000, (args.global_batch,), device=device, generator=g)
        sl = slice(rank * local_batch, (rank + 1) * local_batch)
        data.append((x[sl].contiguous(memory_format=torch.channels_last), y[sl].clone()))
        del x, y

    result = dict(net=args.net, world_size=world, global_batch=args.global_batch, steps=args.steps,
                  sync_bn=world > 1 and not args.no_sync_bn, device=torch.cuda.get_device_name(device),
                  torch=torch.__version__, backends={})
    for backend in [b for b in args.backends.split(",") if b]:
        torch.manual_seed(args.seed)
        model = getattr(torchvision.models, args.net)(num_classes=1000)
        if backend == "convcat":
            cct.convert(model)
        elif backend != "cudnn":
            log(f"ddp_train: unknown backend {backend}")
            return 2
        if result["sync_bn"]:
            model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = model.to(device).to(memory_format=torch.channels_last).train()
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local])
        opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
        lossf = torch.nn.CrossEntropyLoss()
        losses, events = [], []
        dist.barrier()
        for x, y in data:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = lossf(ddp(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            b.record()
            events.append((a, b))
            mean = loss.detach().float().clone()
            dist.all_reduce(mean)
            losses.append(mean / world)
        torch.cuda.synchronize()
        ms = [a.elapsed_time(b) for a, b in events]
        med = statistics.median(ms[5:] if len(ms) > 6 else ms)
        meds = [None] * world
        dist.all_gather_object(meds, (med, ms[0]))
        out = dict(losses=torch.stack(losses).tolist(), step_ms=ms, median_step_ms=max(m for m, _ in meds),
                   first_step_ms=max(f for _, f in meds), rank_median_ms=[m for m, _ in meds])
        if backend == "convcat":
            counts = cct.report(model).counts()
            out["report"] = counts
            out["fallbacks"] = f"{counts['fell_back']} of {counts['layers']}"
        result["backends"][backend] = out
        log(f"  {backend:8s} {out['median_step_ms']:8.2f} ms/step (ranks {', '.join(f'{m:.2f}' for m, _ in meds)}), "
            f"first step {out['first_step_ms']:.0f} ms, loss {out['losses'][0]:.4f} -> {out['losses'][-1]:.4f}")
        del ddp, model, opt
        torch.cuda.empty_cache()
    bk = result["backends"]
    if "cudnn" in bk and "convcat" in bk:
        result["convcat_vs_cudnn_curve"] = curve_diff(bk["convcat"]["losses"], bk["cudnn"]["losses"])
        result["convcat_over_cudnn_time"] = bk["cudnn"]["median_step_ms"] / bk["convcat"]["median_step_ms"]
        log(f"  loss curves, convcat against cuDNN: largest rel. difference {result['convcat_vs_cudnn_curve']:.1e}; "
            f"step time cuDNN / convcat {result['convcat_over_cudnn_time']:.2f}")
    if rank == 0:
        path = args.json or os.path.join(os.environ.get("OUT", "."), f"ddp_train_{world}gpu.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
        log(f"  wrote {path}")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
