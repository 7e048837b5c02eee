#!/usr/bin/env python3
"""Whole networks through convcat.torch against cuDNN, on the GPU: training and inference.

    CONVCAT_LIBRARY=build/runtime/libconvcat.so CONVCAT_CATALOG=build/catalog/convcat.catalog \\
        python3 bench/torch_networks.py [--nets resnet50,mobilenet_v2,convnext_tiny] [--steps 50]
                                        [--batch 64] [--infer-batches 1,64] [--no-train] [--no-infer]
                                        [--compile cudnn|both|none] [--budget-s 240] [--json FILE]

Training: each network (torchvision's definition, random init from one seed, 1000 classes) trains
`--steps` SGD steps (lr 0.01, momentum 0.9) on synthetic 224x224 images and random labels (the same
batches for both runs, from a seeded generator), batch 64, bf16 autocast, channels_last, once with
cuDNN (torch.nn as is, cudnn.benchmark on) and once with convcat (convcat.torch.convert(model), train
mode: only the bias fused).  Reported: the time per step (median over the steps after the first 5,
CUDA events; the first step, where plans are made or cuDNN benchmarks, separately), the two loss
curves' largest relative difference, and how many convolution layers fell back to cuDNN (per pass).

Inference: the same networks in eval mode (the same weights); cuDNN runs torch.nn as is, convcat runs
convert(model.eval()) (BatchNorm folded, ReLU/SiLU/GELU and residual adds fused into the epilogue where
torch.fx finds them), both bf16 autocast and channels_last, at each --infer-batches size: images per
second (after 3 warm-up calls; 20 timed calls at batch >= 16, 50 below) and the relative difference
of the logits.  torch.compile (default backend, inductor) of the cuDNN model (--compile cudnn, the
default; `both` also compiles the convcat model) is measured last, and only while the --budget-s
time budget lasts (a compile takes ~30-60 s), so the whole run stays near 4 minutes.

Exit status 77 without a GPU or torchvision.  Prints a summary table; writes the JSON (and each
network's convcat.torch.report) to $OUT (or --json).
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

NETS = ("resnet50", "mobilenet_v2", "convnext_tiny")
COMPILE_COST_S = 60   # what one torch.compile of a network is budgeted at
LINES = []


def log(*a):
    s = " ".join(str(x) for x in a)
    LINES.append(s)
    print(s, flush=True)


def build(name, seed):
    import torch
    import torchvision
    torch.manual_seed(seed)
    return getattr(torchvision.models, name)(num_classes=1000)


class Timer:
    """CUDA events on the GPU; perf_counter for --cpu-dry-run."""

    def __init__(self, device):
        import torch
        self.cuda = device == "cuda"
        self.a = torch.cuda.Event(enable_timing=True) if self.cuda else None
        self.b = torch.cuda.Event(enable_timing=True) if self.cuda else None

    def start(self):
        if self.cuda:
            self.a.record()
        else:
            self.t0 = time.perf_counter()

    def stop(self):
        if self.cuda:
            self.b.record()
        else:
            self.t1 = time.perf_counter()

    def ms(self):
        if self.cuda:
            self.b.synchronize()
            return self.a.elapsed_time(self.b)
        return (self.t1 - self.t0) * 1e3


def sync(device):
    import torch
    if device == "cuda":
        torch.cuda.synchronize()


def batches(steps, batch, seed, device, image):
    """The synthetic (images, labels) of every step, drawn from one seeded generator."""
    import torch
    g = torch.Generator(device=device).manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(batch, 3, image, image, device=device, generator=g).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (batch,), device=device, generator=g)
        yield x, y


def train(name, state, backend, args):
    import torch
    import convcat.torch as cct
    model = build(name, args.seed)
    model.load_state_dict(state)
    model = model.to(args.device).to(memory_format=torch.channels_last).train()
    if backend == "convcat":
        cct.convert(model)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    lossf = torch.nn.CrossEntropyLoss()
    losses, events = [], []
    for x, y in batches(args.steps, args.batch, args.seed + 1, args.device, args.image):
        timer = Timer(args.device)
        timer.start()
        with torch.autocast(args.device, dtype=torch.bfloat16):
            loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        timer.stop()
        losses.append(loss.detach().float())
        events.append(timer)
    sync(args.device)
    ms = [t.ms() for t in events]
    out = dict(losses=torch.stack(losses).tolist(), step_ms=ms, first_step_ms=ms[0],
               median_step_ms=statistics.median(ms[5:] if len(ms) > 6 else ms))
    if backend == "convcat":
        rep = cct.report(model)
        out["report"] = rep.counts()
        save_text(f"torch_networks_{name}_train_report.txt", str(rep), args)
    del model, opt
    if args.device == "cuda":
        torch.cuda.empty_cache()
    return out


def images_per_second(fn, x, iters, warm=3):
    import torch
    with torch.no_grad():
        for _ in range(warm):
            fn(x)
        sync(x.device.type)
        timer = Timer(x.device.type)
        timer.start()
        for _ in range(iters):
            fn(x)
        timer.stop()
        return x.shape[0] * iters / (timer.ms() / 1e3)


def autocast_fn(model):
    import torch

    def fwd(x):
        with torch.autocast(x.device.type, dtype=torch.bfloat16):
            return model(x)
    return fwd


def rel(a, b):
    import torch
    a, b = a.double(), b.double()
    return float(torch.linalg.vector_norm(a - b) / torch.linalg.vector_norm(b))


def infer(name, state, args):
    import torch
    import convcat.torch as cct
    model = build(name, args.seed)
    model.load_state_dict(state)
    model = model.to(args.device).to(memory_format=torch.channels_last).eval()
    fused = cct.convert(copy.deepcopy(model))
    out = dict(fusion=list(getattr(fused, "_convcat_notes", [])), batches={})
    g = torch.Generator(device=args.device).manual_seed(args.seed + 2)
    for bs in args.infer_batches:
        x = torch.randn(bs, 3, args.image, args.image, device=args.device, generator=g).to(memory_format=torch.channels_last)
        iters = args.iters or (20 if bs >= 16 else 50)
        row = dict(cudnn_ips=images_per_second(autocast_fn(model), x, iters),
                   convcat_ips=images_per_second(autocast_fn(fused), x, iters))
        with torch.no_grad():
            row["logits_rel_diff"] = rel(autocast_fn(fused)(x).float(), autocast_fn(model)(x).float())
        out["batches"][bs] = row
        log(f"  {name:14s} batch {bs:3d}: cuDNN {row['cudnn_ips']:8.1f} img/s, convcat {row['convcat_ips']:8.1f} img/s "
            f"({row['convcat_ips'] / row['cudnn_ips']:.2f}x), logits rel. diff {row['logits_rel_diff']:.1e}")
    rep = cct.report(fused)
    out["report"] = rep.counts()
    save_text(f"torch_networks_{name}_infer_report.txt", str(rep), args)
    return out, model, fused


def compile_ips(model, bs, args):
    """(images/s, compile seconds) of torch.compile(default backend) of the model's forward, or an error."""
    import torch
    torch._dynamo.reset()
    fn = torch.compile(autocast_fn(model))
    x = torch.randn(bs, 3, args.image, args.image, device=args.device).to(memory_format=torch.channels_last)
    t = time.time()
    with torch.no_grad():
        fn(x)
    sync(args.device)
    secs = time.time() - t
    return images_per_second(fn, x, args.iters or (20 if bs >= 16 else 50)), secs


