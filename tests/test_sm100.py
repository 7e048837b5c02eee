#!/usr/bin/env python3
"""Tests of the sm_100a family's rules and numbers (generator/convcat_gen/sm100.py).

    PYTHONPATH=generator python3 tests/test_sm100.py     (meson test runs it so)

Static only: the kernels are compiled and checked, never run (no Blackwell GPU).
"""
import dataclasses
import os
import pathlib
import sys
import unittest

ROOT = pathlib.Path(os.environ.get("CONVCAT_SOURCE_ROOT") or pathlib.Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT / "generator"))

from convcat_gen import index, render, sm100, space, spec  # noqa: E402

ONE = "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c1x1_1sm"
PAIR = "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x1_2sm"


def variant(base: str, **changes) -> space.Key:
    return dataclasses.replace(space.parse(base), **changes)


class Rules(unittest.TestCase):
    def assertInvalid(self, k, reason):
        ok, why = space.is_valid(k)
        self.assertFalse(ok, k.name())
        self.assertIn(reason, why)

    def assertValid(self, k):
        ok, why = space.is_valid(k)
        self.assertTrue(ok, f"{k.name()}: {why}")

    def test_kinds(self):
        self.assertValid(variant(ONE))
        self.assertValid(variant(ONE, a="f16", b="f16", out="f32"))
        self.assertValid(variant(ONE, a="tf32", b="tf32", out="f32", tile_k=32))
        self.assertValid(variant(ONE, a="e4m3", b="e5m2", tile_k=128))     # f8f6f4 mixes
        self.assertInvalid(variant(ONE, a="f16"), "tcgen05.mma takes")
        self.assertInvalid(variant(ONE, a="f32", b="f32", tile_k=32), "tcgen05.mma takes")
        self.assertInvalid(variant(ONE, a="tf32", b="tf32", tile_k=64), "tile K 64")
        self.assertInvalid(variant(ONE, acc="f16"), "accumulator f16")
        self.assertInvalid(variant(ONE, out="e4m3"), "output e4m3")

    def test_ops_and_schedules(self):
        for op in ("dgrad", "wgrad"):
            self.assertValid(variant(ONE, op=op))
            self.assertValid(variant(PAIR, op=op))
            self.assertValid(variant(ONE, op=op, a="f16", b="f16", out="f32"))
            # MN-major operands: kind::f16 only, and the sm90a family's output rule
            self.assertInvalid(variant(ONE, op=op, a="tf32", b="tf32", out="f32", tile_k=32), "kind::f16")
            self.assertInvalid(variant(ONE, op=op, a="e4m3", b="e4m3", tile_k=128), "kind::f16")
            self.assertInvalid(variant(ONE, op=op, a="f16", b="f16", out="bf16"), "writes f16 or f32")
            # B is read in 64-column boxes: tile N 64 fits one CTA, not half of a pair's
            self.assertValid(variant(ONE, op=op, tile_n=64))
            self.assertInvalid(variant(ONE, op=op, tile_n=96), "64-column swizzle atoms")
            self.assertInvalid(variant(PAIR, op=op, tile_n=64), "per CTA of the pair")
            self.assertValid(variant(PAIR, op=op, tile_n=128))
        self.assertInvalid(variant(ONE, schedule="coop"), "sm100a kernels are 1sm or 2sm")
        self.assertInvalid(variant(ONE, arch="sm90a"), "schedule 1sm: coop, pingpong, swap, halo, grouped, gather or direct")

    def test_umma_shapes(self):
        self.assertInvalid(variant(ONE, tile_m=64), "tile M 64")
        self.assertInvalid(variant(PAIR, tile_m=64), "tile M 64")
        self.assertInvalid(variant(ONE, tile_m=256), "tile M 256")
        self.assertValid(variant(ONE, tile_n=64))
        self.assertValid(variant(ONE, tile_n=192))
        self.assertInvalid(variant(ONE, tile_n=40), "epilogue stores whole 64-column chunks")
        self.assertInvalid(variant(PAIR, tile_n=72), "N = 16..256 in steps of 16")
        self.assertInvalid(variant(ONE, tile_n=264), "N = 8..256")

    def test_2sm_pairs_along_cluster_m(self):
        self.assertInvalid(variant(PAIR, cluster_m=1), "pairs the two CTAs along cluster M")
        self.assertInvalid(variant(PAIR, cluster_m=1, cluster_n=2), "pairs the two CTAs along cluster M")
        self.assertValid(variant(PAIR, cluster_n=2, stages=4))
        u = sm100.umma(variant(PAIR))
        self.assertEqual((u.cta_group, u.mma_m, u.mma_n), (2, 256, 256))
        c = space.derive(variant(PAIR))
        self.assertEqual(c.b_box_rows, 128)             # each CTA loads half of B
        self.assertEqual(c.b_stage_bytes, 128 * 128)
        self.assertEqual(u.tx_bytes, 2 * (128 * 128 + 128 * 128))   # both halves land on the leader
        self.assertEqual(c.empty_arrivals, 1)
        self.assertEqual(space.derive(variant(PAIR, cluster_n=2, stages=4)).empty_arrivals, 2)
        self.assertEqual(u.tmem_empty_arrivals, 8)

    def test_grad_boxes(self):
        """dgrad/wgrad boxes: 1sm as space.derive for sm90a (same tile and cluster);
        2sm as a 2x1 sm90a cluster except an MN-major B, whose CTA loads all K rows
        of its half of N."""
        for op in ("dgrad", "wgrad"):
            for base, cluster in ((ONE, (1, 1)), (ONE, (2, 1)), (ONE, (1, 2)), (ONE, (2, 2)),
                                  (PAIR, (2, 1)), (PAIR, (2, 2))):
                k = variant(base, op=op, tile_n=128, stages=4, cluster_m=cluster[0], cluster_n=cluster[1])
                self.assertValid(k)
                ref = space.derive(dataclasses.replace(k, arch="sm90a", schedule="coop"))
                c = space.derive(k)
                self.assertEqual((c.a_box_rows, c.a_box_cols), (ref.a_box_rows, ref.a_box_cols), k.name())
                b_rows = k.tile_k if k.schedule == "2sm" else ref.b_box_rows
                self.assertEqual((c.b_box_rows, c.b_box_cols), (b_rows, ref.b_box_cols), k.name())
                self.assertEqual(c.b_box_cols, 64)
                # the stage holds the same bytes as fprop's: the operands are only transposed
                f = space.derive(dataclasses.replace(k, op="fprop"))
                self.assertEqual((c.a_stage_bytes, c.b_stage_bytes, c.smem_bytes),
                                 (f.a_stage_bytes, f.b_stage_bytes, f.smem_bytes))
                self.assertEqual(sm100.umma(k).tx_bytes, sm100.umma(dataclasses.replace(k, op="fprop")).tx_bytes)
        self.assertTrue(space.dgrad_scatters(variant(ONE, op="dgrad")))   # the index flag SCATTERS
        self.assertTrue(space.dgrad_scatters(variant(PAIR, op="dgrad")))
        for k in (variant(ONE, op="dgrad"), variant(PAIR, op="dgrad")):
            flags = space.index_values(k)["flags"]
            self.assertTrue(flags & index.FLAG_BITS["SCATTERS"])
            self.assertFalse(flags & index.FLAG_BITS["STRIDED_KERNEL"])   # sm100a: the phases run KEY itself

    def test_mn_major_stage_layout(self):
        """Where the TMA boxes put an MN-major operand's element (mn, k) in a stage
        (pre-swizzle: both TMA and UMMA apply the 128-byte swizzle to the same
        1024-byte-aligned addresses) equals where the MMA's canonical MN-major
        SW128 layout ((8,8,m),(8,k)) : ((1,8,LBO),(64,SBO)) reads it, with the
        template's LBO = COL_BYTES = tile K x 128 B, SBO = 1024 B and +2048 B per
        K step; in every CTA of a multicast cluster (K-row slices) and of a pair."""
        for op in ("dgrad", "wgrad"):
            for base, cm, cn in ((ONE, 1, 1), (ONE, 2, 1), (ONE, 2, 2), (PAIR, 2, 1), (PAIR, 2, 2)):
                k = variant(base, op=op, tile_n=256, stages=4, cluster_m=cm, cluster_n=cn)
                ctx, c = sm100.context(k), space.derive(k)
                col_bytes, sbo, eb = k.tile_k * 128, 1024, 2
                for name, cols, rows, slice_rows, parts in (
                        ("b", ctx["b_cols"], c.b_box_rows, c.b_box_rows, k.tile_k // c.b_box_rows),
                        ("a", ctx["a_cols"], c.a_box_rows, c.a_box_rows, k.tile_k // c.a_box_rows)):
                    if not cols:
                        continue
                    stage = c.b_stage_bytes if name == "b" else c.a_stage_bytes
                    self.assertEqual(cols * col_bytes, stage, k.name())
                    placed = {}
                    for part in range(parts):              # the CTAs that write K-row slices
                        for j in range(cols):               # column boxes
                            for r in range(rows):
                                for e in range(64):
                                    at = part * slice_rows * 128 + j * col_bytes + r * 128 + e * eb
                                    placed[(64 * j + e, part * slice_rows + r)] = at
                    self.assertEqual(len(placed), stage // eb)
                    for step in range(ctx["k_steps"]):     # one MMA reads 16 K rows
                        start = 2048 * step
                        for (mn, kk), at in placed.items():
                            if step * 16 <= kk < step * 16 + 16:
                                r = kk - step * 16
                                want = start + (mn % 8) * eb + (mn // 8 % 8) * 16 + (mn // 64) * col_bytes + \
                                    (r % 8) * 128 + (r // 8) * sbo
                                self.assertEqual(at, want, (k.name(), name, mn, kk))

    def test_tmem_columns(self):
        for n, cols in ((64, 128), (128, 256), (192, 512), (256, 512)):
            u = sm100.umma(variant(ONE, tile_n=n))
            self.assertEqual(u.acc_bufs, 2)
            self.assertEqual(u.tmem_cols, cols)
            self.assertTrue(u.tmem_cols & (u.tmem_cols - 1) == 0 and 32 <= u.tmem_cols <= 512)

    def test_shared_memory(self):
        c = space.derive(variant(ONE))
        self.assertEqual(c.smem_bytes, 4 * (16384 + 32768) + 32768 + (2 * 4 + 2 * 2) * 8 + 8 + 1024)
        self.assertLessEqual(c.smem_bytes, 232448)
        self.assertInvalid(variant(ONE, stages=5), "shared memory: 5 stages x 48 KiB")
        self.assertValid(variant(PAIR, stages=6))
        self.assertInvalid(variant(PAIR, stages=7), "shared memory")

    def test_instruction_descriptor(self):
        self.assertEqual(sm100.umma(variant(ONE)).idesc, 0x08400490)
        self.assertEqual(sm100.umma(variant(PAIR)).idesc, 0x10400490)
        self.assertEqual(sm100.umma(variant(ONE, a="tf32", b="tf32", tile_k=32, tile_n=128)).idesc, 0x08200910)
        self.assertEqual(sm100.umma(variant(ONE, a="e4m3", b="e4m3", tile_k=128)).idesc, 0x08400010)
        # transpose bits 15 (A) / 16 (B): dgrad B, wgrad A and B are MN-major
        self.assertEqual(sm100.umma(variant(ONE, op="dgrad")).idesc, 0x08400490 | 1 << 16)
        self.assertEqual(sm100.umma(variant(ONE, op="wgrad")).idesc, 0x08400490 | 1 << 15 | 1 << 16)
        self.assertEqual(sm100.umma(variant(PAIR, op="wgrad", a="f16", b="f16", out="f32")).idesc, 0x10418010)

    def test_index_fields_match_the_runtime_formulas(self):
        """The runtime computes TMA boxes from these fields as it does for sm90a entries."""
        valid, _ = spec.load(ROOT / "catalog" / "specs" / "default.spec")
        ours = [k for k in valid if k.arch == "sm100a" and space.family(k) == "tma"]
        self.assertGreaterEqual(len(ours), 20)
        self.assertEqual({k.op for k in ours}, {"fprop", "dgrad", "wgrad"})
        for k in ours:
            c = space.derive(k)
            self.assertEqual(c.threads, 192)
            ta, tb = space.mn_major(k)
            # the index records these boxes; tests/test_sm100.c checks the runtime's descriptors from them
            self.assertEqual((c.a_box_rows, c.a_box_cols),
                             (k.tile_k // k.cluster_n, 64) if ta else (k.tile_m // k.cluster_n, k.tile_k))
            if not tb:
                self.assertEqual((c.b_box_rows, c.b_box_cols), (k.tile_n // k.cluster_m, k.tile_k))
            else:
                self.assertEqual((c.b_box_rows, c.b_box_cols),
                                 (k.tile_k if k.schedule == "2sm" else k.tile_k // k.cluster_m, 64))
            if k.dynamic:   # the fallback set: the same formulas over the fallback shape
                fb_b = k.tile_k if k.schedule == "2sm" else k.tile_k // k.fallback_m
                self.assertEqual(c.fb_a_box_rows, (k.tile_k if ta else k.tile_m) // k.fallback_n)
                self.assertEqual(c.fb_b_box_rows, fb_b if tb else k.tile_n // k.fallback_m)
            else:
                self.assertEqual((c.fb_a_box_rows, c.fb_b_box_rows), (0, 0))
            self.assertEqual(c.y_box_rows, 32)
            self.assertEqual(c.y_box_cols * space.ELEM_BYTES[k.out], 128)
            self.assertLessEqual(c.smem_bytes, space.SMEM_OPTIN_BYTES["sm100a"])
            self.assertLessEqual(sm100.umma(k).tmem_cols, 512)

    def test_render_uses_the_right_forms(self):
        one = render.render(variant(ONE))
        self.assertIn("tcgen05.mma.cta_group::1.kind::f16", one)
        self.assertIn("#define CVC_CTA_GROUP 1", one)
        self.assertNotIn("cvc_tma2_", one)
        pair = render.render(variant(PAIR))
        self.assertIn("tcgen05.mma.cta_group::2.kind::f16", pair)
        self.assertIn("cvc_tma2_im2col_4d", pair)
        self.assertIn("#define IDESC 0x10400490u", pair)
        self.assertIn("kind::tf32", render.render(variant(ONE, a="tf32", b="tf32", out="f32", tile_k=32)))
        self.assertIn("kind::f8f6f4", render.render(variant(ONE, a="e4m3", b="e4m3", tile_k=128)))
        self.assertIn("NOT EXECUTED ON ANY GPU", one)
        # Each epilogue warp stages its 32 rows in its own 4 KiB chunk: the
        # chunk row is the lane, not the tile row (which reaches 127).
        self.assertIn("cvc_st_shared_v4(dst + lane * ROW_BYTES", one)
        self.assertNotIn("dst + row * ROW_BYTES", one)

    def test_render_grad_kernels(self):
        d = variant(ONE, op="dgrad")
        src = render.render(d)
        self.assertIn("NOT EXECUTED ON ANY GPU", src)
        self.assertIn(f"{d.name()}_fill(", src)               # tap-less stride phases
        self.assertIn("scatter_chunk(p, dst", src)            # strided epilogue
        self.assertIn("cvc_umma_desc_kmajor_sw128(a_base", src)
        self.assertIn("cvc_umma_desc_mnmajor_sw128(b_base + 2048 * k, COL_BYTES)", src)
        self.assertIn("p->tap0_w - s * p->tap_step_w", src)
        self.assertNotIn("_reduce(", src)
        w = variant(ONE, op="wgrad", dims=3)
        src = render.render(w)
        self.assertIn(f"{w.name()}_reduce(", src)
        self.assertIn("cvc_tma_store_4d(tmap_y, dst", src)    # split-K f32 slices
        self.assertIn("cvc_tma_store_3d(tmap_y, dst", src)    # dw as (C, taps, K)
        self.assertIn("cvc_umma_desc_mnmajor_sw128(a_base + 2048 * k, COL_BYTES)", src)
        self.assertIn("cvc_tma_im2col_5d(dst_b + j * COL_BYTES", src)
        self.assertNotIn("_fill(", src)
        self.assertNotIn("scatter_chunk", src)
        pair = render.render(variant(PAIR, op="wgrad"))
        self.assertIn("cvc_tma2_tile_2d(dst_a + j * COL_BYTES", pair)
        self.assertIn("(int)cx * N_CTA", pair)                # each CTA's half of N
        self.assertIn("N_CTA = 128,", pair)                   # tile N 256, two CTAs
        self.assertIn("tcgen05.mma.cta_group::2.kind::f16", pair)
        self.assertEqual(render.template_name(d), "sm100a_conv.cu.j2")
        self.assertEqual(render.template_name(variant(ONE)), "sm100a_conv.cu.j2")


DYN = "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm"
DYN_PAIR = "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s6_c2x2f2x1_2sm"


class DynamicClusters(unittest.TestCase):
    """Keys _cMxNfMxN_: prefer MxN, any cluster may form as the f-shape instead."""

    def test_key_grammar(self):
        k = space.parse(DYN)
        self.assertEqual((k.cluster_m, k.cluster_n, k.fallback_m, k.fallback_n), (2, 1, 1, 1))
        self.assertTrue(k.dynamic)
        self.assertEqual(k.cluster, (2, 1, 1, 1))
        self.assertEqual(k.name(), DYN)
        static = space.parse(ONE)   # old keys parse unchanged, with no fallback
        self.assertEqual((static.fallback_m, static.fallback_n), (0, 0))
        self.assertFalse(static.dynamic)
        self.assertEqual(static.cluster, (1, 1))
        blocks = spec.parse("[d]\narch sm100a\nop fprop\ndims 2d\ndtypes bf16_bf16_f32_bf16\n"
                            "tile 128x128x64\nstages 4\ncluster 2x1f1x1 1x1\nschedule 1sm\n")
        valid, _ = spec.expand(blocks)
        self.assertEqual(sorted(v.name() for v in valid), sorted([DYN, DYN.replace("c2x1f1x1", "c1x1")]))
        with self.assertRaises(ValueError):
            spec.parse("[d]\narch sm100a\nop fprop\ndims 2d\ndtypes bf16_bf16_f32_bf16\n"
                       "tile 128x128x64\nstages 4\ncluster 2x1f1\nschedule 1sm\n")

    def test_rules_both_ways(self):
        ok = lambda k: space.is_valid(space.parse(k))
        for good in (DYN, DYN_PAIR, DYN.replace("c2x1f1x1", "c1x2f1x1"), DYN.replace("c2x1f1x1", "c2x2f1x1"),
                     DYN.replace("c2x1f1x1", "c2x2f2x1"), DYN.replace("fprop_2d", "dgrad_3d"),
                     DYN_PAIR.replace("fprop", "wgrad")):
            self.assertEqual(ok(good), (True, ""), good)
        # (key, reason); runtime/src/key.c cvc_dynamic_cluster_valid gives the same shape reasons
        # (tests/test_sm100.c, test_dynamic_rules)
        bad = [
            (DYN.replace("sm100a", "sm90a").replace("1sm", "coop"), "sm90a has no preferred-cluster launch"),
            (DYN.replace("f1x1", "f2x1"), "must be smaller than the preferred one"),
            (DYN.replace("c2x1f1x1", "c1x1f1x1"), "must be smaller than the preferred one"),
            (DYN.replace("c2x1f1x1", "c2x2f1x2"), "consecutive ranks (x fastest)"),
            (DYN.replace("c2x1f1x1", "c2x2f3x1"), "must tile the preferred cluster"),
            (DYN_PAIR.replace("f2x1", "f1x1"), "fallback cluster 1x1: a 2sm MMA pairs"),
            (DYN_PAIR.replace("c2x2f2x1", "c1x2f1x1"), "cluster 1x2: a 2sm MMA pairs"),
            (DYN.replace("c2x1f1x1", "c4x1f2x1"), "cluster 4x1: 1x1, 2x1, 1x2 or 2x2"),
            (DYN.replace("_s4_", "_s9_"), "stages 9"),   # the preferred key's own rules first
        ]
        for key, reason in bad:
            valid, why = ok(key)
            self.assertFalse(valid, key)
            self.assertIn(reason, why, key)

    def test_two_descriptor_sets(self):
        """The index carries both shapes' boxes: a slice of the tile (multicast) or all of it."""
        c = space.derive(space.parse(DYN))
        self.assertEqual((c.a_box_rows, c.b_box_rows), (128, 64))        # 2x1: B split along x
        self.assertEqual((c.fb_a_box_rows, c.fb_b_box_rows), (128, 128))  # 1x1: whole tiles
        c = space.derive(space.parse(DYN.replace("c2x1f1x1", "c2x2f2x1")))
        self.assertEqual((c.a_box_rows, c.b_box_rows, c.fb_a_box_rows, c.fb_b_box_rows), (64, 64, 128, 64))
        c = space.derive(space.parse(DYN_PAIR))                          # the pair splits B in both
        self.assertEqual((c.a_box_rows, c.b_box_rows, c.fb_a_box_rows, c.fb_b_box_rows), (64, 128, 128, 128))
        w = space.derive(space.parse(DYN_PAIR.replace("fprop", "wgrad")))  # MN-major: K rows
        self.assertEqual((w.a_box_rows, w.b_box_rows, w.fb_a_box_rows, w.fb_b_box_rows), (32, 64, 64, 64))
        # everything else is the preferred static kernel's
        pref = space.derive(space.parse(DYN.replace("f1x1", "")))
        self.assertEqual(dataclasses.replace(c := space.derive(space.parse(DYN)), key=pref.key, fb_a_box_rows=0,
                                             fb_b_box_rows=0), pref)

    def test_render(self):
        src = render.render(space.parse(DYN))
        self.assertIn("NOT EXECUTED ON ANY GPU", src)
        self.assertIn("const bool fallback = cvc_cluster_nctaid_x() == FB_CTAS;", src)
        self.assertIn("FB_CLUSTER_M = 1, FB_CTAS = 1,", src)
        self.assertIn("FB_A_SLICE = 128, FB_B_SLICE = 128, FB_EMPTY_ARRIVALS = 1,", src)
        self.assertIn("A_SLICE = 128, B_SLICE = 64", src)
        self.assertIn("fallback ? &tmap_a_fb : &tmap_a", src)
        self.assertIn("fallback ? &tmap_b_fb : &tmap_b", src)
        self.assertIn("cvc_mbar_init(empty_bar + 8 * s, sh.empty_arrivals)", src)
        self.assertIn("(uint16_t)(sh.b_mask_base << (sh.cluster_m * cy))", src)
        self.assertIn("tile_at(p, ct, tx, ty)", src)          # tiles follow the preferred shape
        self.assertIn("first = blockIdx.x / PREF_CTAS", src)
        self.assertNotIn("cvc_clusterid_x()", src)
        self.assertNotIn("__cluster_dims__", src)
        pair = render.render(space.parse(DYN_PAIR))
        self.assertIn("tcgen05.mma.cta_group::2.kind::f16", pair)
        self.assertIn("FB_CLUSTER_M = 2, FB_CTAS = 2,", pair)
        self.assertIn("(uint16_t)sh.all_mask", pair)
        # static kernels keep their compile-time shape
        static = render.render(variant(ONE, cluster_m=2))
        self.assertIn("cvc_clusterid_x()", static)
        self.assertNotIn("shape_t", static)
        self.assertNotIn("tmap_a_fb", static)


if __name__ == "__main__":
    unittest.main(verbosity=2)
