#!/usr/bin/env python3
"""Tests of the generator (generator/convcat_gen) and the catalog packer (catalog/pack.py).

    PYTHONPATH=generator python3 tests/test_generator.py     (meson test runs it so)

The key vectors are tests/key_vectors.txt, shared with the C suite
tests/test_key.c: Python and C must agree on every line.
"""
import dataclasses
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

ROOT = pathlib.Path(os.environ.get("CONVCAT_SOURCE_ROOT") or pathlib.Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT / "generator"))

import jinja2  # noqa: E402

from convcat_gen import gather, index, render, space, spec  # noqa: E402

GEN = [sys.executable, str(ROOT / "generator" / "convcat-gen")]
PACK = [sys.executable, str(ROOT / "catalog" / "pack.py")]


def key(text: str) -> space.Key:
    return space.parse(text)


def variant(base: str, **changes) -> space.Key:
    return dataclasses.replace(key(base), **changes)


BF16 = "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop"
F16_1D = "sm90a_fprop_1d_f16_f16_f32_f32_64x128x64_s3_c1x2_coop"
GATHER = "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather"
DIRECT = "sm90a_dgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct"


def read_vectors():
    """(line number, valid?, text) of tests/key_vectors.txt, in its documented format."""
    out = []
    for no, line in enumerate((ROOT / "tests" / "key_vectors.txt").read_text().split("\n"), 1):
        if not line or line.startswith("#"):
            continue
        word, sep, text = line.partition(" ")
        if not sep or word not in ("valid", "invalid"):
            raise AssertionError(f"key_vectors.txt:{no}: not 'valid KEY' or 'invalid STRING'")
        if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
            text = text[1:-1]
        out.append((no, word == "valid", text))
    return out


class KeyVectors(unittest.TestCase):
    def test_file_has_both_kinds(self):
        v = read_vectors()
        self.assertGreaterEqual(len(v), 30)
        self.assertGreaterEqual(sum(ok for _, ok, _ in v), 5)
        self.assertGreaterEqual(sum(not ok for _, ok, _ in v), 25)

    def test_valid_keys_parse_and_print_back(self):
        for no, ok, text in read_vectors():
            if ok:
                with self.subTest(line=no, key=text):
                    self.assertEqual(space.parse(text).name(), text)
                    self.assertEqual(str(space.parse(text)), text)

    def test_invalid_strings_are_refused_with_a_reason(self):
        for no, ok, text in read_vectors():
            if not ok:
                with self.subTest(line=no, text=text):
                    with self.assertRaises(ValueError) as cm:
                        space.parse(text)
                    self.assertTrue(str(cm.exception))

    def test_parse_gives_every_field(self):
        k = key("sm100a_wgrad_3d_e5m2_tf32_f16_f32_9999x1x10_s99_c1x9_pingpong")
        self.assertEqual(k, space.Key("sm100a", "wgrad", 3, "e5m2", "tf32", "f16", "f32", 9999, 1, 10, 99, 1, 9,
                                      "pingpong"))

    def test_reasons_name_the_bad_field(self):
        with self.assertRaisesRegex(ValueError, "unknown data type 'f64'"):
            space.parse("sm90a_fprop_2d_bf16_f64_f32_bf16_128x128x64_s4_c1x1_coop")
        with self.assertRaisesRegex(ValueError, "unknown schedule 'ping'"):
            space.parse("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_ping")
        with self.assertRaisesRegex(ValueError, "is not a key of the form"):
            space.parse("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1")


