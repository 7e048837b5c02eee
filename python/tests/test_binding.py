"""CPU tests of the ctypes binding (no torch, no GPU): the mirror against convcat.h, discovery of the
library and the catalog, entries, checks, queries, plans refused without a driver, the tune cache.

    python3 -m unittest discover -s python/tests      (CONVCAT_LIBRARY / CONVCAT_CATALOG, or build-ci)
"""
import ctypes
import math
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from unittest import mock

import _env  # noqa: F401  (puts python/ on sys.path)
import convcat
from convcat import _capi, abicheck
from convcat.binding import ConvcatError, NotFound

HEADER = os.path.join(_env.ROOT, "runtime", "include", "convcat.h")


class TestAbi(unittest.TestCase):
    def test_mirror_matches_header(self):
        try:
            problems = abicheck.check(HEADER)
        except abicheck.Unavailable as e:
            self.skipTest(str(e))
        self.assertEqual(problems, [], "\n".join(problems))

    def test_header_parser_sees_every_struct(self):
        with open(HEADER) as fh:
            structs = abicheck.header_structs(fh.read())
        for cls, name in _capi.STRUCTS.items():
            self.assertEqual(structs[name], [f for f, _ in cls._fields_])

    def test_check_catches_a_changed_header(self):
        """A field added to convcat_entry_info, a changed prototype, a new function: each reported."""
        if not shutil.which("gcc") and not shutil.which("cc"):
            self.skipTest("no C compiler")
        with open(HEADER) as fh:
            text = fh.read()
        changed = text.replace("    int fallback_m, fallback_n;\n", "    int fallback_m, fallback_n;\n    int min_cc;\n")
        changed = changed.replace("CONVCAT_API size_t convcat_count(", "CONVCAT_API int convcat_count(")
        changed = changed.replace("#ifdef __cplusplus\n}", "CONVCAT_API int convcat_new_thing(void);\n"
                                  "CONVCAT_API convcat_status convcat_open_default(convcat_catalog **c, int x);\n"
                                  "#ifdef __cplusplus\n}")
        self.assertNotEqual(changed, text)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "convcat.h")
            with open(path, "w") as fh:
                fh.write(changed)
            problems = "\n".join(abicheck.check(path))
        self.assertIn("convcat_entry_info: fields differ", problems)
        self.assertIn("convcat_entry_info: sizeof is 104 in C, 96", problems)
        self.assertIn("convcat_count: the header's prototype", problems)
        self.assertIn("convcat_new_thing: declared", problems)
        self.assertIn("convcat_open_default: the header's prototype", problems)

    def test_optional_open_default_prototype_accepted(self):
        if not shutil.which("gcc") and not shutil.which("cc"):
            self.skipTest("no C compiler")
        with open(HEADER) as fh:
            text = fh.read().replace("#ifdef __cplusplus\n}", "CONVCAT_API convcat_status "
                                     "convcat_open_default(convcat_catalog **catalog_out);\n#ifdef __cplusplus\n}")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "convcat.h")
            with open(path, "w") as fh:
                fh.write(text)
            self.assertEqual(abicheck.check(path), [])

    def test_padded_buffers(self):
        buf, arr = _capi.padded(_capi.Candidate, 3)
        self.assertEqual(len(buf), 3 * ctypes.sizeof(_capi.Candidate) + _capi.SPARE_BYTES)
        self.assertEqual(ctypes.addressof(arr), ctypes.addressof(buf))


