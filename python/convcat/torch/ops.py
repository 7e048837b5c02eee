"""PyTorch custom operators (torch.library) for convcat's three convolution passes, with fake
implementations (shapes and strides only, so torch.compile and torch.export can trace them) and the
autograd formula of the forward one.

    torch.ops.convcat.conv_forward(x, weight, bias, residual, stride, pad_lo, pad_hi, dilation, groups,
                                   activation, alpha, beta, layer) -> y
        y = act(alpha * conv(x, weight) + bias + beta * residual), in x's dtype
    torch.ops.convcat.conv_dgrad(dy, weight, x_shape, stride, pad_lo, pad_hi, dilation, groups, layer) -> dx
    torch.ops.convcat.conv_wgrad(dy, x, weight_shape, stride, pad_lo, pad_hi, dilation, groups, layer) -> dw

Shapes are PyTorch's: x (N, C, *spatial), weight (K, C/groups, *filter), y (N, K, *out).  Every output is
a new packed channel-innermost tensor (channels_last / channels_last_3d; 1D: (N, C, W) with strides
(W*C, 1, C)), whichever implementation ran: convcat where the catalog has a kernel for the problem,
else PyTorch's own convolution (cuDNN on CUDA tensors), recorded under `layer` for report().
Padding is per axis and side (pad_lo, pad_hi): asymmetric padding runs on convcat directly.

Autograd: conv_forward's backward calls conv_dgrad and conv_wgrad for the input and weight
gradients, sums dy for the bias and scales it by beta for the residual.  `forward(...)` (what
convcat.torch's modules and functional call) takes the operator where torch.compile or export
traces and, in eager mode, an autograd Function over the operators' own functions: the same
computation and backward without the custom operators' dispatch (about 120 us of host time a
forward call, and more in backward).  A fused activation has no
backward (fusion is for inference); neither have conv_dgrad and conv_wgrad (no double backward).
"""
from typing import Optional, Sequence

import torch
from torch import Tensor

from . import _runtime as rt


def _out_shape(x_shape, w_shape, stride, pad_lo, pad_hi, dilation):
    out = [x_shape[0], w_shape[0]]
    for i, k, lo, hi, s, d in zip(x_shape[2:], w_shape[2:], pad_lo, pad_hi, stride, dilation):
        o = (i + lo + hi - d * (k - 1) - 1) // s + 1
        torch._check(o >= 1, lambda: f"convcat: the filter does not fit the padded input ({list(x_shape)}, "
                                     f"filter {list(w_shape)}, padding {list(pad_lo)}/{list(pad_hi)})")
        out.append(o)
    return out


def _geo(x_shape, w_shape, stride, pad_lo, pad_hi, dilation, groups):
    return rt.geometry(len(x_shape) - 2, x_shape, w_shape, stride, pad_lo, pad_hi, dilation, groups)


@torch.library.custom_op("convcat::conv_forward", mutates_args=())
def conv_forward(x: Tensor, weight: Tensor, bias: Optional[Tensor], residual: Optional[Tensor], stride: Sequence[int],
                 pad_lo: Sequence[int], pad_hi: Sequence[int], dilation: Sequence[int], groups: int, activation: int,
                 alpha: float, beta: float, layer: str) -> Tensor:
    _out_shape(x.shape, weight.shape, stride, pad_lo, pad_hi, dilation)   # the same errors as the fake
    geo = _geo(x.shape, weight.shape, stride, pad_lo, pad_hi, dilation, groups)
    return rt.fprop(x, weight, bias, residual, geo, activation, alpha, beta, layer)


@conv_forward.register_fake
def _conv_forward_fake(x, weight, bias, residual, stride, pad_lo, pad_hi, dilation, groups, activation, alpha, beta,
                       layer):
    shape = _out_shape(x.shape, weight.shape, stride, pad_lo, pad_hi, dilation)
    return rt.empty_cl(shape, x.dtype, x.device)


@torch.library.custom_op("convcat::conv_dgrad", mutates_args=())
def conv_dgrad(dy: Tensor, weight: Tensor, x_shape: Sequence[int], stride: Sequence[int], pad_lo: Sequence[int],
               pad_hi: Sequence[int], dilation: Sequence[int], groups: int, layer: str) -> Tensor:
    geo = _geo(x_shape, weight.shape, stride, pad_lo, pad_hi, dilation, groups)
    return rt.dgrad(dy, weight, geo, layer)