def save_text(fname, text, args):
    if args.out:
        with open(os.path.join(args.out, fname), "w") as fh:
            fh.write(text + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nets", default=",".join(NETS), help=f"comma list of {', '.join(NETS)} (any torchvision model)")
    ap.add_argument("--steps", type=int, default=50, help="SGD steps per training run (default 50)")
    ap.add_argument("--batch", type=int, default=64, help="training batch (default 64)")
    ap.add_argument("--infer-batches", default="1,64", help="inference batch sizes (default 1,64)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-train", action="store_true")
    ap.add_argument("--no-infer", action="store_true")
    ap.add_argument("--compile", choices=("cudnn", "both", "none"), default="cudnn",
                    help="torch.compile the cuDNN model (default), both models, or none")
    ap.add_argument("--budget-s", type=float, default=240, help="skip compile measurements past this many seconds")
    ap.add_argument("--json", help="JSON output (default $OUT/torch_networks.json)")
    ap.add_argument("--image", type=int, default=224, help=argparse.SUPPRESS)
    ap.add_argument("--iters", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--cpu-dry-run", action="store_true", help=argparse.SUPPRESS)   # checks the script on a CPU
    args = ap.parse_args()
    args.device = "cpu" if args.cpu_dry_run else "cuda"
    args.nets = [n for n in args.nets.split(",") if n]
    args.infer_batches = [int(b) for b in args.infer_batches.split(",") if b]
    args.out = os.environ.get("OUT")
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        print(f"torch_networks: SKIP: {e}")
        return 77
    if not torch.cuda.is_available() and not args.cpu_dry_run:
        print("torch_networks: SKIP: no CUDA GPU")
        return 77
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    import convcat.torch as cct
    from convcat.torch import _runtime as rt
    warnings.simplefilter("ignore", cct.ConvcatTorchWarning)   # report() lists every fallback instead
    torch.backends.cudnn.benchmark = True
    cat = rt.catalog()
    t0 = time.time()
    devname = torch.cuda.get_device_name() if args.device == "cuda" else "CPU (dry run)"
    log(f"# {devname}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}; "
        f"catalog {cat.path if cat else rt.catalog_error()}")
    results = dict(device=devname, torch=torch.__version__, cudnn=torch.backends.cudnn.version(),
                   catalog=cat.path if cat else None, args={k: v for k, v in vars(args).items()}, nets={})
    eval_models = {}
    for name in args.nets:
        state = build(name, args.seed).state_dict()
        r = results["nets"][name] = {}
        if not args.no_train:
            log(f"\n## train {name}: {args.steps} steps, batch {args.batch}")
            for backend in ("cudnn", "convcat"):
                t = time.time()
                r[f"train_{backend}"] = train(name, state, backend, args)
                tr = r[f"train_{backend}"]
                log(f"  {backend:8s} {tr['median_step_ms']:7.2f} ms/step (first step {tr['first_step_ms']:.0f} ms), "
                    f"loss {tr['losses'][0]:.4f} -> {tr['losses'][-1]:.4f}  ({time.time() - t:.0f} s)")
            a, b = r["train_cudnn"]["losses"], r["train_convcat"]["losses"]
            diffs = [abs(x - y) / abs(x) for x, y in zip(a, b)]
            r["loss_max_rel_diff"] = max(diffs)
            r["loss_max_rel_diff_step"] = diffs.index(max(diffs))
            log(f"  loss curves: largest relative difference {max(diffs):.2e} (step {diffs.index(max(diffs))})")
        if not args.no_infer:
            log(f"\n## infer {name}")
            r["infer"], model, fused = infer(name, state, args)
            eval_models[name] = (model, fused)
        if args.device == "cuda":
            torch.cuda.empty_cache()
    if not args.no_infer and args.compile != "none":
        log("\n## torch.compile (default backend)")
        todo = [(bs, name, kind) for bs in sorted(args.infer_batches, reverse=True) for name in args.nets
                for kind in (("cudnn", "convcat") if args.compile == "both" else ("cudnn",))]
        for bs, name, kind in todo:
            slot = results["nets"][name]["infer"]["batches"][bs]
            if time.time() - t0 + COMPILE_COST_S > args.budget_s:
                slot[f"compile_{kind}"] = "skipped: time budget (--budget-s)"
                log(f"  {name} batch {bs} {kind}: skipped (time budget)")
                continue
            try:
                ips, secs = compile_ips(eval_models[name][0 if kind == "cudnn" else 1], bs, args)
                slot[f"compile_{kind}_ips"], slot[f"compile_{kind}_s"] = ips, secs
                log(f"  {name:14s} batch {bs:3d} {kind:8s}: {ips:8.1f} img/s (compiled in {secs:.0f} s)")
            except Exception as e:   # report, go on
                slot[f"compile_{kind}"] = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
                log(f"  {name} batch {bs} {kind}: compile failed: {slot[f'compile_{kind}']}")
    results["seconds"] = time.time() - t0
    summary(results, args)
    path = args.json or (os.path.join(args.out, "torch_networks.json") if args.out else None)
    if path:
        with open(path, "w") as fh:
            json.dump(results, fh, indent=1)
    if args.out:
        with open(os.path.join(args.out, "torch_networks.txt"), "w") as fh:
            fh.write("\n".join(LINES) + "\n")
    return 0


def _fb(rep):
    return f"{rep['fell_back']}/{rep['ran']} ({rep['fprop']['fallback']}/{rep['dgrad']['fallback']}/{rep['wgrad']['fallback']})"


def summary(res, args):
    log(f"\n## summary ({res['seconds']:.0f} s)")
    if not args.no_train:
        log(f"training: batch {args.batch}, bf16 autocast, channels_last, {args.steps} SGD steps, same seed and data")
        log(f"{'network':14s} {'cuDNN ms':>9s} {'convcat ms':>10s} {'speedup':>7s} {'1st step cuDNN/convcat':>23s} "
            f"{'loss max rel.diff':>17s}  layers fell back (fprop/dgrad/wgrad)")
        for name, r in res["nets"].items():
            if "train_cudnn" not in r:
                continue
            a, b = r["train_cudnn"], r["train_convcat"]
            log(f"{name:14s} {a['median_step_ms']:9.2f} {b['median_step_ms']:10.2f} "
                f"{a['median_step_ms'] / b['median_step_ms']:7.2f} "
                f"{a['first_step_ms']:10.0f} / {b['first_step_ms']:<10.0f} {r['loss_max_rel_diff']:17.2e}  "
                f"{_fb(b['report'])}")
    if not args.no_infer:
        log("inference: eval, bf16 autocast, channels_last; convcat with BatchNorm folded and activations/residuals "
            "fused; images/s")
        log(f"{'network':14s} {'batch':>5s} {'cuDNN':>9s} {'convcat':>9s} {'ratio':>6s} {'compiled':>9s} "
            f"{'logits rel.diff':>15s}  layers fell back (fprop)")
        for name, r in res["nets"].items():
            if "infer" not in r:
                continue
            for bs, row in r["infer"]["batches"].items():
                comp = row.get("compile_cudnn_ips")
                comp = f"{comp:9.1f}" if comp else f"{'-':>9s}"
                log(f"{name:14s} {bs:5d} {row['cudnn_ips']:9.1f} {row['convcat_ips']:9.1f} "
                    f"{row['convcat_ips'] / row['cudnn_ips']:6.2f} {comp} {row['logits_rel_diff']:15.1e}  "
                    f"{r['infer']['report']['fell_back']}/{r['infer']['report']['ran']}"
                    + (f"  (convcat compiled {row['compile_convcat_ips']:.1f})" if row.get("compile_convcat_ips") else ""))
            log(f"{'':14s} {r['infer']['fusion'][0] if r['infer']['fusion'] else ''}")


if __name__ == "__main__":
    sys.exit(main())