class TestDiscovery(unittest.TestCase):
    def setUp(self):
        self.lib = _env.need_library(self)

    def test_explicit_and_env_library(self):
        path = _env.library_path()
        self.assertEqual(convcat.find_library(path), os.path.abspath(path))
        with mock.patch.dict(os.environ, {"CONVCAT_LIBRARY": path}):
            self.assertEqual(convcat.find_library(), os.path.abspath(path))

    def test_missing_library_is_an_error_with_the_places_tried(self):
        with mock.patch.dict(os.environ, {"CONVCAT_LIBRARY": "/nonexistent/libconvcat.so"}):
            with self.assertRaises(NotFound) as cm:
                convcat.find_library()
        self.assertIn("/nonexistent/libconvcat.so ($CONVCAT_LIBRARY", str(cm.exception))
        with self.assertRaises(NotFound):
            convcat.find_library("/nonexistent/x.so")

    def test_build_tree_then_system_loader(self):
        env = {k: v for k, v in os.environ.items() if k != "CONVCAT_LIBRARY"}
        with mock.patch.dict(os.environ, env, clear=True):
            got = convcat.find_library()
        build = os.path.join(_env.ROOT, "build", "runtime", "libconvcat.so")
        if os.path.isfile(build):
            self.assertEqual(got, os.path.abspath(build))
        else:
            self.assertIn("libconvcat", got)   # the loader's name: dlopen searches for it

    def test_catalog_env_explicit_and_library_build_tree(self):
        cat_path = _env.catalog_path()
        if not cat_path:
            self.skipTest("no catalog")
        with mock.patch.dict(os.environ, {"CONVCAT_CATALOG": cat_path}):
            self.assertEqual(convcat.find_catalog(None, self.lib), (os.path.abspath(cat_path), "$CONVCAT_CATALOG"))
        with mock.patch.dict(os.environ, {"CONVCAT_CATALOG": "/nonexistent/c.catalog"}):
            with self.assertRaises(NotFound) as cm:
                convcat.find_catalog(None, self.lib)
            self.assertIn("/nonexistent/c.catalog ($CONVCAT_CATALOG", str(cm.exception))
            # An explicit path wins over the environment.
            self.assertEqual(convcat.open_catalog(cat_path, self.lib).path, os.path.abspath(cat_path))
        env = {k: v for k, v in os.environ.items() if k != "CONVCAT_CATALOG"}
        with mock.patch.dict(os.environ, env, clear=True):
            beside = os.path.abspath(os.path.join(os.path.dirname(self.lib.path), "..", "catalog", "convcat.catalog"))
            if os.path.isfile(beside):
                self.assertEqual(convcat.find_catalog(None, self.lib), (beside, "the library's build tree"))

    def test_open_default_used_when_exported(self):
        """A library exporting convcat_open_default: open_catalog() takes its catalog."""
        cat_path = _env.catalog_path()
        if not cat_path:
            self.skipTest("no catalog")
        real = self.lib.cdll.convcat_open
        calls = []

        def fake_open_default(out):
            calls.append(1)
            return real(cat_path.encode(), out)

        class FakeLib:
            convcat_open_default = staticmethod(fake_open_default)

            def __getattr__(self, name):
                return getattr(real_cdll, name)

        real_cdll = self.lib.cdll
        lib = convcat.Library.__new__(convcat.Library)
        lib.path, lib.cdll = self.lib.path, FakeLib()
        cat = convcat.open_catalog(None, lib)
        self.assertEqual(calls, [1])
        self.assertEqual(cat.found_by, "convcat_open_default")
        self.assertEqual(len(cat), len(convcat.open_catalog(cat_path, self.lib)))


