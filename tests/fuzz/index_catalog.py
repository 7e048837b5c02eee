#!/usr/bin/env python3
"""Write catalogs of index records without code, for the fuzz harnesses.

    index_catalog.py --spec SPEC --arch sm90a,sm100a --out CATALOG
    index_catalog.py --seeds DIR

The first form: every kernel a spec selects, its index fields exactly as
pack.py writes them for the real catalog (space.index_values), each entry with
a short placeholder blob instead of a fatbin: the rules harness checks
problems against every entry of a real catalog without compiling it.  The
second form writes the catalog harness's seed corpus (tests/fuzz/corpus/catalog):
catalogs of one to three entries, one of every family and schedule kind.
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "generator"))
sys.path.insert(0, str(ROOT / "catalog"))
from convcat_gen import space, spec  # noqa: E402
import pack  # noqa: E402

SEEDS = {
    "tma_coop": ["sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop"],
    "tma_halo": ["sm90a_fprop_2d_bf16_bf16_f32_bf16_224x64x64_s8_c1x1_halo"],
    "tma_n160": ["sm90a_fprop_2d_f16_f16_f32_f16_128x160x64_s4_c1x1_coop"],
    "tma_grads": ["sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_coop",
                  "sm90a_wgrad_2d_bf16_bf16_f32_bf16_64x64x64_s4_c1x1_pingpong",
                  "sm90a_wgrad_2d_tf32_tf32_f32_f32_128x128x32_s4_c1x1_coop"],
    "tma_swap_1d_3d": ["sm90a_fprop_1d_f16_f16_f32_f32_128x64x64_s3_c1x2_coop",
                       "sm90a_fprop_2d_f16_f16_f32_f16_256x64x64_s4_c1x1_swap",
                       "sm90a_wgrad_3d_f16_f16_f32_f32_128x64x64_s4_c1x2_pingpong"],
    "sm100a": ["sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm",
               "sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x2f2x1_2sm"],
    "gather": ["sm90a_dgrad_2d_bf16_bf16_f32_bf16_128x16x32_s3_c1x1_gather",
               "sm90a_wgrad_3d_tf32_tf32_f32_f32_64x32x16_s3_c1x1_gather"],
    "tma_grouped": ["sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_grouped",
                    "sm90a_fprop_3d_f16_f16_f32_f16_128x128x64_s4_c1x1_grouped"],
    "direct": ["sm90a_fprop_1d_tf32_tf32_f32_f32_1x64x32_s1_c1x1_direct",
               "sm90a_wgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct"],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec")
    ap.add_argument("--arch", default="sm90a,sm100a")
    ap.add_argument("--out")
    ap.add_argument("--seeds", type=pathlib.Path)
    a = ap.parse_args()
    if a.seeds:
        a.seeds.mkdir(parents=True, exist_ok=True)
        for name, keys in SEEDS.items():
            (a.seeds / f"{name}.catalog").write_bytes(pack.pack([], [space.parse(k) for k in keys]))
        return 0
    if not (a.spec and a.out):
        ap.error("--spec and --out (or --seeds)")
    arches = set(a.arch.split(","))
    valid, _ = spec.load(*a.spec.split(","))   # the paths meson passes, comma-separated
    keys = [k for k in valid if k.name().split("_")[0] in arches]
    out = pathlib.Path(a.out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(pack.pack([], keys))
    tmp.replace(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
