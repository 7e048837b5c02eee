"""convcat.torch.conv: torch.nn.functional.conv1d/2d/3d on convcat's operators."""
import torch

from . import _runtime as rt
from . import ops


def _ntuple(v, n, what):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"convcat: {what} {v} for a {n}D convolution")
    return v


def padding_pairs(padding, filt, dilation, stride, dims):
    """(pad_lo, pad_hi) per axis for F.conv's padding argument: an int or a tuple (both sides),
    'valid', 'same' (PyTorch's rule: the odd unit of padding goes to the high side), or a tuple of
    (lo, hi) pairs."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * dims, (0,) * dims
        if padding != "same":
            raise ValueError(f"convcat: padding {padding!r} (valid, same, or numbers)")
        if any(s != 1 for s in stride):
            raise ValueError("convcat: padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, filt)]
        lo = tuple(t // 2 for t in total)
        return lo, tuple(t - l for t, l in zip(total, lo))
    if isinstance(padding, int):
        return (padding,) * dims, (padding,) * dims
    padding = tuple(padding)
    if padding and all(isinstance(p, (tuple, list)) for p in padding):
        if len(padding) != dims:
            raise ValueError(f"convcat: padding {padding} for a {dims}D convolution")
        return tuple(p[0] for p in padding), tuple(p[1] for p in padding)
    pad = _ntuple(padding, dims, "padding")
    return pad, pad


def _autocast(t, device_type, dtype):
    if t is not None and t.is_floating_point() and t.dtype != dtype:
        return t.to(dtype)
    return t


def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *, residual=None, activation="none",
         alpha=1.0, beta=None, layer=""):
    """act(alpha * conv(input, weight) + bias + beta * residual) on convcat where it can run, else
    PyTorch's convolution (cuDNN); F.conv1d/2d/3d's arguments, plus `padding` as ((lo, hi), ...) pairs,
    a residual (beta defaults to 1 with one), an activation ("none", "relu", "gelu", "silu"; no
    backward), alpha, and `layer`, the name report() and the warnings use.  Under torch.autocast the
    convolution runs in the autocast dtype, as F.conv does."""
    dims = input.dim() - 2
    if dims not in (1, 2, 3):
        raise ValueError(f"convcat: input of {input.dim()} dimensions: (N, C, W), (N, C, H, W) or (N, C, D, H, W)")
    stride = _ntuple(stride, dims, "stride")
    dilation = _ntuple(dilation, dims, "dilation")
    pad_lo, pad_hi = padding_pairs(padding, weight.shape[2:], dilation, stride, dims)
    act = rt.ACTIVATIONS[activation] if isinstance(activation, str) else int(activation)
    beta = (1.0 if residual is not None else 0.0) if beta is None else float(beta)
    dev = input.device.type
    if torch.is_autocast_enabled(dev):
        dt = torch.get_autocast_dtype(dev)
        input, weight = _autocast(input, dev, dt), _autocast(weight, dev, dt)
        bias, residual = _autocast(bias, dev, dt), _autocast(residual, dev, dt)
    if residual is not None:
        out = [input.shape[0], weight.shape[0]] + [
            (i + lo + hi - d * (k - 1) - 1) // s + 1
            for i, k, lo, hi, s, d in zip(input.shape[2:], weight.shape[2:], pad_lo, pad_hi, stride, dilation)]
        if list(residual.shape) != out:   # a broadcasting add: not the epilogue's
            y = ops.forward(input, weight, bias, None, stride, pad_lo, pad_hi, dilation, groups, 0, float(alpha), 0.0,
                            layer)
            return rt.apply_activation(y + beta * residual, act)
    return ops.forward(input, weight, bias, residual, stride, pad_lo, pad_hi, dilation, groups, act, float(alpha), beta,
                       layer)