class TestCatalog(unittest.TestCase):
    def setUp(self):
        self.cat = _env.need_catalog(self)
        self.lib = self.cat.lib

    def test_entries_match_the_cli(self):
        cli = os.path.join(os.path.dirname(self.lib.path), "convcat")
        if not os.path.isfile(cli):
            self.skipTest("no convcat command beside the library")
        out = subprocess.run([cli, "--catalog", self.cat.path, "list"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
        keys = [ln.split()[0] for ln in out if re.match(r"sm\d+a_", ln)]
        self.assertEqual(sorted(keys), sorted(e.key for e in self.cat.entries))

    def test_entry_fields_agree_with_keys(self):
        for e in self.cat.entries:
            self.assertTrue(e.key.startswith(f"{e.arch}_{e.op}_{e.dims}d_{e.a_type}_{e.b_type}_{e.acc_type}_{e.out_type}_"
                                             f"{e.tile_m}x{e.tile_n}x{e.tile_k}_s{e.stages}_c{e.cluster_m}x{e.cluster_n}"),
                            e.key)
            self.assertTrue(e.key.endswith("_" + e.schedule), e.key)
            self.assertIs(self.cat.find(e.key), e)
        with self.assertRaises(KeyError):
            self.cat.find("sm90a_fprop_2d_nothing")

    def test_enum_names_agree_with_the_library(self):
        for kind, table in (("dtype", _capi.DTYPE_NAMES), ("op", _capi.OP_NAMES), ("arch", _capi.ARCH_NAMES),
                            ("schedule", _capi.SCHEDULE_NAMES)):
            for v, name in table.items():
                self.assertEqual(self.lib.name(kind, v), name)
        self.assertEqual(self.lib.status_name(0), self.lib.status_name(_capi.CONVCAT_OK))

    def test_open_errors(self):
        with self.assertRaises(ConvcatError) as cm:
            convcat.open_catalog("/nonexistent/convcat.catalog", self.lib)
        self.assertEqual(cm.exception.status, _capi.CONVCAT_ERR_IO)
        with tempfile.NamedTemporaryFile(suffix=".catalog") as fh:
            fh.write(b"not a catalog" * 100)
            fh.flush()
            with self.assertRaises(ConvcatError) as cm:
                convcat.open_catalog(fh.name, self.lib)
            self.assertEqual(cm.exception.status, _capi.CONVCAT_ERR_CORRUPT)
            self.assertTrue(cm.exception.text)

    def problem(self, **kw):
        args = dict(op="fprop", dims=2, n=8, h=28, w=28, c=64, k=128, r=3, s=3, pad_lo=(0, 1, 1), dtype="bf16")
        args.update(kw)
        return convcat.make_problem(self.lib, **args)

    def test_make_problem_defaults_are_the_librarys(self):
        p, q = convcat.make_problem(self.lib), self.lib.problem_init()
        self.assertEqual(convcat.problem_key(p), convcat.problem_key(q))
        t = convcat.make_problem(self.lib, dtype="tf32")
        self.assertEqual((t.a_type, t.b_type, t.out_type), (_capi.CONVCAT_TF32, _capi.CONVCAT_TF32, _capi.CONVCAT_F32))

    def test_output_and_flops(self):
        p = self.problem(stride=(1, 2, 2))
        self.assertEqual(self.lib.problem_output(p), (1, 14, 14))
        self.assertTrue(math.isclose(self.lib.problem_flops(p), 2.0 * 8 * 14 * 14 * 128 * 9 * 64))

    def test_query_ranks_and_explains(self):
        p = self.problem()
        q = self.cat.query(p, arch="sm90a")
        self.assertEqual(len(q.runnable) + len(q.refused), sum(e.arch == "sm90a" for e in self.cat.entries))
        preds = [c.predicted_us for c in q.runnable]
        self.assertEqual(preds, sorted(preds))
        for c in q.runnable:
            self.assertEqual(self.cat.check(c.index, p), (True, "ok"))
        for c in q.refused:
            self.assertTrue(c.reason)
            ok, why = self.cat.check(c.index, p)
            self.assertFalse(ok)
            self.assertEqual(why, c.reason)
        if not any(e.op == "fprop" and e.dims == 2 and e.a_type == "bf16" for e in self.cat.entries):
            self.skipTest("catalog has no bf16 2D fprop kernel")
        self.assertTrue(q.runnable)

    def test_unaligned_channels_are_refused_with_the_rule(self):
        p = self.problem(c=3)
        q = self.cat.query(p, arch="sm90a")
        self.assertEqual(q.runnable, [])
        why = q.why_none(p, self.cat.entries)
        if any(e.op == "fprop" and e.dims == 2 and e.a_type == "bf16" for e in self.cat.entries):
            self.assertIn("C = 3: channels must be a multiple of 8", why)
        p = self.problem(dtype="e5m2", dims=1, h=1, r=1, pad_lo=(0, 0, 1))
        self.assertIn("the catalog has no fprop 1D e5m2", self.cat.query(p).why_none(p, self.cat.entries))

    def test_plan_without_a_gpu_is_refused(self):
        if _env.has_gpu_driver():
            self.skipTest("a CUDA driver is here")
        with self.assertRaises(ConvcatError) as cm:
            self.cat.plan(self.problem())
        self.assertIn(cm.exception.status, (_capi.CONVCAT_ERR_NO_DRIVER, _capi.CONVCAT_ERR_NO_DEVICE))
        self.assertIn("libcuda.so.1", str(cm.exception))
        with self.assertRaises(ConvcatError):
            self.lib.device_arch()

    def test_tune_cache(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "tune.txt")
            cache = convcat.TuneCache(self.lib, path)   # missing: empty, no warning
            self.assertEqual((cache.count(), cache.warning), (0, ""))
            cache.save()
            with open(path) as fh:
                self.assertEqual(fh.readline().strip(), "# convcat autotune cache 1")
            # The binding's problem text is the file's grammar: a line of it loads.
            key = self.cat.entries[0].key
            with open(path, "a") as fh:
                fh.write(f"0000abcd sm90a {key} 0.125 {convcat.problem_text(self.problem())}\n")
            again = convcat.TuneCache(self.lib, path)
            self.assertEqual((again.count(), again.warning), (1, ""))
            with open(path, "w") as fh:
                fh.write("garbage\n")
            bad = convcat.TuneCache(self.lib, path)
            self.assertEqual(bad.count(), 0)
            self.assertTrue(bad.warning)

    def test_problem_text_spells_every_field(self):
        p = self.problem(stride=(1, 2, 3), dilation=(1, 1, 2), pad_lo=(0, 1, 2), pad_hi=(0, 3, 4), groups=2)
        text = convcat.problem_text(p)
        self.assertEqual(text, "fprop/2d/bf16.bf16.bf16/n8.d1.h28.w28.c64/k128.t1.r3.s3/pad0.1.2-0.3.4/"
                               "str1.2.3/dil1.1.2/g2/xcorr")
        self.assertRegex(text, r"^\S+$")

    def test_close_destroys(self):
        cat = convcat.open_catalog(self.cat.path, self.lib)
        cat.close()
        cat.close()   # twice is fine
        with self.assertRaises(ValueError):
            cat.query(self.problem())


class TestContextShim(unittest.TestCase):
    """convcat._cuda.ensure_context against a fake driver: one call when the device's primary context is
    current, a switch when another device's is, nothing when a context of the device is."""

    def test_ensure_context(self):
        from convcat import _cuda
        calls, state = [], {"cur": None}

        def fn(name, impl):
            def call(*a):
                calls.append(name)
                return impl(*a)
            return call

        def getcur(p):
            p._obj.value = state["cur"]
            return 0

        def getdev(p):
            p._obj.value = 1 if state["cur"] == 99 else 0
            return 0

        def devget(p, o):
            p._obj.value = o
            return 0

        def retain(p, d):
            p._obj.value = 1000 + d
            return 0

        def setcur(c):
            state["cur"] = c.value
            return 0

        fake = type("FakeDriver", (), {})()
        for name, impl in dict(cuCtxGetCurrent=getcur, cuCtxGetDevice=getdev, cuDeviceGet=devget,
                               cuDevicePrimaryCtxRetain=retain, cuCtxSetCurrent=setcur).items():
            setattr(fake, name, fn(name, impl))
        with mock.patch.object(_cuda, "_driver", fake), mock.patch.object(_cuda, "_primary", {}):
            _cuda.ensure_context(0)   # no context: device 0's primary made current
            self.assertEqual((calls[-1], state["cur"]), ("cuCtxSetCurrent", 1000))
            calls.clear()
            _cuda.ensure_context(0)
            self.assertEqual(calls, ["cuCtxGetCurrent"])
            calls.clear()
            _cuda.ensure_context(1)   # device 0's current: switch to device 1's
            self.assertEqual(state["cur"], 1001)
            state["cur"] = 99   # some other context of device 1: left alone
            calls.clear()
            _cuda.ensure_context(1)
            self.assertEqual((calls, state["cur"]), (["cuCtxGetCurrent", "cuCtxGetDevice"], 99))


if __name__ == "__main__":
    unittest.main()