@conv_dgrad.register_fake
def _conv_dgrad_fake(dy, weight, x_shape, stride, pad_lo, pad_hi, dilation, groups, layer):
    return rt.empty_cl(list(x_shape), dy.dtype, dy.device)


@torch.library.custom_op("convcat::conv_wgrad", mutates_args=())
def conv_wgrad(dy: Tensor, x: Tensor, weight_shape: Sequence[int], stride: Sequence[int], pad_lo: Sequence[int],
               pad_hi: Sequence[int], dilation: Sequence[int], groups: int, layer: str) -> Tensor:
    geo = _geo(x.shape, weight_shape, stride, pad_lo, pad_hi, dilation, groups)
    return rt.wgrad(dy, x, geo, layer)


@conv_wgrad.register_fake
def _conv_wgrad_fake(dy, x, weight_shape, stride, pad_lo, pad_hi, dilation, groups, layer):
    return rt.empty_cl(list(weight_shape), dy.dtype, dy.device)


def _setup_context(ctx, inputs, output):
    x, weight, bias, residual, stride, pad_lo, pad_hi, dilation, groups, activation, alpha, beta, layer = inputs
    ctx.save_for_backward(x, weight)
    ctx.conv = (list(stride), list(pad_lo), list(pad_hi), list(dilation), groups, layer)
    ctx.activation, ctx.alpha, ctx.beta = activation, alpha, beta
    ctx.bias_dtype = bias.dtype if bias is not None else None
    ctx.residual_dtype = residual.dtype if residual is not None else None


def _backward(ctx, grad):
    x, weight = ctx.saved_tensors
    need = ctx.needs_input_grad
    if ctx.activation != 0 and any(need[:4]):
        raise RuntimeError("convcat: a convolution with a fused activation has no backward (activation fusion is "
                           "for inference: convert() fuses only models in eval mode)")
    stride, pad_lo, pad_hi, dilation, groups, layer = ctx.conv
    geo = getattr(ctx, "geo", None)   # the eager path's forward geometry: its passes run without the operators
    g = grad * ctx.alpha if ctx.alpha != 1.0 else grad
    dx = dw = db = dres = None
    if need[0]:
        dx = (rt.dgrad(g, weight, geo, layer) if geo is not None else
              torch.ops.convcat.conv_dgrad(g, weight, list(x.shape), stride, pad_lo, pad_hi, dilation, groups, layer))
    if need[1]:
        dw = (rt.wgrad(g, x, geo, layer) if geo is not None else
              torch.ops.convcat.conv_wgrad(g, x, list(weight.shape), stride, pad_lo, pad_hi, dilation, groups, layer))
        dw = dw.to(weight.dtype)
    if need[2]:
        db = grad.sum(dim=[0] + list(range(2, grad.dim()))).to(ctx.bias_dtype)
    if need[3]:
        dres = (grad * ctx.beta).to(ctx.residual_dtype)
    return dx, dw, db, dres, None, None, None, None, None, None, None, None, None


torch.library.register_autograd("convcat::conv_forward", _backward, setup_context=_setup_context)


class _EagerForward(torch.autograd.Function):
    """conv_forward outside torch.compile: the operator's own function and backward, without the
    custom operators' dispatch; the geometry is made once for the three passes."""

    @staticmethod
    def forward(ctx, x, weight, bias, residual, stride, pad_lo, pad_hi, dilation, groups, activation, alpha, beta, layer):
        _out_shape(x.shape, weight.shape, stride, pad_lo, pad_hi, dilation)
        ctx.geo = _geo(x.shape, weight.shape, stride, pad_lo, pad_hi, dilation, groups)
        y = rt.fprop(x, weight, bias, residual, ctx.geo, activation, alpha, beta, layer)
        _setup_context(ctx, (x, weight, bias, residual, stride, pad_lo, pad_hi, dilation, groups, activation, alpha,
                             beta, layer), y)
        return y

    backward = staticmethod(_backward)


def forward(*inputs):
    """torch.ops.convcat.conv_forward's arguments: the operator where torch.compile (or export)
    traces, else its eager path."""
    if torch.compiler.is_compiling():
        return torch.ops.convcat.conv_forward(*inputs)
    return _EagerForward.apply(*inputs)
