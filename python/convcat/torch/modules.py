"""Conv1d, Conv2d, Conv3d: torch.nn's modules (subclasses: the same arguments, parameters, state
dicts and isinstance answers) whose forward runs convcat's operators."""
import torch
from torch import nn
from torch.nn import functional as F

from . import _runtime as rt
from .functional import conv


class _ConvcatConv:
    """What the three classes add to nn.ConvNd: forward(input, residual=None) through convcat, an
    epilogue activation (inference: set by convert()), and the tag report() and warnings use."""

    activation = "none"

    def _convcat_init(self, activation="none", name=None):
        self.activation = activation
        self._convcat_tag = rt.new_tag()
        self.fusion = getattr(self, "fusion", None) or {}   # what convert() folded/fused into it
        rt.set_name(self._convcat_tag, name or self._convcat_default_name())
        dims = len(self.kernel_size)
        if dims > 1 and not self.weight.is_meta:   # keep the filter as K,(T,)R,S,C/groups memory: no copy per call
            with torch.no_grad():
                self.weight.data = self.weight.data.contiguous(memory_format=rt._cl_format(dims))

    def _convcat_default_name(self):
        return (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
                f"{'x'.join(map(str, self.kernel_size))})")

    def _convcat_retag(self, name=None):
        """A new tag (after a copy: copies would otherwise share records)."""
        self._convcat_tag = rt.new_tag()
        rt.set_name(self._convcat_tag, name or self._convcat_default_name())

    def __setstate__(self, state):
        """Copies (copy.deepcopy, pickle) get their own tag: records of one layer are not another's."""
        super().__setstate__(state)
        if "_convcat_tag" in state:
            self._convcat_retag(rt._names.get(state["_convcat_tag"]))

    def forward(self, input, residual=None):
        return self._conv_forward(input, self.weight, self.bias, residual)

    def _conv_forward(self, input, weight, bias, residual=None):
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            padding = 0
        else:
            padding = self.padding
        return conv(input, weight, bias, self.stride, padding, self.dilation, self.groups, residual=residual,
                    activation=self.activation, layer=self._convcat_tag)

    def extra_repr(self):
        s = super().extra_repr()
        if self.activation != "none":
            s += f", activation={self.activation}"
        if self.fusion:
            s += ", fused=" + "+".join(f"{k}:{v}" for k, v in self.fusion.items())
        return s


class Conv1d(_ConvcatConv, nn.Conv1d):
    """nn.Conv1d on convcat.  Input (N, C, W) is read without a copy when its memory is (N, W, C), i.e.
    strides (W*C, 1, C) (what this module's output has); a contiguous (N, C, W) input is copied
    into that layout (warned once).  The output is (N, K, Q) with strides (Q*K, 1, K)."""

    def __init__(self, *args, activation="none", **kwargs):
        nn.Conv1d.__init__(self, *args, **kwargs)
        self._convcat_init(activation)


class Conv2d(_ConvcatConv, nn.Conv2d):
    """nn.Conv2d on convcat: channels_last input read without a copy (others copied, warned once);
    channels_last output."""

    def __init__(self, *args, activation="none", **kwargs):
        nn.Conv2d.__init__(self, *args, **kwargs)
        self._convcat_init(activation)


class Conv3d(_ConvcatConv, nn.Conv3d):
    """nn.Conv3d on convcat: channels_last_3d input read without a copy (others copied, warned once);
    channels_last_3d output."""

    def __init__(self, *args, activation="none", **kwargs):
        nn.Conv3d.__init__(self, *args, **kwargs)
        self._convcat_init(activation)


CONVERTS = {nn.Conv1d: Conv1d, nn.Conv2d: Conv2d, nn.Conv3d: Conv3d}
CONVCAT_TYPES = (Conv1d, Conv2d, Conv3d)


def adopt(module, name=None):
    """Turn an nn.Conv1d/2d/3d (exactly that class) into its convcat class in place: the same object,
    parameters, hooks and state dict; only forward changes."""
    cls = CONVERTS[type(module)]
    module.__class__ = cls
    module._convcat_init("none", name)
    return module