class Validity(unittest.TestCase):
    def assertInvalid(self, k: space.Key, reason: str):
        ok, why = space.is_valid(k)
        self.assertFalse(ok, k.name())
        self.assertIn(reason, why)

    def assertValid(self, k: space.Key):
        self.assertEqual(space.is_valid(k), (True, ""), k.name())

    def test_shared_memory_budget(self):
        self.assertValid(variant(BF16, tile_n=256, stages=4))                 # 48 KiB x 4 + 1 KiB
        self.assertInvalid(variant(BF16, tile_n=256, stages=5), "shared memory: 5 stages x 48 KiB")
        self.assertValid(variant(BF16, tile_m=64, tile_n=64, stages=8))
        cfg = space.derive(variant(BF16, tile_n=256, stages=4))
        self.assertLessEqual(cfg.smem_bytes, space.SMEM_OPTIN_BYTES["sm90a"])
        self.assertGreater(space.derive(variant(BF16, tile_n=256, stages=5)).smem_bytes,
                           space.SMEM_OPTIN_BYTES["sm90a"])

    def test_register_budget(self):
        self.assertValid(variant(BF16, tile_m=256, tile_n=128, stages=3))    # 2 atoms x 64 = 128
        self.assertValid(variant(BF16, tile_m=128, tile_n=256))               # 1 atom x 128
        self.assertInvalid(variant(BF16, tile_m=256, tile_n=256, stages=3), "register budget: 256 f32 accumulators")
        self.assertInvalid(variant(BF16, tile_m=256, tile_n=192, stages=3), "register budget: 192")

    def test_tile_k_is_one_or_two_swizzle_rows(self):
        self.assertValid(variant(BF16, tile_k=64))
        self.assertEqual(space.k_spans(variant(BF16, tile_k=64)), 1)
        self.assertInvalid(variant(BF16, tile_k=16), "tile K 16: one stage holds one or two 128-byte swizzle rows")
        self.assertInvalid(variant(BF16, tile_k=256, stages=2), "tile K 256: one stage holds one or two")
        self.assertInvalid(variant(BF16, tile_k=96, stages=2), "tile K 96: one stage holds one or two")
        # tf32 keeps one span (the stage copy and the K-major filter take one); sm100a too.
        tf32 = variant(BF16, a="tf32", b="tf32", out="f32", tile_k=64)
        for op in space.OPS:
            self.assertInvalid(dataclasses.replace(tf32, op=op), "tile K 64: a tf32 stage holds one 128-byte")
            self.assertInvalid(dataclasses.replace(tf32, op=op, tile_k=128), "two-span stages are f16/bf16 only")
        self.assertInvalid(variant(BF16, arch="sm100a", schedule="1sm", tile_k=128),
                           "tile K 128: one stage holds one 128-byte swizzle row")

    def test_tile_k_32(self):
        """One 64-byte row of K a stage (64-byte swizzle): sm90a f16/bf16 fprop and dgrad, coop and
        pingpong; a K-major operand's rows are 64 bytes, an MN-major one's (dgrad's B) stay 128."""
        k32 = variant(BF16, tile_k=32, stages=8)
        for op in ("fprop", "dgrad"):
            for sched in ("coop", "pingpong"):
                self.assertValid(dataclasses.replace(k32, op=op, schedule=sched))
        self.assertValid(dataclasses.replace(k32, op="dgrad", dims=3, cluster_m=2))
        for bad in (dict(op="wgrad"), dict(schedule="swap", tile_m=256, tile_n=64)):
            self.assertInvalid(dataclasses.replace(k32, **bad), "tile K 32: stages of one 64-byte row of K")
        self.assertInvalid(dataclasses.replace(k32, schedule="halo", tile_m=224, tile_n=64),
                           "schedule halo: tile K 32: one 128-byte channel block")
        self.assertInvalid(dataclasses.replace(k32, a="tf32", b="tf32", out="f32", tile_k=16),
                           "a tf32 stage holds one 128-byte")
        self.assertEqual(space.stage_rows(k32), (64, 64))
        self.assertEqual(space.stage_rows(dataclasses.replace(k32, op="dgrad")), (64, 128))
        self.assertEqual(space.stage_rows(variant(BF16)), (128, 128))
        self.assertEqual(space.k_spans(k32), 1)
        c = space.derive(k32)
        self.assertEqual((c.k_steps, c.a_stage_bytes, c.b_stage_bytes), (2, 8192, 8192))
        self.assertEqual((c.a_box_cols, c.b_box_cols), (32, 32))   # 64-byte rows: the runtime's swizzle
        c = space.derive(dataclasses.replace(k32, op="dgrad"))
        self.assertEqual((c.a_box_cols, c.b_box_rows, c.b_box_cols), (32, 32, 64))
        src = render.render(k32)
        self.assertIn("A_ROW = 64, B_ROW = 64,", src)
        self.assertIn("cvc_desc_kmajor_sw64(a_base + a * 64 * A_ROW + 32 * k)", src)
        self.assertIn("cvc_desc_kmajor_sw64(b_base + 32 * k)", src)
        src = render.render(dataclasses.replace(k32, op="dgrad"))
        self.assertIn("A_ROW = 64, B_ROW = 128,", src)
        self.assertIn("cvc_desc_kmajor_sw64(a_base + a * 64 * A_ROW + 32 * k)", src)
        self.assertIn("cvc_desc_mnmajor_sw128(b_base + 2048 * k, B_COL_BYTES)", src)
        self.assertIn("cvc_desc_kmajor_sw128(a_base + a * 64 * A_ROW + 32 * k)", render.render(variant(BF16)))

    def test_tile_k_128(self):
        """Two 128-byte spans of K a stage: f16/bf16, every op, coop and pingpong."""
        k128 = variant(BF16, tile_k=128, stages=3)
        for op in space.OPS:
            for ab in ("f16", "bf16"):
                # A scattering dgrad kernel's row tables (KEY_strided) leave 128x128 two stages.
                stages = 2 if op == "dgrad" else 3
                self.assertValid(dataclasses.replace(k128, op=op, a=ab, b=ab, out=ab, stages=stages))
        self.assertInvalid(dataclasses.replace(k128, op="dgrad"), "shared memory: 3 stages x 64 KiB")
        self.assertValid(dataclasses.replace(k128, cluster_m=2))
        self.assertValid(dataclasses.replace(k128, cluster_m=2, cluster_n=2, dims=3))
        self.assertValid(dataclasses.replace(k128, schedule="pingpong"))
        self.assertValid(dataclasses.replace(k128, tile_n=256, stages=2))
        self.assertValid(dataclasses.replace(k128, tile_m=256, stages=2, cluster_m=2))
        self.assertValid(dataclasses.replace(k128, op="wgrad", tile_m=64, tile_n=64, stages=6, schedule="pingpong"))
        # The stage doubles: 64 KiB for 128x128, so 3 stages fit and 4 do not; 128x256 takes 2.
        self.assertInvalid(dataclasses.replace(k128, stages=4), "shared memory: 4 stages x 64 KiB")
        self.assertInvalid(dataclasses.replace(k128, tile_n=256), "shared memory: 3 stages x 96 KiB")
        # The existing register rules still apply.
        self.assertInvalid(dataclasses.replace(k128, op="wgrad", schedule="pingpong"),
                           "a wgrad pingpong warpgroup holding 128 accumulators")
        self.assertInvalid(dataclasses.replace(k128, op="wgrad", tile_n=256, stages=2, cluster_m=2),
                           "with cluster multicast spills")
        c = space.derive(k128)
        self.assertEqual(space.k_spans(k128), 2)
        self.assertEqual(c.k_steps, 8)
        self.assertEqual((c.a_stage_bytes, c.b_stage_bytes), (32768, 32768))
        self.assertEqual(c.smem_bytes, 3 * 65536 + c.epi_bytes + 3 * 16 + 1024)
        # K-major boxes stay one span wide (the kernel loads each span); tensor-map fields.
        self.assertEqual((c.a_box_rows, c.a_box_cols, c.b_box_rows, c.b_box_cols), (128, 64, 128, 64))
        c = space.derive(dataclasses.replace(k128, cluster_m=2, cluster_n=2))
        self.assertEqual((c.a_box_rows, c.a_box_cols, c.b_box_rows, c.b_box_cols), (64, 64, 64, 64))
        # MN-major boxes: 128 K rows of a 64-wide column (a slice of them along the cluster).
        c = space.derive(dataclasses.replace(k128, op="dgrad", cluster_m=2))
        self.assertEqual((c.a_box_rows, c.a_box_cols, c.b_box_rows, c.b_box_cols), (128, 64, 64, 64))
        c = space.derive(dataclasses.replace(k128, op="wgrad"))
        self.assertEqual((c.a_box_rows, c.a_box_cols, c.b_box_rows, c.b_box_cols), (128, 64, 128, 64))
        c = space.derive(dataclasses.replace(k128, op="wgrad", tile_n=64, cluster_n=2))
        self.assertEqual((c.a_box_rows, c.b_box_rows), (64, 128))
        # The template: two loads a stage for each K-major operand, descriptors per span.
        src = render.render(k128)
        self.assertIn("K_SPANS = 2,", src)
        self.assertIn("cvc_tma_im2col_4d(dst_a + A_SPAN, tmap_a, bar, c + COL_CH,", src)
        self.assertIn("cvc_tma_tile_4d(dst_b + B_SPAN, tmap_b, bar, c + COL_CH, s, r, n0, mask_b);", src)
        self.assertIn("return k / SPAN_STEPS * span + 32 * (k % SPAN_STEPS);", src)   # kmajor_step
        self.assertIn("cvc_desc_kmajor_sw128(b_base + kmajor_step(k, B_SPAN))", src)
        self.assertIn("cvc_desc_kmajor_sw128(a_base + a * 64 * A_ROW + kmajor_step(k, A_SPAN))", src)
        src = render.render(dataclasses.replace(k128, op="dgrad", dims=1, stages=2))
        self.assertIn("cvc_tma_im2col_3d(dst_a + A_SPAN, tmap_a, bar, c + COL_CH,", src)
        self.assertIn("cvc_desc_mnmajor_sw128(b_base + 2048 * k, B_COL_BYTES)", src)
        self.assertNotIn("B_SPAN", src.split("produce(")[1].split("consume(")[0].replace("B_SPAN = ", ""))
        src = render.render(dataclasses.replace(k128, op="wgrad"))
        self.assertNotIn("A_SPAN,", src.split("enum {")[1].replace("A_SPAN = ", ""))
        self.assertIn("cvc_desc_mnmajor_sw128(a_base + a * COL_BYTES + 2048 * k, COL_BYTES)", src)
        self.assertIn("BK = 128,", src)
        # Tile K 64 renders none of it: 32 bytes a step (the helper's folded arithmetic scheduled
        # those kernels 0.5% slower on the H200).
        src = render.render(variant(BF16))
        for text in ("K_SPANS", "A_SPAN", "SPAN_STEPS", "kmajor_step", "c + COL_CH"):
            self.assertNotIn(text, src)
        self.assertIn("cvc_desc_kmajor_sw128(b_base + 32 * k)", src)

    def test_tile_m_and_n(self):
        self.assertInvalid(variant(BF16, tile_m=192), "tile M 192")
        self.assertValid(variant(BF16, tile_n=192))
        self.assertInvalid(variant(BF16, tile_n=96), "tile N 96")

    def test_tile_n_160(self):
        # 160 columns of f16/bf16 are not whole 128-byte rows: the epilogue stores
        # five 64-byte-row chunks of 32 columns (64-byte swizzle); f32 out keeps 128.
        k = variant(BF16, tile_n=160)
        self.assertValid(k)
        cfg = space.derive(k)
        self.assertEqual((cfg.wg_n, cfg.y_box_cols, cfg.b_box_rows), (160, 32, 160))
        self.assertEqual(space.derive(variant(BF16, tile_n=160, out="f32")).y_box_cols, 32)
        self.assertEqual(space.derive(variant(BF16, tile_n=160, cluster_m=2)).b_box_rows, 80)
        self.assertValid(variant(BF16, tile_m=64, tile_n=160, schedule="pingpong"))
        # A 64x160 coop tile splits N in 80s: 160-byte rows are not whole 64-byte chunks.
        self.assertInvalid(variant(BF16, tile_m=64, tile_n=160), "warpgroup N 80: the epilogue stores chunks")
        # dgrad reads a 160-wide B in five 32-column atoms (64-byte swizzle), wgrad in 64-column ones.
        dg = variant(BF16, op="dgrad", tile_n=160)
        self.assertValid(dg)
        self.assertEqual((space.mn_b_row(dg), space.derive(dg).b_box_cols), (64, 32))
        self.assertFalse(space.dgrad_scatters(dg))   # 64-byte epilogue rows: unit stride only
        self.assertIn("cvc_desc_mnmajor_sw64(b_base + 1024 * k, B_COL_BYTES)", render.render(dg))
        self.assertIn("B_COL_BYTES = 4096, B_COL_CH = 32,", render.render(dg))
        self.assertInvalid(variant(BF16, op="wgrad", tile_n=160), "warpgroup N 160: an MN-major B (wgrad)")
        self.assertInvalid(variant(BF16, tile_m=160), "tile M 160")
        # 256 x 160 needs 160 accumulators a thread.
        self.assertInvalid(variant(BF16, tile_m=256, tile_n=160), "register budget")

    def test_clusters(self):
        for cm, cn in space.CLUSTERS:
            self.assertValid(variant(BF16, cluster_m=cm, cluster_n=cn))
        self.assertInvalid(variant(BF16, cluster_m=4, cluster_n=1), "cluster 4x1: 1x1, 2x1, 1x2 or 2x2")
        self.assertInvalid(variant(BF16, cluster_m=1, cluster_n=4), "cluster 1x4")

    def test_dgrad_wgrad_operands_are_mn_major_columns(self):
        # dgrad: B (filters as (C, K)) is MN-major; wgrad: A (dy) and B (x) are.  An MN-major
        # operand loads 64-wide columns of a cluster slice of the stage's K rows.
        dg = space.derive(variant(BF16, op="dgrad", cluster_m=2))
        self.assertEqual((dg.a_box_rows, dg.a_box_cols, dg.b_box_rows, dg.b_box_cols), (128, 64, 32, 64))
        wg = space.derive(variant(BF16, op="wgrad", cluster_n=2))
        self.assertEqual((wg.a_box_rows, wg.a_box_cols, wg.b_box_rows, wg.b_box_cols), (32, 64, 64, 64))
        self.assertEqual(space.mn_major(variant(BF16)), (False, False))
        self.assertEqual(space.mn_major(variant(BF16, op="dgrad")), (False, True))
        self.assertEqual(space.mn_major(variant(BF16, op="wgrad")), (True, True))
        # A warpgroup's MN-major B is whole swizzle atoms: 64 columns, or (dgrad) 32 under a 64-byte
        # swizzle, as a 64x64 coop tile's warpgroups of 32.  wgrad's are 64 columns.
        self.assertEqual(space.derive(variant(BF16, op="dgrad", tile_m=64, tile_n=64)).b_box_cols, 32)
        self.assertEqual(space.derive(variant(BF16, op="dgrad", tile_m=64, tile_n=128)).b_box_cols, 64)
        self.assertInvalid(variant(BF16, op="wgrad", tile_m=64, tile_n=64), "warpgroup N 32: an MN-major B")
        src = render.render(variant(BF16, op="wgrad"))
        self.assertIn("p, 1, 1, 1, 1;", src)   # wgmma trans-a and trans-b
        self.assertIn("_reduce(const __grid_constant__ cvc_params p)", src)
        self.assertIn("p, 1, 1, 0, 1;", render.render(variant(BF16, op="dgrad")))
        self.assertIn("p, 1, 1, 0, 0;", render.render(variant(BF16)))

    def test_split_k_kernels(self):
        # wgrad always splits K; fprop when its warpgroups hold fewer than 128 accumulators.
        # The index records it (flag SPLITS_K), which the runtime reads.
        self.assertTrue(space.splits_k(variant(BF16, op="wgrad")))
        self.assertTrue(space.splits_k(variant(BF16)))                       # 64 accumulators
        self.assertFalse(space.splits_k(variant(BF16, tile_n=256)))          # 128
        self.assertFalse(space.splits_k(variant(BF16, op="dgrad")))
        for k in (variant(BF16, op="wgrad"), variant(BF16), variant(BF16, tile_n=256), variant(BF16, op="dgrad")):
            self.assertEqual(bool(space.index_values(k)["flags"] & index.FLAG_BITS["SPLITS_K"]), space.splits_k(k))
        self.assertIn("_reduce(const __grid_constant__ cvc_params p)", render.render(variant(BF16)))
        self.assertNotIn("_reduce(", render.render(variant(BF16, tile_n=256)))

    def test_cluster_split_kernels(self):
        # sm90a TMA wgrad of 1x1 clusters, coop and pingpong, whose ring holds the tile's f32 sums:
        # the index flag (CLUSTER_SPLITS) and the template's cluster path agree with the rule.
        wg = variant(BF16, op="wgrad")
        cases = (wg, variant(BF16, op="wgrad", schedule="pingpong", tile_m=64), variant(BF16, op="wgrad", cluster_m=2),
                 variant(BF16), variant(BF16, op="wgrad", arch="sm100a", schedule="1sm"))
        self.assertEqual([space.cluster_splits(k) for k in cases], [True, True, False, False, False])
        for k in cases:
            self.assertEqual(bool(space.index_values(k)["flags"] & index.FLAG_BITS["CLUSTER_SPLITS"]),
                             space.cluster_splits(k))
            self.assertEqual("cluster_sums(" in render.render(k), space.cluster_splits(k))
        # the ring holds the tile's padded f32 rows
        cfg = space.derive(wg)
        self.assertGreaterEqual(wg.stages * (cfg.a_stage_bytes + cfg.b_stage_bytes),
                                wg.tile_m * space.cluster_row_bytes(wg))
        self.assertIn(f"CLUSTER_SPLITS_MAX = {index.CLUSTER_SPLITS_MAX}", render.render(wg))

    def test_dgrad_scatter_epilogue(self):
        # Strided dgrad scatters rows; pingpong warpgroups of 128 accumulators have no room for it
        # (the index lacks flag SCATTERS, and runtime/src/rules.c refuses strided problems for them).
        for k in (variant(BF16, op="dgrad"), variant(BF16, op="dgrad", schedule="pingpong"), variant(BF16)):
            flags = space.index_values(k)["flags"]
            self.assertEqual(bool(flags & index.FLAG_BITS["SCATTERS"]), space.dgrad_scatters(k))
            self.assertEqual(bool(flags & index.FLAG_BITS["STRIDED_KERNEL"]), space.dgrad_scatters(k))   # sm90a
        self.assertTrue(space.dgrad_scatters(variant(BF16, op="dgrad")))
        self.assertFalse(space.dgrad_scatters(variant(BF16, op="dgrad", schedule="pingpong")))
        self.assertTrue(space.dgrad_scatters(variant(BF16, op="dgrad", schedule="pingpong", tile_n=64)))
        self.assertFalse(space.dgrad_scatters(variant(BF16, op="dgrad", tile_m=256)))   # 128 accumulators
        self.assertFalse(space.dgrad_scatters(variant(BF16, op="dgrad", tile_n=256)))
        self.assertFalse(space.dgrad_scatters(variant(BF16)))
        self.assertIn("_strided(", render.render(variant(BF16, op="dgrad")))   # KEY_strided with its storer warps
        self.assertNotIn("store_scattered", render.render(variant(BF16, op="dgrad", schedule="pingpong")))

    def test_grouped_wgrad_kernels(self):
        # wgrad of tile M == tile N and cluster M 1 (the index's groups_mode "diagonal", which the
        # runtime's rules read); only those carry the diagonal-block store.
        w = variant(BF16, op="wgrad")
        self.assertTrue(space.groups_wgrad(w))
        self.assertTrue(space.groups_wgrad(variant(BF16, op="wgrad", cluster_n=2)))
        self.assertTrue(space.groups_wgrad(variant(BF16, op="wgrad", tile_m=64, tile_n=64, schedule="pingpong")))
        self.assertFalse(space.groups_wgrad(variant(BF16, op="wgrad", tile_n=64)))
        self.assertFalse(space.groups_wgrad(variant(BF16, op="wgrad", cluster_m=2)))
        self.assertFalse(space.groups_wgrad(variant(BF16)))
        self.assertFalse(space.groups_wgrad(variant(BF16, op="dgrad")))
        self.assertIn("group_chunk(p, dst", render.render(w))
        self.assertNotIn("group_chunk", render.render(variant(BF16, op="wgrad", tile_n=64)))
        self.assertNotIn("group_channels", render.render(variant(BF16, op="wgrad", tile_n=64)))
        sm100 = space.parse("sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm")
        self.assertTrue(space.groups_wgrad(sm100))
        self.assertIn("group_chunk(p, dst", render.render(sm100))
        self.assertFalse(space.groups_wgrad(space.parse("sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_2sm")))

    def test_groups_in_the_index(self):
        # How a kernel takes groups is its record's groups_mode: diagonal for the grouped wgrad
        # kernels (channels per group 8, 16, 32, 64 in group_c_mask; sm90a also 4), any for gather, depthwise for
        # direct, none for the rest.  tests/test_rules.c runs the runtime's rules on these fields.
        mode = {v: n for n, v in index.GROUPS_MODE.items()}
        cases = [(variant(BF16, op="wgrad"), "diagonal"), (variant(BF16, op="wgrad", cluster_n=2), "diagonal"),
                 (variant(BF16, op="wgrad", tile_n=64), "none"), (variant(BF16, op="wgrad", cluster_m=2), "none"),
                 (variant(BF16), "none"), (variant(BF16, op="dgrad"), "none"),
                 (key("sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_1sm"), "diagonal"),
                 (key("sm100a_wgrad_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1_2sm"), "none"),
                 (key(GATHER), "any"), (key(DIRECT), "depthwise")]
        for k, want in cases:
            with self.subTest(key=k.name()):
                self.assertValid(k)
                v = space.index_values(k)
                self.assertEqual(mode[v["groups_mode"]], want)
                # direct: one channel a group, and c = k = 2, 4, 8 (bf16: 8 channels a thread)
                # (sm90a's diagonal kernels also c = 4: half 16-byte units of a 16-bit dw)
                widths = {"diagonal": (4, 8, 16, 32, 64) if k.arch == "sm90a" else (8, 16, 32, 64),
                          "depthwise": (1, 2, 4, 8)}
                self.assertEqual(v["group_c_mask"], sum(1 << c.bit_length() - 1 for c in widths.get(want, ())))
                self.assertEqual(want == "diagonal", space.groups_wgrad(k) and space.family(k) == "tma")
                # gather kernels split any op's K loop over groups; sm90a's diagonal grouped wgrad too
                # (KEY_reduce adds the diagonal blocks)
                self.assertEqual(bool(v["flags"] & index.FLAG_BITS["GROUPED_SPLITS"]),
                                 want == "any" or want == "diagonal" and k.arch == "sm90a")
        self.assertFalse(hasattr(space, "why_not_grouped"))   # the rule itself is the runtime's alone

    def test_grouped_wgrad_kernels_in_the_default_catalog(self):
        # Grouped problems need kernels: both arches, f16 and bf16, 64- and 128-wide tiles (sm90a).
        valid, _ = spec.load(ROOT / "catalog" / "specs" / "default.spec")
        grouped = {(k.arch, k.a, k.tile_n) for k in valid if space.groups_wgrad(k)}
        for want in [("sm90a", "f16", 64), ("sm90a", "bf16", 64), ("sm90a", "f16", 128), ("sm90a", "bf16", 128),
                     ("sm100a", "f16", 128), ("sm100a", "bf16", 128)]:
            self.assertIn(want, grouped)

    def test_cluster_slices_are_whole_swizzle_atoms(self):
        # With the space's tile and cluster lists no slice breaks the 8-row rule (the check in
        # is_valid guards future axis values): every valid key's boxes are whole atoms.
        for k in space.product(arch=("sm90a",), op=("fprop",), dims=(2,),
                                dtypes=[("bf16", "bf16", "f32", "bf16")], stages=(3,)):
            # halo: A boxes are input tiles; gather and direct kernels have no TMA boxes
            if space.is_valid(k)[0] and space.family(k) == "tma" and not space.halo_tiles(k):
                c = space.derive(k)
                self.assertEqual(c.a_box_rows * k.cluster_n, k.tile_m)
                self.assertEqual(c.b_box_rows * k.cluster_m, k.tile_n)
                self.assertEqual(c.a_box_rows % 8, 0)
                self.assertEqual(c.b_box_rows % 8, 0)
                self.assertLessEqual(max(c.a_box_rows, c.b_box_rows), space.TMA_BOX_MAX)
                self.assertLessEqual(c.a_box_cols * space.ELEM_BYTES[k.a], space.SWIZZLE_BYTES)

    def test_dtypes(self):
        self.assertValid(variant(BF16, a="f16", b="f16", out="f16"))
        self.assertValid(variant(BF16, out="f32"))
        self.assertInvalid(variant(BF16, b="f16"), "A bf16 and B f16 differ")
        # tf32: wgmma tf32 has no transposed operands; 32 channels per stage, f32 out.
        tf32 = variant(BF16, a="tf32", b="tf32", tile_k=32, out="f32")
        self.assertValid(tf32)
        self.assertEqual(space.derive(tf32).k_steps, 4)
        self.assertIn("m64n128k8.f32.tf32.tf32", render.render(tf32))
        self.assertNotIn("p, 1, 1, 0, 0;", render.render(tf32))   # no transpose immediates
        self.assertInvalid(dataclasses.replace(tf32, out="tf32"), "a tf32 kernel writes f32")
        self.assertInvalid(dataclasses.replace(tf32, tile_k=64), "tile K 64")
        # tf32 dgrad reads a K-major copy of the filter (KEY_transpose): B is not transposed.
        tf32_dgrad = dataclasses.replace(tf32, op="dgrad")
        self.assertValid(tf32_dgrad)
        self.assertEqual(space.mn_major(tf32_dgrad), (False, False))
        self.assertTrue(space.transposes_filter(tf32_dgrad))
        self.assertFalse(space.transposes_filter(variant(BF16, op="dgrad")))
        c = space.derive(tf32_dgrad)
        self.assertEqual((c.b_box_rows, c.b_box_cols), (128, 32))   # rows of C, a 128-byte row of K
        self.assertIn("_transpose(const float *w", render.render(tf32_dgrad))
        self.assertInvalid(dataclasses.replace(tf32_dgrad, tile_m=256), "a tf32 dgrad warpgroup holding 128")
        # tf32 wgrad: TMA writes MN-major stages (column boxes of 32 channels), the
        # consumers copy them K-major into two scratch buffers, wgmma reads those.
        tf32_wgrad = dataclasses.replace(tf32, op="wgrad")
        self.assertValid(tf32_wgrad)
        self.assertTrue(space.transposes_stages(tf32_wgrad))
        self.assertFalse(space.transposes_stages(variant(BF16, op="wgrad")))
        self.assertFalse(space.transposes_stages(tf32_dgrad))
        self.assertEqual(space.mn_major(tf32_wgrad), (True, True))   # as TMA loads them
        c = space.derive(tf32_wgrad)
        self.assertEqual((c.a_box_rows, c.a_box_cols, c.b_box_rows, c.b_box_cols), (32, 32, 32, 32))
        self.assertEqual(c.scratch_bytes, 2 * (128 + 128) * 128)
        self.assertEqual(c.smem_bytes, 4 * (16384 + 16384) + c.scratch_bytes + c.epi_bytes + 4 * 16 + 1024)
        self.assertEqual(space.derive(tf32).scratch_bytes, 0)
        src = render.render(tf32_wgrad)
        self.assertIn("m64n128k8.f32.tf32.tf32", src)
        self.assertIn("copy_stage(sa + stage * A_STAGE", src)
        self.assertIn("cvc_fence_proxy_async();   // the generic-proxy writes", src)
        self.assertIn("COL_CH = 32,", src)
        self.assertNotIn("cvc_desc_mnmajor_sw128(a_base", src)
        self.assertNotIn("copy_stage", render.render(variant(BF16, op="wgrad")))
        self.assertInvalid(dataclasses.replace(tf32_wgrad, stages=5), "64 KiB transpose scratch")
        self.assertValid(dataclasses.replace(tf32_wgrad, tile_n=64, stages=6))
        self.assertInvalid(dataclasses.replace(tf32_wgrad, tile_n=64, schedule="pingpong"),
                           "schedule pingpong for tf32 wgrad")
        self.assertInvalid(dataclasses.replace(tf32_wgrad, stages=3, cluster_n=2), "the tf32 wgrad producer")
        self.assertValid(dataclasses.replace(tf32_wgrad, stages=3, cluster_m=2))
        self.assertValid(dataclasses.replace(tf32_wgrad, tile_n=64, cluster_n=2))
        self.assertInvalid(dataclasses.replace(tf32_wgrad, tile_m=256, tile_n=64, stages=2, cluster_n=2),
                           "the tf32 wgrad producer")
        self.assertInvalid(dataclasses.replace(tf32_wgrad, tile_m=256, stages=2), "in two m64 atoms")
        self.assertValid(dataclasses.replace(tf32_wgrad, tile_n=256, stages=2))   # one atom of 128
        self.assertInvalid(variant(BF16, a="e4m3", b="e4m3", tile_k=128), "input type e4m3")
        self.assertInvalid(variant(BF16, acc="f16"), "accumulator f16")
        self.assertInvalid(variant(BF16, out="f16"), "output f16: an bf16 kernel writes bf16 or f32")

    def test_unimplemented_arch_op_schedule(self):
        self.assertInvalid(variant(BF16, arch="sm100a"), "sm100a kernels are 1sm or 2sm")   # tests/test_sm100.py
        self.assertInvalid(variant(BF16, schedule="2sm"), "schedule 2sm: coop, pingpong, swap, halo, grouped, gather or direct")
        self.assertInvalid(variant(BF16, arch="sm80"), "unknown arch sm80")
        self.assertValid(variant(BF16, op="dgrad"))
        self.assertValid(variant(BF16, op="wgrad"))
        self.assertInvalid(variant(BF16, op="bprop"), "unknown op bprop")
        self.assertInvalid(variant(BF16, schedule="rr"), "schedule rr")
        self.assertInvalid(variant(BF16, dims=4), "dims 4")

    def test_pingpong_gives_each_warpgroup_the_whole_tile(self):
        k = variant(BF16, schedule="pingpong")
        self.assertValid(k)
        c = space.derive(k)
        self.assertEqual((c.split, c.wg_m, c.wg_n, c.atoms, c.acc_regs), ("none", 128, 128, 2, 128))
        self.assertEqual(c.empty_arrivals, 1)   # only the warpgroup whose tile it is frees a stage
        self.assertEqual(space.derive(variant(BF16, schedule="pingpong", cluster_m=2)).empty_arrivals, 2)
        self.assertEqual(space.derive(variant(BF16)).empty_arrivals, 2)   # coop: both warpgroups
        # A whole 128x256 tile is 256 accumulators per thread: over the budget for one warpgroup.
        self.assertInvalid(variant(BF16, schedule="pingpong", tile_n=256), "register budget: 256")
        self.assertValid(variant(BF16, schedule="pingpong", tile_m=64, tile_n=256))

    def test_halo_tiles_are_blocks_of_output_rows(self):
        k = variant(BF16, schedule="halo", tile_m=224, tile_n=64, stages=8)
        self.assertValid(k)
        c = space.derive(k)
        # swap's warpgroups: one m64 atom of filters, wgmma N = the block's 224 pixels (28 rows x 8).
        self.assertEqual((c.split, c.wg_m, c.wg_n, c.atoms, c.acc_regs), ("none", 224, 64, 1, 112))
        self.assertTrue(space.halo_tiles(k) and space.swaps_operands(k))
        self.assertFalse(space.splits_k(k))
        # No A stages: two input tiles of 30 rows x 10 pixels x 128 B (37.5 KiB, whole 1 KiB atoms).
        self.assertEqual(c.a_stage_bytes, 0)
        self.assertEqual(space.halo_buffer_bytes(k), 38 * 1024)
        # Epilogue chunks of 14 output rows (112 pixels), two buffers per warpgroup; 8 rows of a 32-row block.
        self.assertEqual((c.a_box_rows, c.a_box_cols, c.y_box_rows, c.y_box_cols), (30, 64, 112, 64))
        self.assertEqual(c.smem_bytes, 8 * 8192 + 2 * 38 * 1024 + 2 * 2 * 112 * 128 + (2 * 8 + 2 * 2) * 8 + 1024)
        self.assertEqual(space.derive(variant(BF16, schedule="halo", tile_m=256, tile_n=64, stages=8)).y_box_rows, 64)
        self.assertEqual(space.derive(variant(BF16, schedule="halo", tile_m=256, tile_n=128, stages=6)).empty_arrivals, 2)
        src = render.render(k)
        self.assertIn("m64n224k16", src)
        self.assertIn("cvc_desc_kmajor_sw128_sbo(x_base + 32 * k, HALO_W * ROW_BYTES)", src)
        self.assertIn("cvc_tma_store_4d(tmap_y, dst, col_tile, blk.w0, h0, blk.img)", src)
        self.assertNotIn("cvc_tma_im2col", src)   # one tiled box per input tile
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=200, tile_n=64),
                           "schedule halo: tile N 64 or 128 (an m64 atom of filters per warpgroup) and tile M")
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=224, tile_n=256), "schedule halo: tile N 64 or 128")
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=224, tile_n=64, dims=3), "schedule halo: 2D fprop")
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=224, tile_n=64, op="dgrad"), "schedule halo: 2D fprop")
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=224, tile_n=64, out="f32"), "schedule halo: 2D fprop")
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=224, tile_n=64, tile_k=128), "schedule halo: tile K")
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=224, tile_n=64, cluster_m=2), "1x1 only")
        self.assertInvalid(variant(BF16, schedule="halo", tile_m=256, tile_n=128, stages=7), "input tiles")

    def test_swap_transposes_a_tile_of_64_filters(self):
        k = variant(BF16, schedule="swap", tile_m=256, tile_n=64)
        self.assertValid(k)
        c = space.derive(k)
        # The pingpong tile, one m64 atom of filters; wgmma N = the 256 pixels.
        self.assertEqual((c.split, c.wg_m, c.wg_n, c.atoms, c.acc_regs), ("none", 256, 64, 1, 128))
        self.assertFalse(space.splits_k(k))
        # One epilogue buffer per warpgroup, so that a fifth 40 KiB stage fits (a pingpong has two).
        self.assertEqual(c.epi_bytes, 2 * 64 * 128)
        self.assertEqual(space.derive(variant(BF16, schedule="pingpong", tile_m=256, tile_n=64)).epi_bytes,
                         2 * 2 * 64 * 128)
        self.assertValid(variant(BF16, schedule="swap", tile_m=256, tile_n=64, stages=5))
        self.assertInvalid(variant(BF16, schedule="pingpong", tile_m=256, tile_n=64, stages=5), "shared memory")
        self.assertValid(variant(BF16, schedule="swap", tile_m=128, tile_n=64, stages=6))
        self.assertInvalid(variant(BF16, schedule="swap", tile_n=256), "schedule swap: tile N 64 or 128")
        # Tile N 128: the warpgroups split the filters (an atom each) over the same pixels; tile M 192.
        c192 = space.derive(variant(BF16, schedule="swap", tile_m=192, tile_n=128, stages=5))
        self.assertEqual((c192.split, c192.wg_m, c192.wg_n, c192.atoms, c192.acc_regs, c192.empty_arrivals),
                         ("n", 192, 64, 1, 96, 2))
        self.assertIn("m64n192k16", render.render(variant(BF16, schedule="swap", tile_m=192, tile_n=128)))
        self.assertInvalid(variant(BF16, tile_m=192), "tile M 192")
        self.assertInvalid(variant(BF16, schedule="swap", tile_m=64, tile_n=64), "schedule swap: tile N 64")
        self.assertInvalid(variant(BF16, schedule="swap", tile_m=256, tile_n=64, out="f32"),
                           "schedule swap: fprop of f16/bf16 to the same type only")
        self.assertInvalid(variant(BF16, schedule="swap", tile_m=256, tile_n=64, op="dgrad"),
                           "schedule swap: fprop")
        src = render.render(k)
        self.assertIn("m64n256k16", src)
        self.assertIn("stmatrix.sync.aligned.m8n8.x4.trans", (ROOT / "templates/include/cvc_sync.h").read_text())
        self.assertIn("cvc_stmatrix_x4_trans(", src)
        self.assertNotIn("epilogue_partial", src)

    def test_tile_n_32(self):
        # fprop's filters are K-major: a warpgroup of 32 filters (m64n32), its epilogue rows 64 bytes.
        k = variant(BF16, tile_n=32)
        self.assertValid(k)
        c = space.derive(k)
        self.assertEqual((c.split, c.wg_n, c.acc_regs, c.y_box_cols, c.b_box_rows), ("m", 32, 16, 32, 32))
        self.assertEqual(space.y_row_bytes(k, c.wg_n), 64)
        self.assertIn("m64n32k16", render.render(k))
        self.assertTrue(space.splits_k(k) and space.reuses_b(k))
        self.assertTrue(space.index_values(k)["flags"] & index.FLAG_BITS["VERIFIED"])   # the GPU suite ran them
        # dgrad's filters are MN-major: one 32-column atom under a 64-byte swizzle; wgrad's B is x,
        # in 64-column atoms.
        dg = variant(BF16, tile_n=32, op="dgrad")
        self.assertValid(dg)
        self.assertEqual((space.derive(dg).b_box_cols, space.stage_rows(dg)), (32, (128, 64)))
        self.assertIn("m64n32k16", render.render(dg))
        # 64-byte epilogue rows: no scattering epilogue, so unit-stride dgrad only (flag SCATTERS off)
        self.assertFalse(space.dgrad_scatters(dg))
        self.assertFalse(space.index_values(dg)["flags"] & index.FLAG_BITS["SCATTERS"])
        self.assertTrue(space.index_values(variant(BF16, op="dgrad"))["flags"] & index.FLAG_BITS["SCATTERS"])
        self.assertInvalid(variant(BF16, tile_n=32, op="wgrad"), "warpgroup N 32")
        self.assertInvalid(variant(BF16, tile_n=32, schedule="swap", tile_m=256), "schedule swap: tile N 64 or 128")

    def test_grouped_fprop_packs_whole_groups(self):
        k = variant(BF16, schedule="grouped", tile_m=128, tile_n=64)
        self.assertValid(k)
        self.assertTrue(space.groups_fprop(k))
        c = space.derive(k)
        self.assertEqual((c.split, c.wg_m, c.wg_n), ("m", 64, 64))   # coop's layout: each warpgroup all groups
        self.assertFalse(space.splits_k(k) or space.reuses_b(k) or space.swaps_operands(k))
        # Packs of 4 groups of 16 or 2 of 32 filters, whose channels fill at most one 64-channel stage.
        self.assertEqual([(v.k, v.c) for v in space.pack_variants(k)], [(16, 16), (32, 16), (32, 32)])
        self.assertEqual([(v.k, v.c) for v in space.pack_variants(dataclasses.replace(k, tile_n=128))], [(32, 16)])
        vals = space.index_values(k)
        self.assertEqual(vals["groups_mode"], index.GROUPS_MODE["packed"])
        self.assertEqual(vals["group_c_mask"], (1 << 4) | (1 << 5))
        self.assertTrue(vals["flags"] & index.FLAG_BITS["VERIFIED"])   # the GPU suite ran them
        self.assertTrue(vals["flags"] & index.FLAG_BITS["DGRAD_AS_FPROP"])   # exports KEY_regroup
        self.assertTrue(vals["flags"] & index.FLAG_BITS["WIDENS_GROUPS"])
        for flag in ("DGRAD_AS_FPROP", "WIDENS_GROUPS"):
            self.assertFalse(space.index_values(key(BF16))["flags"] & index.FLAG_BITS[flag])
        self.assertTrue(space.index_values(key(BF16))["flags"] & index.FLAG_BITS["VERIFIED"])
        src = render.render(k)
        for text in ("wgmma.mma_async.sync.aligned.m64n16k16", "wgmma.mma_async.sync.aligned.m64n32k16",
                     "m64n64k16", "const int chan0 = n0 / p->group_filters * p->group_channels;",
                     "c + chan0", "consume_pack3(", f"{k.name()}_regroup("):
            self.assertIn(text, src)
        self.assertNotIn("chan0", render.render(key(BF16)))
        # The runtime's rule (k and c in the mask, k dividing tile N, the pack's P x c channels within
        # tile K) takes exactly the packs the consumers compile.
        for name in ("128x64x64", "256x64x64", "128x128x64"):
            g = variant(BF16, schedule="grouped", tile_m=int(name.split("x")[0]), tile_n=int(name.split("x")[1]))
            widths = space.pack_widths(g)
            taken = {(kk, cc) for kk in widths for cc in widths   # not k % tile N == 0: a group a column
                     if g.tile_n % kk == 0 and kk % g.tile_n and g.tile_n // kk * cc <= g.tile_k}
            self.assertEqual(taken, {(v.k, v.c) for v in space.pack_variants(g)}, name)
        self.assertInvalid(variant(BF16, schedule="grouped", op="dgrad"), "schedule grouped: fprop of f16/bf16")
        self.assertInvalid(variant(BF16, schedule="grouped", tile_m=64, tile_n=64), "schedule grouped: tile M 128")
        self.assertInvalid(variant(BF16, schedule="grouped", tile_n=256), "tile N 64 or 128")
        self.assertInvalid(variant(BF16, schedule="grouped", tile_n=64, tile_k=32), "schedule grouped: tile K 32")
        self.assertInvalid(variant(BF16, schedule="grouped", tile_n=64, cluster_m=2), "1x1 only")
        self.assertInvalid(variant(BF16, schedule="grouped", arch="sm100a", tile_n=64), "schedule grouped")

    def test_stages(self):
        self.assertValid(variant(BF16, tile_m=64, tile_n=64, stages=2))
        self.assertInvalid(variant(BF16, tile_m=64, tile_n=64, stages=1), "stages 1: 2..8")
        self.assertInvalid(variant(BF16, tile_m=64, tile_n=64, stages=9), "stages 9")

    def test_input_tile_kernels(self):
        # One-stage gather kernels: fprop tiles of 128 pixels by 32 or 64 filters, dgrad tiles of 64 or 128
        # positions by 8..64 stride phase columns, wgrad tiles of 32 or 64 filters by 32..192
        # columns (SPLITS_K: KEY_reduce adds their slices); 1D and 2D, f16/bf16; each op its own template.
        tile = variant(GATHER, tile_k=16, stages=1)
        self.assertValid(tile)
        wgrad = variant(GATHER, op="wgrad", tile_m=64, tile_n=128, tile_k=16, stages=1)
        self.assertValid(wgrad)
        self.assertValid(dataclasses.replace(wgrad, tile_n=64, dims=1, a="f16", b="f16", out="f32"))
        self.assertValid(dataclasses.replace(wgrad, tile_m=32, tile_n=32))
        self.assertValid(dataclasses.replace(wgrad, tile_n=160))
        self.assertInvalid(dataclasses.replace(wgrad, tile_m=128), "wgrad tile 128x128x16: (32, 64) filters")
        self.assertInvalid(dataclasses.replace(wgrad, tile_n=16), "(32, 64, 96, 128, 160, 192) (tap, channel) columns")
        dgrad = variant(GATHER, op="dgrad", tile_n=16, tile_k=16, stages=1)
        self.assertValid(dgrad)
        self.assertValid(dataclasses.replace(dgrad, tile_m=64, tile_n=48))
        self.assertInvalid(dataclasses.replace(dgrad, tile_m=256), "dgrad tile 256x16x16: (64, 128) positions")
        self.assertInvalid(dataclasses.replace(dgrad, tile_n=160), "(8, 16, 24, 32, 48, 64) phase columns")
        self.assertInvalid(dataclasses.replace(wgrad, dims=3), "3D and tf32 take the pipelined")
        self.assertEqual(render.template_name(dgrad), "gather_tile_dgrad.cu.j2")
        self.assertEqual(gather.capabilities(dgrad)["flags"], ("INPUT_TILE", "CHAINED"))
        self.assertInvalid(dataclasses.replace(tile, tile_m=64), "fprop tile 64x64x16: 128 pixels")
        self.assertEqual(render.template_name(tile), "gather_tile.cu.j2")
        self.assertEqual(render.template_name(wgrad), "gather_tile_wgrad.cu.j2")
        caps = gather.capabilities(wgrad)
        self.assertEqual((caps["flags"], caps["groups_mode"]), (("INPUT_TILE", "SPLITS_K", "CHAINED"), "none"))
        self.assertEqual(gather.capabilities(tile)["flags"], ("INPUT_TILE", "CHAINED"))
        text = render.render(wgrad)
        self.assertIn(f"BP = {index.TILE_WGRAD_BLOCK_PIXELS}", text)
        self.assertIn(f"{wgrad.name()}_reduce(", text)
        self.assertIn(gather.REDUCE_RESULT["wgrad"], text)

    def test_every_rejection_of_the_space_has_a_reason(self):
        keys = space.product(arch=("sm90a",), dims=(2,), stages=(2, 4, 8))
        valid = 0
        for k in keys:
            ok, why = space.is_valid(k)
            self.assertEqual(ok, why == "", k.name())
            valid += ok
            if ok:   # and derives what the index needs, within the target's limits
                c = space.derive(k)
                self.assertLessEqual(c.smem_bytes, space.SMEM_OPTIN_BYTES[k.arch])
                self.assertLessEqual(c.acc_regs, space.SM90_ACC_REG_BUDGET)
                if space.family(k) == "tma":
                    self.assertEqual(c.threads, 384)
                else:   # gather and direct: whole warps, one CTA's worth
                    self.assertTrue(c.threads % 32 == 0 and 32 <= c.threads <= 1024, k.name())
                index.record(dict(space.index_values(k), registers=1, blob_crc=0, blob_offset=0, blob_size=1))
        self.assertGreater(valid, 10)
        self.assertEqual(keys, sorted(keys, key=space.Key.name))
        self.assertEqual(len(keys), len(set(keys)))


SPEC_OK = """\
# a comment
[one]
arch      sm90a
op        fprop
dims      2d
dtypes    bf16_bf16_f32_bf16
tile      128x128x64
stages    4
cluster   1x1 2x1
schedule  coop
"""


class Specs(unittest.TestCase):
    def bad(self, text, message):
        with self.assertRaises(ValueError) as cm:
            spec.parse(text, "x.spec")
        self.assertIn(message, str(cm.exception))

    def replace_line(self, axis, line):
        return "\n".join(line if l.startswith(axis + " ") else l for l in SPEC_OK.split("\n"))

    def test_good_spec(self):
        blocks = spec.parse(SPEC_OK, "x.spec")
        self.assertEqual(len(blocks), 1)
        self.assertEqual(blocks[0]["cluster"], [(1, 1), (2, 1)])
        self.assertEqual(blocks[0]["tile"], [(128, 128, 64)])
        self.assertEqual(blocks[0]["dims"], [2])

    def test_unknown_axis(self):
        self.bad(SPEC_OK + "colour red\n", "x.spec:11: unknown axis 'colour'")

    def test_duplicate_axis(self):
        self.bad(SPEC_OK + "stages 3\n", "x.spec:11: axis 'stages' given twice in [one]")

    def test_missing_axis(self):
        text = SPEC_OK.replace("stages    4\n", "")
        self.bad(text, "x.spec:2: block [one] lacks stages")
        self.bad(SPEC_OK + "[two]\narch sm90a\n", "x.spec:11: block [two] lacks op, dims")

    def test_bad_values(self):
        cases = [("dims", "dims 4d", "x.spec:5: dims value '4d' is not 1d, 2d or 3d"),
                 ("dims", "dims 2", "dims value '2'"),
                 ("dtypes", "dtypes bf16_bf16_f32", "dtypes value 'bf16_bf16_f32' is not A_B_ACC_OUT"),
                 ("dtypes", "dtypes bf16_bf16_f32_int8", "x.spec:6: dtypes value 'bf16_bf16_f32_int8'"),
                 ("tile", "tile 128x128", "x.spec:7: tile value '128x128' is not MxNxK"),
                 ("tile", "tile 128x128xk", "tile value '128x128xk' is not a number"),
                 ("stages", "stages four", "x.spec:8: stages value 'four' is not a number"),
                 ("cluster", "cluster 2", "x.spec:9: cluster value '2' is not MxN"),
                 ("cluster", "cluster 2xy", "is not a number"),
                 ("arch", "arch sm80", "x.spec:3: arch value 'sm80' is not one of sm90a, sm100a"),
                 ("op", "op bprop", "x.spec:4: op value 'bprop' is not one of fprop, dgrad, wgrad"),
                 ("schedule", "schedule fast", "x.spec:10: schedule value 'fast'")]
        for axis, line, message in cases:
            with self.subTest(line=line):
                self.bad(self.replace_line(axis, line), message)

    def test_structure_errors(self):
        self.bad("arch sm90a\n", "x.spec:1: axis line before the first [block]")
        self.bad(SPEC_OK.replace("stages    4", "stages"), "x.spec:8: axis 'stages' has no values")
        self.bad("# nothing\n\n", "x.spec: no blocks")

    def test_expand_dedups_and_sorts(self):
        two = SPEC_OK + SPEC_OK.replace("[one]", "[two]").replace("cluster   1x1 2x1", "cluster 2x1 1x2") \
            .replace("stages    4", "stages 4 3")
        valid, rejected = spec.expand(spec.parse(two, "x.spec"))
        names = [k.name() for k in valid]
        self.assertEqual(names, sorted(names))
        self.assertEqual(len(names), len(set(names)))
        # (4: 1x1 2x1) | (4 3: 2x1 1x2) = 4x{1x1, 2x1, 1x2} + 3x{2x1, 1x2}
        self.assertEqual(len(names), 5)
        self.assertEqual(rejected, [])
        bad = SPEC_OK.replace("tile      128x128x64", "tile 128x128x64 128x128x16")
        valid, rejected = spec.expand(spec.parse(bad, "x.spec"))
        self.assertEqual(len(valid), 2)
        self.assertEqual([k.tile_k for k, _ in rejected], [16, 16])
        self.assertTrue(all("tile K 16" in why for _, why in rejected))
        self.assertEqual([k.name() for k, _ in rejected], sorted(k.name() for k, _ in rejected))

    def test_find(self):
        d = ROOT / "catalog" / "specs"
        self.assertEqual(spec.find("ci", d), d / "ci.spec")
        self.assertEqual(spec.find("other/x.spec", d), pathlib.Path("other/x.spec"))


class TemplateParts(unittest.TestCase):
    """The TMA kernels' templates: parts by role, numbers from Python, one shared-memory map."""
    TMA_TEMPLATES = ["sm90a_conv.cu.j2", "sm100a_conv.cu.j2"] + [
        f"{d}/{p.name}" for d in ("common", "sm90a", "sm100a") for p in sorted((ROOT / "templates" / d).glob("*"))]

    def test_every_template_is_a_build_dependency(self):
        # catalog/meson.build lists each template and part (every .j2 file under templates/), so that
        # editing one regenerates the kernels.
        build = (ROOT / "catalog" / "meson.build").read_text()
        names = sorted(str(p.relative_to(ROOT / "templates")) for p in (ROOT / "templates").rglob("*.j2"))
        self.assertIn("gather_tile.cu.j2", names)
        for name in names:
            with self.subTest(template=name):
                self.assertIn(f"'{name}'" if "/" in name else f"'../templates/{name}'", build)

    def test_templates_print_what_python_computes(self):
        # No arithmetic, assignments or conditional expressions in the TMA templates: what they print
        # comes from render.py / sm100.py / parts.py / space.py; branches stay shallow.
        for name in self.TMA_TEMPLATES:
            with self.subTest(template=name):
                text = (ROOT / "templates" / name).read_text()
                self.assertNotRegex(text, r"{%-?\s*(set|macro)\b")
                for expr in re.findall(r"{{(.*?)}}", text, re.S):
                    self.assertNotRegex(expr, r"\bif\b|[-+*/%~]|\|", f"{name}: {{{{{expr}}}}}")
                depth = deepest = 0
                for tag in re.findall(r"{%-?\s*(if|endif)\b", text):
                    depth += 1 if tag == "if" else -1
                    deepest = max(deepest, depth)
                self.assertLessEqual(deepest, 2)

    def test_every_part_is_used(self):
        # Each part is included by some key of the default spec: no dead files.
        used = set()
        env = render.env()
        loader_source = env.loader.get_source

        class Recording(jinja2.FileSystemLoader):
            def get_source(self, environment, template):
                used.add(template)
                return loader_source(environment, template)
        rec = jinja2.Environment(loader=Recording(str(render.TEMPLATE_DIR)), undefined=jinja2.StrictUndefined,
                                 trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
        valid = [k for name in ("default",) for k in spec.load(ROOT / "catalog" / "specs" / f"{name}.spec")[0]]
        for k in valid:
            if space.family(k) == "tma":
                rec.get_template(render.template_name(k)).render(**render.context(k))
        self.assertEqual(sorted(set(self.TMA_TEMPLATES) - used), [])

    def test_shared_memory_map(self):
        # The map the templates print (SMEM_*) is the one the index sizes: its regions one after the
        # other, each aligned, and smem_bytes their sum plus the base's alignment slack.  The kernel
        # static_asserts that the map fits the size the index records.
        valid, _ = spec.load(ROOT / "catalog" / "specs" / "default.spec")
        for k in valid:
            if space.family(k) != "tma":
                continue
            with self.subTest(key=k.name()):
                cfg = space.derive(k)
                regions, end = space.smem_offsets(cfg)
                self.assertEqual(end + space.SMEM_ALIGN, cfg.smem_bytes)
                self.assertEqual(space.index_values(k)["smem_bytes"], cfg.smem_bytes)
                src = render.render(k)
                for name, offset, _, _ in regions:
                    self.assertIn(f"SMEM_{name} = {offset},", src)
                self.assertIn(f"SMEM_BYTES = {cfg.smem_bytes},", src)
                self.assertIn("static_assert(SMEM_ALIGN + SMEM_END <= SMEM_BYTES", src)
                # stage buffers and the epilogue's on 1024-byte swizzle atoms
                for name, offset, _, _ in regions:
                    if name in ("A", "B", "SCRATCH", "EPI"):
                        self.assertEqual(offset % 1024, 0, name)
        halo = space.derive(variant(BF16, schedule="halo", tile_m=224, tile_n=64, stages=8))
        self.assertEqual([r.name for r in halo.smem_regions][-2:], ["HALO_FULL", "HALO_EMPTY"])
        strided = space.derive(variant(BF16, op="dgrad", tile_n=64))
        self.assertEqual([r.name for r in strided.smem_regions][-3:], ["EPI_FULL", "EPI_FREE", "ROW_TABLES"])

    def test_static_assert_guards_the_map(self):
        # A map larger than the size the index records does not compile.
        nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK)
                                        else None)
        if nvcc is None:
            self.skipTest("no nvcc")
        src = render.render(key(BF16))
        self.assertIn("SMEM_END = 163904,", src)
        self.assertIn("SMEM_BYTES = 164928,", src)
        with tempfile.TemporaryDirectory() as d:
            for smem_bytes, ok in ((164928, True), (164927, False)):
                cu = pathlib.Path(d) / f"k{smem_bytes}.cu"
                cu.write_text(src.replace("SMEM_BYTES = 164928,", f"SMEM_BYTES = {smem_bytes},"))
                r = subprocess.run([nvcc, "-ptx", "-gencode=arch=compute_90a,code=compute_90a",
                                    f"-I{ROOT / 'templates' / 'include'}", "-o", str(cu.with_suffix(".ptx")), str(cu)],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode == 0, ok, r.stderr)
                if not ok:
                    self.assertIn("the shared-memory map outgrows what the index records", r.stderr)


