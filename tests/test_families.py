"""The gather and direct families' rules and numbers (generator/convcat_gen/gather.py, direct.py).

Each rule both ways: a key it accepts, and its neighbour it rejects with a reason naming what
broke; the derived numbers the templates and the index take; every kernel of the default spec
renders.
"""
import os
import pathlib
import sys
import unittest

ROOT = pathlib.Path(os.environ.get("CONVCAT_SOURCE_ROOT", pathlib.Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(ROOT / "generator"))

from convcat_gen import direct, gather, index, render, space, spec  # noqa: E402


def key(text):
    return space.parse(text)


def reason(text):
    ok, why = space.is_valid(key(text))
    return None if ok else why


class GatherRules(unittest.TestCase):
    BASE = "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gather"

    def test_base_is_valid_on_both_arches(self):
        self.assertIsNone(reason(self.BASE))
        self.assertIsNone(reason(self.BASE.replace("sm90a", "sm100a")))

    def test_cluster_must_be_1x1(self):
        self.assertIn("1x1 only", reason(self.BASE.replace("c1x1", "c2x1")))

    def test_types(self):
        self.assertIsNone(reason("sm90a_fprop_2d_tf32_tf32_f32_f32_128x64x16_s3_c1x1_gather"))
        self.assertIsNone(reason("sm90a_dgrad_3d_f16_f16_f32_f32_128x64x32_s3_c1x1_gather"))
        self.assertIn("types", reason("sm90a_fprop_2d_e4m3_e4m3_f32_bf16_128x64x32_s3_c1x1_gather"))
        self.assertIn("types", reason("sm90a_fprop_2d_tf32_tf32_f32_bf16_128x64x16_s3_c1x1_gather"))

    def test_tile_shapes(self):
        for m, n in ((32, 64), (64, 8), (128, 16), (64, 128)):
            self.assertIsNone(reason(f"sm90a_fprop_2d_bf16_bf16_f32_bf16_{m}x{n}x32_s3_c1x1_gather"), (m, n))
        self.assertIn("tile 256x64", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_256x64x32_s3_c1x1_gather"))
        self.assertIn("tile 128x24", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x24x32_s3_c1x1_gather"))
        self.assertIn("register budget", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x32_s3_c1x1_gather"))

    def test_tile_k_is_32_64_or_128_bytes(self):
        self.assertIsNone(reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s2_c1x1_gather"))
        self.assertIn("tile K 8", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x8_s3_c1x1_gather"))
        self.assertIn("tile K 64", reason("sm90a_fprop_2d_tf32_tf32_f32_f32_128x64x64_s3_c1x1_gather"))

    def test_stages_and_shared_memory(self):
        self.assertIn("stages 5", reason(self.BASE.replace("_s3_", "_s5_")))
        self.assertIn("shared memory", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x64_s4_c1x1_gather"))

    def test_derived_numbers(self):
        cfg = space.derive(key(self.BASE))
        self.assertEqual((cfg.warps_m, cfg.warps_n, cfg.wm, cfg.wn, cfg.mi, cfg.ni), (2, 2, 64, 32, 4, 4))
        self.assertEqual(cfg.acc_regs, 64)
        self.assertTrue(cfg.a.kmajor and cfg.b.kmajor)
        self.assertEqual((cfg.a.rows, cfg.a.cols, cfg.a.row_bytes), (128, 32, 64))
        self.assertEqual(cfg.smem_bytes, 3 * (128 * 64 + 64 * 64) + (128 + 64) * gather.ROW_INFO_BYTES)
        self.assertEqual(cfg.vecs, (8, 4, 2, 1))
        self.assertEqual(space.derive(key("sm90a_wgrad_2d_tf32_tf32_f32_f32_64x64x16_s3_c1x1_gather")).vecs, (4, 2, 1))
        dg = space.derive(key(self.BASE.replace("fprop", "dgrad")))
        self.assertTrue(dg.a.kmajor and not dg.b.kmajor)
        self.assertEqual(dg.b.table_rows, 4 * 32)   # MN-major: a ring of stages + 1 tables of tile K rows

    def test_swizzle_keeps_ldmatrix_rows_apart(self):
        for rb in (16, 32, 64, 128, 256):
            shift, mask = gather._swizzle(rb)
            banks = set()
            for row in range(8):
                chunk = 0 ^ ((row >> shift) & mask)
                banks.add((row * rb + chunk * 16) % 128 // 16)
            self.assertEqual(len(banks), 8, rb)

    def test_index_capabilities(self):
        v = space.index_values(key(self.BASE))
        self.assertEqual(v["family"], index.FAMILY["gather"])
        self.assertEqual(v["groups_mode"], index.GROUPS_MODE["any"])
        self.assertEqual((v["c_align"], v["k_align"], v["max_stride"]), (1, 1, 0))
        self.assertEqual(v["vec_mask"], 0b1111)
        w = space.index_values(key(self.BASE.replace("fprop", "wgrad").replace("128x64x32", "64x64x32")))
        self.assertTrue(w["flags"] & index.FLAG_BITS["SPLITS_K"])
        self.assertTrue(v["flags"] & index.FLAG_BITS["SPLITS_K"])   # fprop and dgrad split too


class DirectRules(unittest.TestCase):
    BASE = "sm90a_fprop_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct"

    def test_base_is_valid(self):
        self.assertIsNone(reason(self.BASE))
        self.assertIsNone(reason(self.BASE.replace("sm90a", "sm100a")))
        self.assertIsNone(reason("sm90a_wgrad_3d_f32_f32_f32_f32_4x16x16_s1_c1x1_direct"))

    def test_stages_cluster_types(self):
        self.assertIn("stages 4", reason(self.BASE.replace("_s1_", "_s4_")))
        # stages 2 and 3: input tiles staged in shared memory, 2D and 16-bit only; wgrad 2 stages
        self.assertIsNone(reason(self.BASE.replace("_s1_", "_s2_")))
        self.assertIsNone(reason(self.BASE.replace("_s1_", "_s3_").replace("fprop", "dgrad")))
        self.assertIsNone(reason(self.BASE.replace("_s1_", "_s2_").replace("fprop", "wgrad")))
        self.assertIsNone(reason(self.BASE.replace("_s1_", "_s4_").replace("fprop", "wgrad")))
        self.assertIn("stages 5", reason(self.BASE.replace("_s1_", "_s5_").replace("fprop", "wgrad")))
        self.assertIn("2D problems", reason(self.BASE.replace("_s1_", "_s2_").replace("_2d_", "_3d_")))
        self.assertIn("16-bit", reason("sm90a_fprop_2d_tf32_tf32_f32_f32_8x16x32_s2_c1x1_direct"))
        staged_wgrad = "sm90a_wgrad_2d_bf16_bf16_f32_bf16_8x32x32_s2_c1x1_direct"
        self.assertIsNone(reason(staged_wgrad))
        self.assertIn("multiple of 8", reason(staged_wgrad.replace("8x32x32", "8x20x32")))
        self.assertIn("16, 32 or 64 channels", reason(staged_wgrad.replace("8x32x32", "8x32x128")))
        cfg = space.derive(key(staged_wgrad))
        self.assertEqual((cfg.vec, cfg.strip, cfg.lanes, cfg.threads, cfg.pixel_bytes),
                         (direct.STAGED_WGRAD_VEC, direct.STAGED_SEG, 8, direct.STAGED_WGRAD_THREADS, 64))
        caps = space.index_values(key(staged_wgrad))
        self.assertEqual((caps["vec_mask"], caps["block_vec"], caps["block_strip"], caps["unit_taps"]),
                         (8, direct.STAGED_WGRAD_VEC, direct.STAGED_SEG, 0))
        self.assertIn("strip", reason(self.BASE.replace("_s1_", "_s2_").replace("4x16x64", "4x18x64")))
        # sm90a's staged fprop and dgrad load a tile by TMA into unpadded pixels (flag TMA_TILE);
        # sm100a's copy by cp.async into padded ones
        tma = space.index_values(key("sm90a_fprop_2d_bf16_bf16_f32_bf16_8x16x32_s2_c1x1_direct"))
        self.assertTrue(tma["flags"] & index.FLAG_BITS["TMA_TILE"])
        self.assertEqual(tma["stage_pixel_bytes"], 64)
        copy = space.index_values(key("sm100a_fprop_2d_bf16_bf16_f32_bf16_8x16x32_s2_c1x1_direct"))
        self.assertFalse(copy["flags"] & index.FLAG_BITS["TMA_TILE"])
        self.assertEqual(copy["stage_pixel_bytes"], 80)
        self.assertFalse(space.index_values(key(staged_wgrad))["flags"] & index.FLAG_BITS["TMA_TILE"])
        self.assertIn("1x1 only", reason(self.BASE.replace("c1x1", "c1x2")))
        self.assertIn("types", reason(self.BASE.replace("bf16_bf16_f32_bf16", "bf16_bf16_f32_f32")))

    def test_block(self):
        self.assertIn("multiple of 8", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_4x16x60_s1_c1x1_direct"))
        self.assertIn("strip", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_4x17x64_s1_c1x1_direct"))
        self.assertIn("one row", reason("sm90a_fprop_1d_bf16_bf16_f32_bf16_4x64x64_s1_c1x1_direct"))
        self.assertIsNone(reason("sm90a_fprop_1d_bf16_bf16_f32_bf16_1x64x64_s1_c1x1_direct"))
        self.assertIn("rows", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_32x16x64_s1_c1x1_direct"))
        self.assertIn("threads", reason("sm90a_fprop_2d_bf16_bf16_f32_bf16_2x8x16_s1_c1x1_direct"))

    def test_derived_numbers(self):
        cfg = space.derive(key(self.BASE))
        self.assertEqual((cfg.vec, cfg.strip, cfg.lanes, cfg.threads), (8, 2, 8, 8 * 4 * 8))
        self.assertEqual(space.derive(key("sm90a_wgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct")).threads,
                         direct.WGRAD_THREADS)
        self.assertEqual(space.derive(key("sm90a_fprop_2d_tf32_tf32_f32_f32_4x16x32_s1_c1x1_direct")).vec, 4)

    def test_index_capabilities(self):
        v = space.index_values(key(self.BASE))
        self.assertEqual(v["family"], index.FAMILY["direct"])
        self.assertEqual(v["groups_mode"], index.GROUPS_MODE["depthwise"])
        self.assertEqual((v["block_vec"], v["block_strip"]), (8, 2))
        self.assertEqual(v["vec_mask"], 0b1111)
        self.assertEqual(space.index_values(key("sm90a_fprop_2d_f32_f32_f32_f32_4x16x32_s1_c1x1_direct"))["vec_mask"],
                         0b111)
        # groups of c = k channels where c divides a thread's vector (fprop, dgrad): 1, 2, 4, 8 for
        # 16-bit types, 1, 2, 4 for 32-bit; wgrad every even c (2, 4, 8), sm100a one channel a group
        self.assertEqual(v["group_c_mask"], 0b1111)
        self.assertEqual(space.index_values(key("sm90a_dgrad_2d_f32_f32_f32_f32_4x16x32_s1_c1x1_direct"))["group_c_mask"],
                         0b111)
        self.assertEqual(space.index_values(key("sm90a_wgrad_2d_f32_f32_f32_f32_4x16x32_s1_c1x1_direct"))["group_c_mask"],
                         0b1111)
        self.assertEqual(space.index_values(key("sm100a_fprop_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct"))["group_c_mask"],
                         0b1)

    def test_verified_follows_the_arch_and_family(self):
        for k in (self.BASE, GatherRules.BASE, "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop"):
            for arch in ("sm90a", "sm100a"):
                kk = key(k.replace("sm90a", arch)) if "coop" not in k or arch == "sm90a" else None
                if kk is None:
                    continue
                verified = bool(space.index_values(kk)["flags"] & index.FLAG_BITS["VERIFIED"])
                self.assertEqual(verified, (kk.arch, space.family(kk)) in space.VERIFIED, kk.name())


class Rendering(unittest.TestCase):
    def test_every_new_kernel_of_the_default_spec_renders(self):
        valid, _ = spec.load(ROOT / "catalog" / "specs" / "default.spec")
        fams = [k for k in valid if space.family(k) != "tma"]
        self.assertGreater(len(fams), 100)
        for k in fams:
            text = render.render(k)
            self.assertIn(f'extern "C" __global__', text, k.name())
            self.assertIn(k.name(), text)
            if k.op == "wgrad":
                self.assertIn(f"{k.name()}_reduce", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
