"""convert(model): nn.Conv1d/2d/3d -> convcat's modules in place; in eval mode, BatchNorm folded into
the convolution and the following activation and residual add fused into its epilogue."""
import copy
import operator

import torch
from torch import fx, nn
from torch.nn.utils.fusion import fuse_conv_bn_weights

from . import _runtime as rt
from .modules import CONVCAT_TYPES, CONVERTS, adopt

_BN = {1: (nn.BatchNorm1d,), 2: (nn.BatchNorm2d,), 3: (nn.BatchNorm3d,)}
_ACT_MODULES = {nn.ReLU: "relu", nn.SiLU: "silu"}
_ACT_FUNCTIONS = {torch.relu: "relu", torch.relu_: "relu", nn.functional.relu: "relu", nn.functional.silu: "silu",
                  nn.functional.gelu: "gelu", torch.nn.functional.relu_: "relu"}
_ACT_METHODS = {"relu": "relu", "relu_": "relu"}


def convert(model, *, fuse=None):
    """Replace every nn.Conv1d, nn.Conv2d and nn.Conv3d of `model` (those exact classes; subclasses
    and ConvTranspose are left alone and listed by report()) by convcat's module, in place: the same
    objects, parameters (2D/3D filters re-laid channels_last, values unchanged), hooks and state dict.

    fuse (default: not model.training): also fold each BatchNorm that alone reads a convolution's
    output into its weight and bias, and fuse the activation (ReLU, SiLU, exact GELU) and the residual
    add that follow into its epilogue.  This needs eval mode (it uses the running statistics) and
    returns a NEW module (the model is deep-copied first; the original keeps its convcat
    convolutions): a torch.fx GraphModule where torch.fx can trace the model (residual adds are only
    found that way), else the copy with fusions inside each nn.Sequential.  Use the return value."""
    for name, m in model.named_modules():
        if type(m) in CONVERTS:
            adopt(m, name or None)
        elif isinstance(m, CONVCAT_TYPES) and name:
            rt.set_name(m._convcat_tag, name)
    if fuse is None:
        fuse = not model.training
    if not fuse:
        return model
    if model.training:
        raise ValueError("convcat.torch.convert(fuse=True) folds BatchNorm with its running statistics: call "
                         "model.eval() first (in training only the bias is fused)")
    return fuse_for_inference(model)


class Tracer(fx.Tracer):
    """torch.fx's tracer with convcat's convolutions as leaves (their forward computes shapes in
    Python, which symbolic tracing cannot follow); trace converted models with it."""

    def is_leaf_module(self, m, qualname):
        return isinstance(m, CONVCAT_TYPES) or super().is_leaf_module(m, qualname)


def _retag(model):
    for name, m in model.named_modules():
        if isinstance(m, CONVCAT_TYPES):
            m._convcat_retag(name or None)


def fuse_for_inference(model):
    """The fused copy of an eval-mode model whose convolutions are convcat's (see convert)."""
    work = copy.deepcopy(model)
    _retag(work)
    try:
        tracer = Tracer()
        graph = tracer.trace(work)
        gm = fx.GraphModule(tracer.root, graph, type(work).__name__)
    except Exception as e:   # dynamic control flow, unsupported ops: no graph to read adds from
        counts = _fuse_sequential(work)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        work._convcat_notes = [f"torch.fx could not trace the model ({type(e).__name__}: {first[:120]}): "
                               f"BatchNorm folded and activations fused only inside nn.Sequential "
                               f"({_counts_text(counts)}); residual adds not fused"]
        return work
    counts = _fuse_graph(gm)
    gm._convcat_notes = [f"torch.fx graph: {_counts_text(counts)}"]
    _retag(gm)
    return gm


def _counts_text(c):
    return (f"{c['bn']} BatchNorm folded, {c['activation']} activations and {c['residual']} residual adds fused "
            f"into {c['fused']} convolutions")


def _foldable(bn, conv):
    dims = len(conv.kernel_size)
    return (type(bn) in _BN[dims] and not bn.training and bn.track_running_stats and bn.running_mean is not None
            and bn.num_features == conv.out_channels)


def _fold(conv, bn):
    w, b = fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    dims = len(conv.kernel_size)
    if dims > 1:
        w = nn.Parameter(w.detach().contiguous(memory_format=rt._cl_format(dims)), w.requires_grad)
    conv.weight = w
    conv.bias = b


def _only_user(node):
    users = list(node.users)
    return users[0] if len(users) == 1 else None