class Rendering(unittest.TestCase):
    def test_render_is_deterministic(self):
        k = key(BF16)
        self.assertEqual(render.render(k), render.render(k))
        self.assertNotEqual(render.render(k), render.render(variant(BF16, stages=3)))

    def test_strict_undefined_raises(self):
        env = render.env()
        self.assertIs(env.undefined, jinja2.StrictUndefined)
        self.assertEqual(env.from_string("x={{ x }}").render(x=3), "x=3")
        with self.assertRaises(jinja2.UndefinedError):
            env.from_string("x={{ missing }}").render(x=3)
        with self.assertRaises(jinja2.UndefinedError):
            env.from_string("{% for i in missing %}{% endfor %}").render()

    def test_invalid_key_does_not_render(self):
        with self.assertRaisesRegex(ValueError, "register budget"):
            render.render(variant(BF16, tile_m=256, tile_n=256))

    def test_every_spec_key_renders_with_its_key_as_the_kernel_name(self):
        for name in ("default", "ci"):
            valid, _ = spec.load(ROOT / "catalog" / "specs" / f"{name}.spec")
            self.assertGreater(len(valid), 0)
            for k in valid:
                with self.subTest(spec=name, key=k.name()):
                    src = render.render(k)
                    # the kernel's name starts a line (TMA templates) or follows its __launch_bounds__
                    self.assertRegex(src, rf"(\n|__launch_bounds__\([^)]*\) ){k.name()}\(const __grid_constant__")
                    self.assertIn("do not edit", src.split("\n", 1)[0])

    def test_tile_n_160_epilogue_rows(self):
        src = render.render(variant(BF16, tile_n=160))
        self.assertIn("Y_ROW_BYTES = 64,", src)
        self.assertIn("(((byte >> 4) ^ (row >> 1)) & 3) << 4", src)
        self.assertIn("m64n160k16", src)
        base = render.render(key(BF16))
        self.assertIn("Y_ROW_BYTES = 128,", base)
        self.assertNotIn("(row >> 1)", base)

    def test_wgmma_instruction(self):
        text, outs = render.wgmma_instruction(64, "bf16")
        self.assertTrue(text.startswith("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, "))
        self.assertIn("%31}, %32, %33, p,", text)
        self.assertEqual(outs.count('"+f"'), 32)


