"""What the TMA templates of both arches share (templates/common/): the
context their common parts print, computed once here for render.py (sm90a)
and sm100.py (sm100a).

A TMA kernel's source is a short top-level template (templates/ARCH_conv.cu.j2)
that includes parts by role; the context names the parts a key's kernel uses
(lists and template names), and every number, offset and C fragment the parts
print comes from Python: this module, render.py, sm100.py, space.py.
"""
from __future__ import annotations

from . import space

PACK_FN = {"bf16": "cvc_pack_bf16x2", "f16": "cvc_pack_f16x2"}
UNPACK_FN = {"bf16": "cvc_unpack_bf16x2", "f16": "cvc_unpack_f16x2"}


def tma_coords(dims: int, fn: str) -> dict:
    """The coordinate lists of the producer's TMA loads for a `dims`-D convolution
    (common/loads_*.j2): fn, the load functions' prefix (cvc_tma_, or cvc_tma2_ for
    an sm100a pair); rank, their tensor rank (channels, the spatial axes, images or
    filters); origin, the im2col base pixel (w0, h0, d0, img); tap_offsets, the
    im2col offsets of tap (s, r, t); taps, that tap in a filter tile's coordinates;
    flipped_taps, the filter tap dgrad's tap (s, r, t) reads; column_offsets, the
    im2col offsets of wgrad's column j (common/wgrad_columns.j2)."""
    axes, taps = ("w", "h", "d")[:dims], ("s", "r", "t")[:dims]
    return dict(
        fn=fn, rank=dims + 2,
        origin=", ".join(f"{a}0" for a in axes) + ", img",
        tap_offsets=", ".join(f"(uint16_t)({t} * p->dil_{a})" for a, t in zip(axes, taps)),
        taps=", ".join(taps),
        flipped_taps=", ".join(f"p->tap0_{a} - {t} * p->tap_step_{a}" for a, t in zip(axes, taps)),
        column_offsets=", ".join(("(uint16_t)bo[j]", "(uint16_t)(bo[j] >> 16)", "bd[j]")[:dims]))


def smem_map(cfg) -> dict:
    """The shared-memory map a template prints (common/smem_map.j2): SMEM_<region>
    offsets, the map's end, its base's alignment and the size the index records."""
    regions, end = space.smem_offsets(cfg)
    assert end + space.SMEM_ALIGN <= cfg.smem_bytes, cfg.key.name()
    return dict(smem_map=regions, smem_end=end, smem_align=space.SMEM_ALIGN, smem_bytes=cfg.smem_bytes)


def output(key: space.Key) -> dict:
    """The output type's size and 16-bit pack/unpack helpers (cvc_epilogue.h)."""
    return dict(out=key.out, out_bytes=space.ELEM_BYTES[key.out], pack_fn=PACK_FN.get(key.out, ""),
                unpack_fn=UNPACK_FN.get(key.out, ""))


def epilogue_helpers(activate_chunk: bool, scattered: bool, beta_units: bool, finish: bool) -> list[dict]:
    """The common epilogue parts, in source order: the activation, its out-of-line
    pass over a chunk and the pair loads of bias and C (the register epilogues),
    the last step of a split-K sum (finish: KEY_reduce and cluster split-K),
    a stride phase's row offsets, beta * C over 16-byte units."""
    parts = ["common/activate.j2"]
    if activate_chunk:
        parts += ["common/activate_chunk.j2", "common/load_pair.j2"]
    if finish:
        assert activate_chunk   # it reads bias and C by load_pair
        parts.append("common/finish_sums.j2")
    if scattered:
        parts.append("common/scattered_offset.j2")
    if beta_units:
        parts.append("common/add_beta_c.j2")
    return [dict(part=p) for p in parts]