def _add_operand(u, cur):
    """The other operand if u adds it to cur out of place (or in place into cur), else None."""
    if u.kwargs or len(u.args) != 2:
        return None
    a, b = u.args
    if u.op == "call_function" and u.target in (operator.add, torch.add):
        other = b if a is cur else a if b is cur else None
    elif (u.op == "call_function" and u.target is operator.iadd) or (u.op == "call_method" and u.target in ("add", "add_")):
        other = b if a is cur else None   # in place into the other operand would change a tensor others read
    else:
        return None
    return other if isinstance(other, fx.Node) and other is not cur else None


def _activation(u, cur, modules):
    if u.op == "call_module" and u.args == (cur,):
        m = modules.get(u.target)
        if type(m) in _ACT_MODULES:
            return _ACT_MODULES[type(m)]
        if type(m) is nn.GELU and m.approximate == "none":
            return "gelu"
    if u.op == "call_function" and u.target in _ACT_FUNCTIONS and u.args == (cur,):
        if u.target is nn.functional.gelu and u.kwargs.get("approximate", "none") != "none":
            return None
        if set(u.kwargs) - {"inplace", "approximate"}:
            return None
        return _ACT_FUNCTIONS[u.target]
    if u.op == "call_method" and u.target in _ACT_METHODS and u.args == (cur,) and not u.kwargs:
        return _ACT_METHODS[u.target]
    return None


def _set_submodule(root, target, module):
    parent, _, leaf = target.rpartition(".")
    setattr(root.get_submodule(parent) if parent else root, leaf, module)


def _fuse_graph(gm):
    modules = dict(gm.named_modules())
    counts = dict(bn=0, activation=0, residual=0, fused=0)
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or getattr(node, "_erased", False):
            continue
        conv = modules.get(node.target)
        if not isinstance(conv, CONVCAT_TYPES) or conv.activation != "none" or len(node.args) != 1 or node.kwargs:
            continue
        chain, cur, fusion, bn, residual, act = [node], node, {}, None, None, None
        u = _only_user(cur)
        if u is not None and u.op == "call_module" and u.args == (cur,) and not u.kwargs and \
                _foldable(modules.get(u.target), conv):
            bn, fusion["bn"] = modules[u.target], u.target
            chain.append(u)
            cur = u
        u = _only_user(cur)
        if u is not None and _add_operand(u, cur) is not None:
            residual, fusion["residual"] = _add_operand(u, cur), "add"
            chain.append(u)
            cur = u
            u = _only_user(cur)
        if u is not None:
            act = _activation(u, cur, modules)
            if act:
                fusion["activation"] = act
                chain.append(u)
                cur = u
        if len(chain) == 1:
            continue
        fused = copy.deepcopy(conv)
        fused._convcat_retag(node.target)
        if bn is not None:
            _fold(fused, bn)
        fused.activation = act or "none"
        fused.fusion = fusion
        _set_submodule(gm, node.target, fused)
        modules[node.target] = fused
        with gm.graph.inserting_after(cur):
            new = gm.graph.call_module(node.target, (node.args[0],) if residual is None else (node.args[0], residual))
        cur.replace_all_uses_with(new)
        for n in reversed(chain):
            gm.graph.erase_node(n)
        counts["fused"] += 1
        counts["bn"] += bn is not None
        counts["residual"] += residual is not None
        counts["activation"] += act is not None
    gm.graph.lint()
    gm.delete_all_unused_submodules()
    gm.recompile()
    return counts


def _fuse_sequential(model):
    counts = dict(bn=0, activation=0, residual=0, fused=0)
    for seq in list(model.modules()):
        if not isinstance(seq, nn.Sequential):
            continue
        names = list(seq._modules)
        for i, name in enumerate(names):
            conv = seq._modules[name]
            if not isinstance(conv, CONVCAT_TYPES) or conv.activation != "none":
                continue
            j, fusion = i + 1, {}
            if j < len(names) and _foldable(seq._modules[names[j]], conv):
                _fold(conv, seq._modules[names[j]])
                fusion["bn"] = names[j]
                seq._modules[names[j]] = nn.Identity()
                j += 1
            nxt = seq._modules[names[j]] if j < len(names) else None
            act = _ACT_MODULES.get(type(nxt)) or ("gelu" if type(nxt) is nn.GELU and nxt.approximate == "none" else None)
            if act:
                conv.activation = fusion["activation"] = act
                seq._modules[names[j]] = nn.Identity()
            if fusion:
                conv.fusion = fusion
                counts["fused"] += 1
                counts["bn"] += "bn" in fusion
                counts["activation"] += "activation" in fusion
    return counts