class Cli(unittest.TestCase):
    def run_gen(self, *args):
        return subprocess.run(GEN + list(args), capture_output=True, text=True)

    def test_generate_writes_one_file_per_key(self):
        keys = self.run_gen("list", "--spec", "ci", "--keys").stdout.split()
        self.assertGreater(len(keys), 0)
        with tempfile.TemporaryDirectory() as d:
            r = self.run_gen("generate", "--spec", "ci", "--out", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            files = sorted(p.name for p in pathlib.Path(d).iterdir())
            self.assertEqual(files, sorted(f"{k}.cu" for k in keys))
            for k in keys:
                self.assertEqual((pathlib.Path(d) / f"{k}.cu").read_text(), render.render(key(k)))
            # Unchanged outputs keep their mtime (ninja rebuilds only what changed).
            path = pathlib.Path(d) / f"{keys[0]}.cu"
            os.utime(path, (1_000_000, 1_000_000))
            self.assertEqual(self.run_gen("generate", "--spec", "ci", "--out", d).returncode, 0)
            self.assertEqual(path.stat().st_mtime, 1_000_000)

    def test_several_specs_make_one_catalog_of_their_union(self):
        ci = set(self.run_gen("list", "--spec", "ci", "--keys").stdout.split())
        k128 = set(self.run_gen("list", "--spec", "k128", "--keys").stdout.split())
        both = self.run_gen("list", "--spec", "ci,k128", "--keys").stdout.split()
        self.assertTrue(ci and k128 and ci - k128 and k128 - ci)
        self.assertEqual(both, sorted(ci | k128))   # a key of both specs once
        self.assertEqual(self.run_gen("list", "--spec", "ci,nonexistent").returncode, 2)

    def test_generate_arch_filter(self):
        with tempfile.TemporaryDirectory() as d:
            r = self.run_gen("generate", "--spec", "ci", "--arch", "sm100a", "--out", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            names = [p.name for p in pathlib.Path(d).iterdir()]
            self.assertTrue(names)
            self.assertTrue(all(n.startswith("sm100a_") for n in names), names)

    def test_errors_exit_2_with_a_message(self):
        r = self.run_gen("list", "--dims", "4d")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--dims: dims value '4d'", r.stderr)
        r = self.run_gen("list", "--spec", "/nonexistent.spec")
        self.assertEqual(r.returncode, 2)
        r = self.run_gen("explain", "sm90a_fprop")
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a key", r.stderr)

    def test_explain(self):
        r = self.run_gen("explain", BF16)
        self.assertEqual(r.returncode, 0)
        self.assertIn(f"{BF16}: valid", r.stdout)
        self.assertIn("smem_bytes", r.stdout)
        r = self.run_gen("explain", BF16.replace("_s4_", "_s9_"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("stages 9", r.stdout)


# ---- the packer and the index layout -------------------------------------------------------------


def kernel_abi():
    for line in (ROOT / "templates" / "include" / "convcat_kernel_abi.h").read_text().split("\n"):
        if line.startswith("#define CONVCAT_KERNEL_ABI "):
            return int(line.split()[2])
    raise AssertionError("no CONVCAT_KERNEL_ABI")


def c_header_macros(text):
    """{NAME: int} of the #define NAME VALUE lines of a generated cvc_index_layout.h."""
    return {m.group(1): int(m.group(2), 0) for m in re.finditer(r"^#define (\w+) (0x[0-9a-f]+|\d+)u?\b", text, re.M)}


def records(data):
    """The header and the records of a catalog, by index.py's layout."""
    head = index.unpack_header(data[:index.HEADER_BYTES])
    off = head["index_offset"]
    return head, [data[off + i * index.ENTRY_BYTES: off + (i + 1) * index.ENTRY_BYTES] for i in range(head["count"])]


class Pack(unittest.TestCase):
    KEYS = [F16_1D, BF16, "sm90a_fprop_3d_bf16_bf16_f32_f32_128x128x64_s4_c1x1_coop",
            "sm90a_fprop_2d_f16_f16_f32_f16_128x256x64_s3_c2x1_coop", GATHER, DIRECT,
            "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm"]

    def make(self, d, keys, sizes=None, regs=None):
        paths = []
        for i, k in enumerate(keys):
            size = sizes[i] if sizes else 1000 + 777 * i
            blob = bytes((i * 31 + j * 7) % 251 for j in range(size))
            (d / f"{k}.fatbin").write_bytes(blob)
            (d / f"{k}.json").write_text(json.dumps({"registers": regs[i] if regs else 100 + i}))
            paths.append(str(d / f"{k}.fatbin"))
        return paths

    def pack(self, d, paths, out="out.catalog"):
        r = subprocess.run(PACK + ["--out", str(d / out)] + paths, capture_output=True, text=True)
        return r, (d / out).read_bytes() if r.returncode == 0 else None

    def check_catalog(self, data, regs=None, blobs=None):
        """A packed catalog read by index.py's layout: the header's fields, and every record's fields
        those of space.index_values (registers and blob aside), its reserved tail zero.  The keys."""
        head, recs = records(data)
        self.assertEqual(head["magic"], index.MAGIC)
        self.assertEqual((head["format_version"], head["kernel_abi"], head["entry_bytes"], head["index_offset"]),
                         (index.FORMAT_VERSION, kernel_abi(), index.ENTRY_BYTES, index.HEADER_BYTES))
        boff = index.HEADER_BYTES + head["count"] * index.ENTRY_BYTES
        self.assertEqual(head["blobs_offset"], boff)
        self.assertEqual(head["file_size"], len(data))
        self.assertEqual(head["reserved"], bytes(8))
        crc_off = dict((n, off) for n, _, off, _, _ in index.HEADER_LAYOUT)["header_crc"]
        self.assertEqual(head["header_crc"], zlib.crc32(data[:crc_off]))
        self.assertEqual(head["index_crc"], zlib.crc32(data[index.HEADER_BYTES:boff]))
        names, end = [], boff
        for rec in recs:
            got = index.unpack_record(rec)
            name = got["key"]
            names.append(name)
            self.assertEqual(rec[:index.KEY_BYTES], name.encode().ljust(index.KEY_BYTES, b"\0"))
            self.assertEqual(rec[index.RECORD_USED:], bytes(index.ENTRY_BYTES - index.RECORD_USED))
            want = space.index_values(key(name))
            for field, _, _ in index.RECORD:
                if field not in ("registers", "blob_crc", "blob_offset", "blob_size"):
                    with self.subTest(key=name, field=field):
                        self.assertEqual(got[field], want[field])
            if regs:
                self.assertEqual(got["registers"], regs[name])
            self.assertEqual(got["blob_offset"] % index.BLOB_ALIGN, 0)
            self.assertGreaterEqual(got["blob_offset"], boff)
            self.assertEqual(data[end:got["blob_offset"]], bytes(got["blob_offset"] - end))   # zero padding
            blob = data[got["blob_offset"]:got["blob_offset"] + got["blob_size"]]
            self.assertEqual(got["blob_crc"], zlib.crc32(blob))
            if blobs:
                self.assertEqual(blob, blobs[name])
            end = got["blob_offset"] + got["blob_size"]
        self.assertEqual(end, len(data))   # the last blob ends the file
        return names

    def test_output_parses(self):
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            paths = self.make(d, self.KEYS)
            r, data = self.pack(d, paths)
            self.assertEqual(r.returncode, 0, r.stderr)
            regs = {k: 100 + i for i, k in enumerate(self.KEYS)}
            blobs = {k: (d / f"{k}.fatbin").read_bytes() for k in self.KEYS}
            names = self.check_catalog(data, regs, blobs)
            self.assertEqual(names, sorted(self.KEYS))
            # The fields by hand, for what the runtime computes with: the key's own fields, and the
            # TMA boxes of sm90a (tile M / cluster N pixels x tile K, tile N / cluster M filters x tile K).
            _, recs = records(data)
            for rec in recs:
                got = index.unpack_record(rec)
                k = key(got["key"])
                self.assertEqual([got[f] for f in ("arch", "op", "dims", "a", "b", "acc", "out", "schedule")],
                                 [index.ARCH[k.arch], index.OP[k.op], k.dims, *(pack_dtype(t) for t in (k.a, k.b, k.acc, k.out)),
                                  index.SCHEDULE[k.schedule]])
                self.assertEqual([got[f] for f in ("tile_m", "tile_n", "tile_k", "stages", "cluster_m", "cluster_n",
                                                   "fallback_m", "fallback_n")],
                                 [k.tile_m, k.tile_n, k.tile_k, k.stages, k.cluster_m, k.cluster_n, k.fallback_m, k.fallback_n])
                self.assertEqual(got["family"], index.FAMILY[space.family(k)])
                if k.arch == "sm90a" and space.family(k) == "tma":
                    c = space.derive(k)
                    self.assertEqual((got["threads"], got["smem_bytes"], got["a_box_rows"], got["a_box_cols"],
                                      got["b_box_rows"], got["b_box_cols"], got["swizzle_bytes"]),
                                     (384, c.smem_bytes, k.tile_m // k.cluster_n, k.tile_k,
                                      k.tile_n // k.cluster_m, k.tile_k, 128))
                    out_bytes = {"f16": 2, "bf16": 2, "f32": 4}[k.out]
                    self.assertEqual((got["y_box_rows"], got["y_box_cols"]), (64, 128 // out_bytes))   # output store box
                    self.assertEqual((got["fb_a_box_rows"], got["fb_b_box_rows"]), (0, 0))
                    self.assertEqual(got["max_stride"], 8)
                    self.assertTrue(got["flags"] & index.FLAG_BITS["VERIFIED"])
                elif space.family(k) == "tma":   # sm100a, a dynamic cluster: its fallback shape's boxes
                    self.assertEqual((got["threads"], got["y_box_rows"]), (192, 32))
                    self.assertGreater(got["fb_a_box_rows"], 0)
                    self.assertFalse(got["flags"] & index.FLAG_BITS["VERIFIED"])
                else:   # gather and direct: no tensor maps, any channels and strides
                    self.assertEqual((got["swizzle_bytes"], got["a_box_rows"], got["c_align"], got["k_align"],
                                      got["max_stride"]), (0, 0, 1, 1, 0))
                    self.assertGreater(got["vec_mask"], 0)
                    self.assertEqual(got["groups_mode"], index.GROUPS_MODE["any" if k.schedule == "gather" else "depthwise"])

    def test_capabilities_of_every_catalog_record(self):
        """Every record's capability fields equal space.index_values: the built catalog's
        ($CONVCAT_TEST_CATALOG) where the test has it, else one packed here of the ci spec's keys."""
        path = os.environ.get("CONVCAT_TEST_CATALOG")
        if path and pathlib.Path(path).is_file():
            data = pathlib.Path(path).read_bytes()
            self.assertGreater(len(self.check_catalog(data)), 0)
            return
        valid, _ = spec.load(ROOT / "catalog" / "specs" / "ci.spec")
        keys = [k.name() for k in valid]
        self.assertEqual({space.family(k) for k in valid}, {"tma", "gather", "direct"})
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            paths = self.make(d, keys, sizes=[300 + 17 * i for i in range(len(keys))])
            r, data = self.pack(d, paths)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.check_catalog(data, {k: 100 + i for i, k in enumerate(keys)}), sorted(keys))

    def test_test_index_holds_the_valid_key_literals(self):
        """pack.py --keys-from: every valid key literal of the sources, without code; invalid ones left out."""
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            src = d / "t.c"
            bad = variant(BF16, tile_m=256, tile_n=256).name()
            src.write_text(f'"{BF16}" "{GATHER}" "{DIRECT}" "{bad}" "sm90a_not_a_key" "{BF16}"\n')
            r = subprocess.run(PACK + ["--out", str(d / "i.catalog"), "--keys-from", str(src)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            data = (d / "i.catalog").read_bytes()
            self.assertEqual(self.check_catalog(data), sorted([BF16, GATHER, DIRECT]))
            _, recs = records(data)
            for rec in recs:
                self.assertEqual(index.unpack_record(rec)["registers"], 0)

    def test_output_is_byte_identical_for_identical_input(self):
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            paths = self.make(d, self.KEYS)
            _, a = self.pack(d, paths, "a.catalog")
            _, b = self.pack(d, list(reversed(paths)), "b.catalog")
            self.assertIsNotNone(a)
            self.assertEqual(a, b)

    def test_refuses_bad_inputs(self):
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            self.make(d, [BF16])
            (d / "not_a_key.fatbin").write_bytes(b"x")
            (d / "not_a_key.json").write_text('{"registers": 1}')
            r, _ = self.pack(d, [str(d / "not_a_key.fatbin")])
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("is not a key", r.stderr)
            bad = variant(BF16, tile_m=256, tile_n=256).name()
            self.make(d, [bad])
            r, _ = self.pack(d, [str(d / f"{bad}.fatbin")])
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("not a valid kernel", r.stderr)
            r, _ = self.pack(d, [str(d / f"{BF16}.fatbin")] * 2)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("duplicate keys", r.stderr)
            # an empty code blob: the runtime would refuse the whole catalog
            self.make(d, [BF16], sizes=[0])
            r, _ = self.pack(d, [str(d / f"{BF16}.fatbin")])
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("empty", r.stderr)
            # neighbour: one byte packs
            self.make(d, [BF16], sizes=[1])
            r, _ = self.pack(d, [str(d / f"{BF16}.fatbin")])
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_empty_catalog(self):
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            r, data = self.pack(d, [])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(len(data), index.HEADER_BYTES)
            self.assertEqual(records(data)[0]["count"], 0)
            self.assertEqual(self.check_catalog(data), [])


class IndexLayout(unittest.TestCase):
    """generator/convcat_gen/index.py: the layout described once, and the C header made from it."""

    def generated_header(self):
        with tempfile.TemporaryDirectory() as t:
            out = pathlib.Path(t) / "cvc_index_layout.h"
            r = subprocess.run([sys.executable, str(ROOT / "generator" / "convcat_gen" / "index.py"), str(out)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            return out.read_text()

    def test_layout_tiles_the_record_and_the_header(self):
        for layout, used, total in ((index.RECORD_LAYOUT, index.RECORD_USED, index.ENTRY_BYTES),
                                    (index.HEADER_LAYOUT, index.HEADER_USED, index.HEADER_BYTES)):
            at = 0
            for name, code, off, size, _ in layout:
                self.assertEqual(off, at, name)
                self.assertEqual(size, struct_size(code), name)
                at = off + size
            self.assertEqual(at, used)
            self.assertLessEqual(used, total)
        self.assertEqual(index.HEADER_USED, index.HEADER_BYTES)
        self.assertEqual([f[0] for f in index.RECORD[:len(index.KEY_FIELDS) + 1]], ["key", *index.KEY_FIELDS])
        # record() and unpack_record() are inverse, and every field is written where the layout says
        vals = space.index_values(key(BF16))
        vals.update(registers=0x1234, blob_crc=0xDEADBEEF, blob_offset=0x0102030405060708, blob_size=77)
        raw = index.record(vals)
        self.assertEqual(len(raw), index.ENTRY_BYTES)
        self.assertEqual(index.unpack_record(raw), vals)
        off = {n: (o, s) for n, _, o, s, _ in index.RECORD_LAYOUT}
        self.assertEqual(int.from_bytes(raw[slice(off["blob_offset"][0], sum(off["blob_offset"]))], "little"),
                         0x0102030405060708)
        self.assertEqual(int.from_bytes(raw[slice(off["registers"][0], sum(off["registers"]))], "little"), 0x1234)
        with self.assertRaises(ValueError):
            index.record({k: v for k, v in vals.items() if k != "flags"})
        with self.assertRaises(ValueError):
            index.record(dict(vals, colour=1))

    def test_c_header_has_every_field(self):
        text = self.generated_header()
        self.assertEqual(text, index.c_header())
        m = c_header_macros(text)
        for prefix, layout in (("CVC_IX", index.RECORD_LAYOUT), ("CVC_HD", index.HEADER_LAYOUT)):
            for name, _, off, size, _ in layout:
                with self.subTest(field=f"{prefix}_{name.upper()}"):
                    self.assertEqual(m.get(f"{prefix}_{name.upper()}_OFF"), off)
                    self.assertEqual(m.get(f"{prefix}_{name.upper()}_SIZE"), size)
            # nothing else of that prefix but the documented extras
            fields = {f"{prefix}_{n.upper()}_{w}" for n, *_ in layout for w in ("OFF", "SIZE")}
            extras = {n for n in m if n.startswith(prefix + "_")} - fields
            self.assertEqual(extras, {"CVC_IX_RESERVED_OFF", "CVC_IX_KEY_FIELDS_END"} if prefix == "CVC_IX" else set())
        self.assertEqual(m["CVC_IX_RESERVED_OFF"], index.RECORD_USED)
        key_end = dict((n, o + s) for n, _, o, s, _ in index.RECORD_LAYOUT)[index.KEY_FIELDS[-1]]
        self.assertEqual(m["CVC_IX_KEY_FIELDS_END"], key_end)
        self.assertEqual((m["CVC_FORMAT_VERSION"], m["CVC_HEADER_BYTES"], m["CVC_ENTRY_BYTES"], m["CVC_KEY_BYTES"],
                          m["CVC_BLOB_ALIGN"]),
                         (index.FORMAT_VERSION, index.HEADER_BYTES, index.ENTRY_BYTES, index.KEY_BYTES, index.BLOB_ALIGN))
        self.assertEqual(m["CVC_FORMAT_VERSION"], 5)
        for name, bit in index.FLAG_BITS.items():
            self.assertEqual(m[f"CVC_F_{name}"], bit)
        self.assertEqual(m["CVC_F_ALL"], sum(index.FLAG_BITS.values()))
        for name, v in index.FAMILY.items():
            self.assertEqual(m[f"CVC_FAMILY_{name.upper()}"], v)
        for name, v in index.GROUPS_MODE.items():
            self.assertEqual(m[f"CVC_GROUPS_{name.upper()}"], v)
        # the generator rewrites the file only when its text changes (ninja keeps what did not)
        with tempfile.TemporaryDirectory() as t:
            out = pathlib.Path(t) / "h.h"
            index.main([str(out)])
            os.utime(out, (1_000_000, 1_000_000))
            index.main([str(out)])
            self.assertEqual(out.stat().st_mtime, 1_000_000)

    def test_c_header_compiles_against_the_public_enums(self):
        """Its CVC_INDEX_LAYOUT_CHECK_ENUMS() static_asserts every enum value the packer writes."""
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        with tempfile.TemporaryDirectory() as t:
            d = pathlib.Path(t)
            (d / "cvc_index_layout.h").write_text(self.generated_header())
            (d / "t.c").write_text('#include "convcat.h"\n#include "cvc_index_layout.h"\n'
                                   "CVC_INDEX_LAYOUT_CHECK_ENUMS();\nint main(void) { return 0; }\n")
            r = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", str(d), "-I", str(ROOT / "runtime" / "include"),
                                str(d / "t.c")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_index_values_fill_every_field(self):
        for name in (BF16, F16_1D, GATHER, DIRECT, "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm",
                     "sm90a_fprop_2d_bf16_bf16_f32_bf16_224x64x64_s8_c1x1_halo"):
            with self.subTest(key=name):
                v = space.index_values(key(name))
                self.assertEqual(set(v), {f[0] for f in index.RECORD})
                self.assertFalse(v["flags"] & ~sum(index.FLAG_BITS.values()))
                index.record(dict(v, registers=1, blob_crc=0, blob_offset=0, blob_size=1))   # each fits its field


def struct_size(code):
    return struct.calcsize("<" + code)


def pack_dtype(t):
    return {"f16": 1, "bf16": 2, "tf32": 3, "f32": 4, "e4m3": 5, "e5m2": 6}[t]


if __name__ == "__main__":
    unittest.main(verbosity=2)
