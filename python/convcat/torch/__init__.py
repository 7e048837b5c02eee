"""convcat for PyTorch: custom operators, autograd, drop-in Conv1d/2d/3d modules, convert(model),
report(model).

    import convcat.torch as cct
    model = cct.convert(model)            # nn.ConvNd -> convcat's modules, in place
    model = model.to(memory_format=torch.channels_last)
    with torch.autocast("cuda", torch.bfloat16):
        loss = model(x).sum(); loss.backward()
    print(cct.report(model))              # each layer: the kernel, or why it fell back to cuDNN

    fused = cct.convert(model.eval())     # eval: BatchNorm folded, activation/residual fused (new module)

Settings: configure(...) or the environment: CONVCAT_LIBRARY, CONVCAT_CATALOG, CONVCAT_PIN
(comma-separated kernel keys), CONVCAT_AUTOTUNE=1 with CONVCAT_TUNE_CACHE=file,
CONVCAT_ALLOW_SM100A=1, CONVCAT_DISABLE=1.
"""

from . import ops  # noqa: F401  (registers torch.ops.convcat.*)
from ._runtime import ConvcatTorchWarning, configure, tf32_allowed  # noqa: F401
from .convert import convert, fuse_for_inference  # noqa: F401
from .functional import conv  # noqa: F401
from .modules import Conv1d, Conv2d, Conv3d  # noqa: F401
from .report import Report, report  # noqa: F401

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvcatTorchWarning", "Report", "configure", "conv", "convert",
           "fuse_for_inference", "report", "tf32_allowed"]
