"""report(model): every convolution layer, what ran each of its passes (the convcat kernel and its
family: tma, gather (C = 3 stems, odd channel counts, grouped convolutions) or direct (depthwise);
or cuDNN and the reason convcat's catalog has no kernel for it), and what convert() fused into it."""
import collections
import dataclasses

from torch import nn

from . import _runtime as rt
from .modules import CONVCAT_TYPES

OPS = ("fprop", "dgrad", "wgrad")


@dataclasses.dataclass
class LayerReport:
    name: str
    module: str            # e.g. "Conv2d 64->128 3x3 stride 2"
    converted: bool        # a convcat module (else: a convolution convert() leaves alone)
    fusion: dict           # {"bn": "bn1", "activation": "relu", "residual": "add"}
    ops: dict              # op -> rt.OpRecord (the passes that ran since the process started; last call)
    note: str = ""
    ran: bool = False      # did it run since the process started (or is it not convcat's)

    @property
    def fell_back(self):
        """Did any pass that ran use PyTorch's convolution instead of convcat's?"""
        return not self.converted or any(r.ran != "convcat" for r in self.ops.values())

    def kernel(self, op):
        r = self.ops.get(op)
        return r.key if r is not None and r.ran == "convcat" else None


class Report(list):
    """A list of LayerReport; str() is the table report() prints."""

    def __init__(self, rows, notes):
        super().__init__(rows)
        self.notes = notes

    @property
    def fallbacks(self):
        """Layers any of whose passes ran on PyTorch's convolution (or that were not converted)."""
        return [r for r in self if r.ran and r.fell_back]

    def counts(self):
        ran = [r for r in self if r.ran]
        out = dict(layers=len(self), ran=len(ran), convcat=sum(not r.fell_back for r in ran),
                   fell_back=len(self.fallbacks), not_converted=sum(not r.converted for r in self))
        for op in OPS:
            recs = [r.ops[op] for r in self if op in r.ops]
            out[op] = dict(convcat=sum(x.ran == "convcat" for x in recs),
                           fallback=sum(x.ran != "convcat" for x in recs),
                           families=dict(collections.Counter(x.family for x in recs if x.ran == "convcat")))
        return out

    def __str__(self):
        return self.text()

    def text(self, problems=False):
        """The table; problems=True adds each pass's problem text (the keys of a pin dictionary)."""
        c = self.counts()
        cat = rt.catalog()
        lines = [f"convcat: {c['layers']} convolution layers, {c['ran']} run: {c['convcat']} entirely on convcat, "
                 f"{c['fell_back']} with a pass on PyTorch's convolution"
                 + (f", {c['not_converted']} not converted" if c['not_converted'] else "")]
        lines.append(f"  catalog: {cat.path or '(convcat_open_default)'} ({len(cat)} kernels)" if cat is not None
                     else f"  {rt.catalog_error()}")
        for op in OPS:
            if c[op]["convcat"] or c[op]["fallback"]:
                fams = ", ".join(f"{f or '?'} {n}" for f, n in sorted(c[op]["families"].items()))
                lines.append(f"  {op}: {c[op]['convcat']} on convcat" + (f" ({fams})" if fams else "")
                             + f", {c[op]['fallback']} fell back")
        lines += [f"  {n}" for n in self.notes]
        for r in self:
            fused = ", ".join(f"{v} folded" if k == "bn" else f"{v} fused" if k == "activation" else "residual add fused"
                              for k, v in r.fusion.items())
            lines.append(f"{r.name or '(model)'}: {r.module}" + (f" [{fused}]" if fused else ""))
            if r.note:
                lines.append(f"    {r.note}")
            if r.converted and not r.ops:
                lines.append("    not run yet")
            for op in OPS:
                rec = r.ops.get(op)
                if rec is None:
                    continue
                if rec.ran == "convcat":
                    what = f"convcat {rec.key}" + (f" ({rec.note})" if rec.note else "")
                else:
                    what = f"{rec.ran}: {rec.reason}"
                    if rec.would:
                        what += f" [on sm90a it {rec.would}]"
                lines.append(f"    {op}  {what}")
                if problems:
                    lines.append(f"           problem {rec.problem}")
                if rec.copies:
                    lines.append(f"           copied into convcat's layout: {', '.join(rec.copies)}")
        return "\n".join(lines)


def _describe(m):
    k = "x".join(map(str, m.kernel_size))
    s = f"{type(m).__name__} {m.in_channels}->{m.out_channels} {k}"
    if any(v != 1 for v in m.stride):
        s += f" stride {'x'.join(map(str, m.stride))}"
    if any(v != 1 for v in m.dilation):
        s += f" dilation {'x'.join(map(str, m.dilation))}"
    if m.groups != 1:
        s += f" groups {m.groups}"
    return s


def report(model, file=None, problems=False):
    """The Report of every convolution in `model` (convcat's and those convert() leaves alone); printed
    to `file` when given (with each pass's problem text if `problems`).  Each pass that ran shows the
    kernel (the per-op counts say how many ran on each kernel family: stems and grouped convolutions
    on gather kernels, depthwise ones on direct kernels, where the catalog's query says they can) or
    the reason it fell back (for calls on CPU tensors, also what the sm90a catalog would do), for the
    layer's last call."""
    rows = []
    for name, m in model.named_modules():
        if isinstance(m, CONVCAT_TYPES):
            ops = {op: rec for op, rec in rt.records(m._convcat_tag).items()}
            rows.append(LayerReport(name, _describe(m) + (f", activation {m.activation}" if m.activation != "none" else ""),
                                    True, dict(m.fusion), ops))
        elif isinstance(m, nn.modules.conv._ConvNd):
            rows.append(LayerReport(name, _describe(m), False, {}, {},
                                    note=f"not converted: {type(m).__module__}.{type(m).__name__} runs PyTorch's "
                                         f"convolution (convert() converts nn.Conv1d, nn.Conv2d, nn.Conv3d)"))
    for r in rows:
        r.ran = bool(r.ops) or not r.converted
    rep = Report(rows, list(getattr(model, "_convcat_notes", [])))
    if file is not None:
        print(rep.text(problems), file=file)
    return rep
