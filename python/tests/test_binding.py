"""CPU tests of the ctypes binding (no torch, no GPU): the mirror against convcat.h, versions, discovery
of the library and the catalog (convcat_default_catalog_path), entries and their kernel families,
checks, queries (C = 3 stems and grouped problems on the gather family, depthwise on the direct
family, a problem no kernel runs), catalog sets, plans and autotuning refused without a driver, the
tune cache (file version 2), the log callback.

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

    def _check_changed(self, *edits):
        """abicheck.check of convcat.h with each (old, new) replacement made (each must apply)."""
        if not shutil.which("gcc") and not shutil.which("cc"):
            self.skipTest("no C compiler")
        with open(HEADER) as fh:
            text = fh.read()
        for old, new in edits:
            self.assertIn(old, text)
            text = text.replace(old, new)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "convcat.h")
            with open(path, "w") as fh:
                fh.write(text)
            return "\n".join(abicheck.check(path))

    def test_check_catches_a_changed_header(self):
        """A field added to convcat_entry_info (the fields after it move), a struct that grew, changed
        prototypes (an old function and new ones), a changed enum value, a new and a removed function:
        each reported."""
        fam = _capi.EntryInfo.family.offset
        tr = ctypes.sizeof(_capi.TuneResult)
        problems = self._check_changed(
            ("    int fallback_m, fallback_n;\n", "    int fallback_m, fallback_n;\n    int min_cc;\n"),
            ("    char reason[192];          /**< why not timed", "    char reason[192];\n    int flags;  /**< "),
            ("CONVCAT_API size_t convcat_count(", "CONVCAT_API int convcat_count("),
            ("convcat_set_log_callback(convcat_log_callback callback, void *user_data)",
             "convcat_set_log_callback(convcat_log_callback callback, int user_data)"),
            ("CONVCAT_API const convcat_catalog *convcat_catalog_set_at(",
             "CONVCAT_API convcat_catalog *convcat_catalog_set_at("),
            ("CONVCAT_DIRECT = 8", "CONVCAT_DIRECT = 9"),
            ("CONVCAT_API uint32_t convcat_catalog_id(const convcat_catalog *catalog);", ""),
            ("#ifdef __cplusplus\n}", "CONVCAT_API int convcat_new_thing(void);\n#ifdef __cplusplus\n}"))
        self.assertIn("convcat_entry_info: fields differ", problems)
        self.assertIn(f"convcat_entry_info.family: offset/size ({fam + 4}, 4) in C, ({fam}, 4)", problems)
        self.assertIn(f"convcat_tune_result: sizeof is {tr + 8} in C, {tr}", problems)
        self.assertNotIn("convcat_entry_info: sizeof", problems)   # its tail padding took the int: offsets tell
        self.assertIn("convcat_count: the header's prototype", problems)
        self.assertIn("convcat_set_log_callback: the header's prototype", problems)
        self.assertIn("convcat_catalog_set_at: the header's prototype", problems)
        self.assertIn("CONVCAT_DIRECT is 9 in C, 8 in the mirror", problems)
        self.assertIn("convcat_catalog_id: bound by the mirror, not declared", problems)
        self.assertIn("convcat_new_thing: declared", problems)
        self.assertNotIn("compiling the layout program", problems)   # a removed function still lets it run

    def test_every_declared_function_is_bound(self):
        """abicheck requires it; and the mirror names the header release it was written for (a new
        release: review the mirror, then bump HEADER_VERSION)."""
        with open(HEADER) as fh:
            declared = abicheck.header_functions(fh.read())
        self.assertEqual(declared - set(_capi.FUNCTIONS) - set(_capi.OPTIONAL_FUNCTIONS), set())
        for name in ("convcat_version", "convcat_catalog_id", "convcat_default_catalog_path", "convcat_open_default",
                     "convcat_query_set", "convcat_plan_create_set", "convcat_autotune_results",
                     "convcat_tune_options_init", "convcat_set_log_callback"):
            self.assertIn(name, _capi.FUNCTIONS)
        with open(HEADER) as fh:
            self.assertIn(f'#define CONVCAT_VERSION "{_capi.HEADER_VERSION}"', fh.read())

    def test_optional_functions_checked_when_declared(self):
        """A function in OPTIONAL_FUNCTIONS: no problem while the header lacks it or declares it as the
        mirror does; a different prototype is one.  bind() does not require it."""
        extra = {"convcat_future_thing": (ctypes.c_int, [ctypes.c_int], "int (*)(int)")}
        with mock.patch.dict(_capi.OPTIONAL_FUNCTIONS, extra):
            self.assertEqual(self._check_changed(), "")
            end = "#ifdef __cplusplus\n}"
            same = self._check_changed((end, "CONVCAT_API int convcat_future_thing(int x);\n" + end))
            self.assertEqual(same, "")
            other = self._check_changed((end, "CONVCAT_API long convcat_future_thing(int x);\n" + end))
            self.assertIn("convcat_future_thing: the header's prototype is not int (*)(int)", other)

            class Lib:
                pass

            lib = Lib()
            for name in _capi.FUNCTIONS:
                setattr(lib, name, type("Fn", (), {})())
            self.assertEqual(_capi.bind(lib), [])
            delattr(lib, "convcat_version")
            self.assertEqual(_capi.bind(lib), ["convcat_version"])

    def test_padded_buffers(self):
        for cls in (_capi.Candidate, _capi.SetCandidate, _capi.TuneResult, _capi.TuneOptions, _capi.EntryInfo):
            buf, arr = _capi.padded(cls, 3)
            self.assertEqual(len(buf), 3 * ctypes.sizeof(cls) + _capi.SPARE_BYTES)
            self.assertEqual(ctypes.addressof(arr), ctypes.addressof(buf))

    def test_statuses_are_exported(self):
        """Every convcat_status is a name of the package (callers compare ConvcatError.status with them)."""
        for name, value in _capi.STATUS.items():
            self.assertEqual(getattr(convcat, name), value, name)
            self.assertIn(name, convcat.__all__)

    def test_names_cover_the_enums(self):
        self.assertEqual(set(_capi.SCHEDULE_NAMES), set(_capi.SCHEDULES.values()))
        self.assertEqual(_capi.SCHEDULE_NAMES[_capi.CONVCAT_GATHER], "gather")
        self.assertEqual(_capi.SCHEDULE_NAMES[_capi.CONVCAT_DIRECT], "direct")
        self.assertEqual(_capi.SCHEDULE_NAMES[_capi.CONVCAT_GROUPED], "grouped")
        self.assertEqual(set(_capi.FAMILY_NAMES), set(_capi.FAMILIES.values()))
        self.assertEqual(sorted(_capi.GROUPS_MODE_NAMES), [0, 1, 2, 3, 4])


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

    def test_open_default_reports_the_path_it_opened(self):
        """open_catalog() takes the library's catalog (convcat_open_default) and says which file that
        was (convcat_default_catalog_path), whatever the environment says."""
        cat_path = _env.catalog_path()
        if not cat_path:
            self.skipTest("no catalog")
        real = self.lib.cdll.convcat_open
        calls = []
        elsewhere = "/some/prefix/share/convcat/convcat.catalog"

        def fake_open_default(out):
            calls.append("open_default")
            return real(cat_path.encode(), out)

        def fake_default_path(buf, size):
            calls.append("default_path")
            ctypes.memmove(buf, elsewhere.encode() + b"\0", len(elsewhere) + 1)
            return 0

        class FakeLib:
            convcat_open_default = staticmethod(fake_open_default)
            convcat_default_catalog_path = staticmethod(fake_default_path)

            def __getattr__(self, name):
                return getattr(real_cdll, name)

        real_cdll = self.lib.cdll
        lib = convcat.Library.__new__(convcat.Library)
        lib.path, lib.cdll = self.lib.path, FakeLib()
        env = {k: v for k, v in os.environ.items() if k != "CONVCAT_CATALOG"}
        with mock.patch.dict(os.environ, env, clear=True):
            cat = convcat.open_catalog(None, lib)
        self.assertEqual(calls, ["default_path", "open_default"])
        self.assertEqual((cat.found_by, cat.path), ("convcat_open_default", elsewhere))
        self.assertEqual(len(cat), len(convcat.open_catalog(cat_path, self.lib)))
        self.assertIn(elsewhere, repr(cat))

    def test_default_catalog_path(self):
        cat_path = _env.catalog_path()
        if not cat_path:
            self.skipTest("no catalog")
        with mock.patch.dict(os.environ, {"CONVCAT_CATALOG": cat_path}):
            self.assertEqual(self.lib.default_catalog_path(), cat_path)   # $CONVCAT_CATALOG alone, as given
            cat = convcat.open_catalog(None, self.lib)
            self.assertEqual((cat.path, cat.found_by), (os.path.abspath(cat_path), "convcat_open_default"))
        with mock.patch.dict(os.environ, {"CONVCAT_CATALOG": "/nonexistent/c.catalog"}):
            with self.assertRaises(ConvcatError) as cm:
                self.lib.default_catalog_path()
            self.assertEqual(cm.exception.status, _capi.CONVCAT_ERR_IO)
            self.assertIn("/nonexistent/c.catalog", cm.exception.text)
            with self.assertRaises(ConvcatError) as cm:   # an explicit choice is never replaced by another file
                convcat.open_catalog(None, self.lib)
            self.assertIn("/nonexistent/c.catalog", str(cm.exception))
        env = {k: v for k, v in os.environ.items() if k != "CONVCAT_CATALOG"}
        with mock.patch.dict(os.environ, env, clear=True):
            try:
                where = self.lib.default_catalog_path()
            except ConvcatError as e:   # no installed catalog: every place tried is named
                self.assertEqual(e.status, _capi.CONVCAT_ERR_IO)
                self.assertIn("$CONVCAT_CATALOG (not set)", e.text)
                where = None
            cat = convcat.open_catalog(None, self.lib)   # else the Python search: the build tree's
            if where:
                self.assertEqual((cat.path, cat.found_by), (os.path.abspath(where), "convcat_open_default"))
            else:
                self.assertNotEqual(cat.found_by, "convcat_open_default")
                self.assertTrue(os.path.isfile(cat.path))

    def test_versions(self):
        v = self.lib.versions()
        self.assertEqual(v["header"], _capi.HEADER_VERSION)
        self.assertRegex(v["library"], r"^\d+\.\d+\.\d+$")
        self.assertEqual(v["library"], _capi.HEADER_VERSION, "library and binding of different releases")
        self.assertGreaterEqual(v["catalog_format"], 3)
        self.assertGreater(v["kernel_abi"], 0)
        cli = os.path.join(os.path.dirname(self.lib.path), "convcat")
        if os.path.isfile(cli):
            out = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
            self.assertIn(f"libconvcat {v['library']}", out)
            self.assertRegex(out, rf"catalog format\s+{v['catalog_format']}\b")
            self.assertRegex(out, rf"kernel ABI\s+{v['kernel_abi']}\b")

    def test_log_callback(self):
        cat_path = _env.catalog_path()
        if not cat_path:
            self.skipTest("no catalog")
        lines = []
        try:
            self.lib.set_log_callback(lines.append)
            with mock.patch.dict(os.environ, {"CONVCAT_CATALOG": cat_path}):
                cat = convcat.open_catalog(None, self.lib)
            self.assertTrue(any(ln.startswith("catalog: opened") and cat_path in ln for ln in lines), lines)
            self.assertTrue(any(cat.id_hex in ln for ln in lines), lines)
            convcat.CatalogSet([cat]).destroy()   # adding a catalog to a set is logged
            self.assertTrue(lines[-1].startswith(f"set: catalog {cat.id_hex}"), lines[-1])

            def boom(line):
                raise RuntimeError("a callback's exception stays in Python")

            self.lib.set_log_callback(boom)
            convcat.CatalogSet([cat]).destroy()   # logs a line: the exception does not escape
            self.lib.set_log_callback(lines.append)
            self.lib.set_log_callback(None)
            n = len(lines)
            with mock.patch.dict(os.environ, {"CONVCAT_LOG": "0"}):
                convcat.CatalogSet([cat]).destroy()
            self.assertEqual(len(lines), n)   # removed: nothing more arrives
        finally:
            self.lib.set_log_callback(None)


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

    def test_entries_match_the_cli_json(self):
        """Every field of every entry, the new family, verified and groups included, is the convcat
        command's (list --json)."""
        import json
        cli = os.path.join(os.path.dirname(self.lib.path), "convcat")
        if not os.path.isfile(cli):
            self.skipTest("no convcat command beside the library")
        out = json.loads(subprocess.run([cli, "--catalog", self.cat.path, "list", "--json"], capture_output=True,
                                        text=True, check=True).stdout)
        self.assertEqual(out["catalogs"][0]["id"], self.cat.id_hex)
        rows = {r["key"]: r for r in out["kernels"]}
        self.assertEqual(sorted(rows), sorted(e.key for e in self.cat.entries))
        for e in self.cat.entries:
            r = rows[e.key]
            for f in ("arch", "op", "dims", "a_type", "b_type", "acc_type", "out_type", "tile_m", "tile_n", "tile_k",
                      "stages", "cluster_m", "cluster_n", "fallback_m", "fallback_n", "schedule", "threads",
                      "smem_bytes", "registers", "code_bytes", "family", "verified"):
                self.assertEqual(getattr(e, f), r[f], f"{e.key}: {f}")
            self.assertEqual(e.groups, r["groups"], e.key)

    def test_families(self):
        """gather and direct kernels are their schedule's family; gather takes any groups, direct is
        depthwise, the TMA family groups 1 (or wgrad K == C); sm_100a kernels are never verified."""
        seen = set()
        for e in self.cat.entries:
            seen.add(e.family)
            self.assertIn(e.family, ("tma", "gather", "direct"), e.key)
            self.assertIsInstance(e.verified, bool)
            if e.schedule in ("gather", "direct"):
                self.assertEqual(e.family, e.schedule, e.key)
            else:
                self.assertEqual(e.family, "tma", e.key)
            want = {"gather": {_capi.GROUPS_ONE if e.stages == 1 else _capi.GROUPS_ANY},   # 1 stage: input tile
                    "direct": {_capi.GROUPS_DEPTHWISE},
                    "tma": {_capi.GROUPS_ONE, _capi.GROUPS_WGRAD_DIAGONAL, _capi.GROUPS_PACKED}}[e.family]
            self.assertIn(e.groups_mode, want, e.key)
            if e.arch == "sm100a":
                self.assertFalse(e.verified, e.key)
        if not {"gather", "direct"} <= seen:
            self.skipTest(f"the catalog has families {sorted(seen)} only")

    def test_catalog_id(self):
        self.assertEqual(self.cat.id, self.lib.cdll.convcat_catalog_id(self.cat.handle))
        self.assertRegex(self.cat.id_hex, r"^[0-9a-f]{8}$")
        again = convcat.open_catalog(self.cat.path, self.lib)
        self.assertEqual(again.id, self.cat.id)   # the index names the contents, not the open

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
        self.assertIsNone(self.lib.name("schedule", max(_capi.SCHEDULE_NAMES) + 1))
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

    def test_a_3d_problem_folds_into_2d(self):
        p = self.problem(dims=3, d=4)   # a 1x3x3 filter over 4 frames: 32 images of 28 x 28
        f = self.lib.problem_folded(p)
        self.assertIsNotNone(f)
        self.assertEqual((f.dims, f.n, f.d, f.h, f.w, f.r, f.s), (2, 32, 1, 28, 28, 3, 3))
        self.assertIsNone(self.lib.problem_folded(self.problem()))            # 2D already
        self.assertIsNone(self.lib.problem_folded(self.problem(dims=3, d=4, t=3, pad_lo=(1, 1, 1))))

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

    def _families(self, p, arch="sm90a"):
        """(the query, its runnable rows' families in rank order), each runnable row checked against its entry."""
        q = self.cat.query(p, arch=arch)
        for c in q.runnable:
            self.assertEqual(c.family, self.cat.entries[c.index].family)
            self.assertEqual(self.cat.check(c.index, p), (True, "ok"))
        return q, [c.family for c in q.runnable]

    def _need_family(self, family, op, dtype):
        if not any(e.family == family and e.op == op and e.dims == 2 and e.a_type == dtype and e.arch == "sm90a"
                   for e in self.cat.entries):
            self.skipTest(f"the catalog has no sm90a {family} {op} 2D {dtype} kernels")

    def test_c3_stem_runs_on_the_gather_family(self):
        """C = 3 (no TMA kernel reads it: 16-byte rows) runs on gather kernels, every op and dtype."""
        for op in ("fprop", "dgrad", "wgrad"):
            for dt in ("f16", "bf16", "tf32"):
                with self.subTest(op=op, dtype=dt):
                    self._need_family("gather", op, dt)
                    p = self.problem(op=op, dtype=dt, n=2, h=32, w=32, c=3, k=64, r=7, s=7, pad_lo=(0, 3, 3),
                                     stride=(1, 2, 2))
                    q, fams = self._families(p)
                    self.assertTrue(fams, q.why_none(p, self.cat.entries))
                    self.assertEqual(set(fams), {"gather"})
                    same = (op, 2, dt, "f32" if dt == "tf32" else dt)   # the TMA kernels of this op and types
                    tma = [c for c in q.refused if c.family == "tma" and same == (
                           self.cat.entries[c.index].op, self.cat.entries[c.index].dims,
                           self.cat.entries[c.index].a_type, self.cat.entries[c.index].out_type)
                           and self.cat.entries[c.index].schedule != "grouped"]   # those say groups = 1 first
                    rule = f"C = 3: channels must be a multiple of {4 if dt == 'tf32' else 8}"
                    self.assertTrue(tma and all(c.reason.startswith(rule) for c in tma), {c.reason for c in tma})

    def test_grouped_runs_on_the_gather_and_direct_families(self):
        """groups 32 of 4 channels: gather kernels (TMA kernels take groups of 16 channels or more)
        and direct ones, which take 2, 4 or 8 channels a group; groups 8 of 16 channels run on gather
        kernels and on the TMA family's, which rank first: wgrad's diagonal kernels (3x the gather
        kernels' speed on the H200), 16-bit fprop's and unit-stride dgrad's grouped schedule (packs
        of groups; 2x on the H100)."""
        for op in ("fprop", "dgrad", "wgrad"):
            for dt in ("f16", "bf16", "tf32"):
                with self.subTest(op=op, dtype=dt):
                    self._need_family("gather", op, dt)
                    p = self.problem(op=op, dtype=dt, c=128, k=128, groups=32)
                    q, fams = self._families(p)
                    self.assertTrue(fams, q.why_none(p, self.cat.entries))
                    self.assertIn("gather", fams)
                    self.assertIn("direct", fams)
                    q, fams = self._families(self.problem(op=op, dtype=dt, c=128, k=128, groups=8))
                    self.assertEqual(fams[0], "tma" if "tma" in fams else "gather")
                    mode = _capi.GROUPS_WGRAD_DIAGONAL if op == "wgrad" else _capi.GROUPS_PACKED
                    self.assertEqual("tma" in fams, any(   # dgrad runs as the fprop of dy on fprop's kernels
                        e.groups_mode == mode and e.dims == 2 and e.a_type == dt for e in self.cat.entries))
                    self.assertNotIn("direct", fams)

    def test_depthwise_runs_on_the_direct_family(self):
        """groups == C (K = C and K = 2C), 3x3 and 7x7, stride 1 and 2: a direct kernel ranks first (on
        these 8 x 28 x 28 x 32 activations; on tiny ones the time model may rank a gather kernel first),
        except wgrad at K = 2C, whose direct kernel reads x an element at a time: gather and direct
        kernels both run it, in the order the model prices them."""
        for op in ("fprop", "dgrad", "wgrad"):
            for dt in ("f16", "bf16", "tf32"):
                for r, stride, k in ((3, 1, 32), (3, 2, 32), (7, 1, 32), (7, 2, 64)):
                    with self.subTest(op=op, dtype=dt, r=r, stride=stride, k=k):
                        self._need_family("direct", op, dt)
                        p = self.problem(op=op, dtype=dt, c=32, k=k, groups=32, r=r, s=r,
                                         pad_lo=(0, r // 2, r // 2), stride=(1, stride, stride))
                        q, fams = self._families(p)
                        self.assertTrue(fams, q.why_none(p, self.cat.entries))
                        if op == "wgrad" and k != 32:
                            self.assertIn("gather", fams)
                        else:
                            self.assertEqual(fams[0], "direct")
                        self.assertIn("direct", fams)
                        for c in q.runnable:
                            if c.family == "direct":
                                self.assertEqual(self.cat.entries[c.index].groups_mode, _capi.GROUPS_DEPTHWISE)

    def test_a_problem_no_kernel_runs_is_refused_with_the_rule(self):
        """A 2D bf16 x bf16 -> f32 fprop with C = 3: only TMA kernels take an f32 output of bf16
        inputs, and they need channels in multiples of 8 (convcat query says the same)."""
        p = self.problem(n=1, h=224, w=224, c=3, k=64, r=7, s=7, pad_lo=(0, 3, 3), stride=(1, 2, 2), out_type="f32")
        if not any(e.op == "fprop" and e.dims == 2 and e.a_type == "bf16" and e.out_type == "f32" and
                   e.arch == "sm90a" for e in self.cat.entries):
            self.skipTest("the catalog has no sm90a bf16 -> f32 2D fprop kernel")
        q = self.cat.query(p, arch="sm90a")
        self.assertEqual(q.runnable, [])
        self.assertIn("C = 3: channels must be a multiple of 8", q.refused[0].reason)
        self.assertIn("C = 3: channels must be a multiple of 8", q.why_none(p, self.cat.entries))
        every = self.cat.query(p, arch=None)
        self.assertEqual(every.runnable, [])
        self.assertIn("C = 3: channels must be a multiple of 8", every.refused[0].reason)
        cli = os.path.join(os.path.dirname(self.lib.path), "convcat")
        if os.path.isfile(cli):
            r = subprocess.run([cli, "--catalog", self.cat.path, "query", "--n", "1", "--h", "224", "--w", "224",
                                "--c", "3", "--k", "64", "--r", "7", "--s", "7", "--pad_h", "3", "--pad_w", "3",
                                "--stride_h", "2", "--stride_w", "2", "--a_type", "bf16", "--b_type", "bf16",
                                "--out_type", "f32"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn(f"0 of {len(self.cat)} catalog kernels can run it", r.stdout)
            first = next(ln for ln in r.stdout.splitlines() if ln.startswith("  sm"))
            self.assertIn(f"{every.refused[0].key}: {every.refused[0].reason}", first)
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
                self.assertEqual(fh.readline().strip(), "# convcat autotune cache 2")
            # Version 2 lines: <catalog id> <arch> <SMs> <device> <key> <ms> <problem>; the binding's
            # problem text is the file's grammar, the catalog id its key.
            key = self.cat.entries[0].key
            text = convcat.problem_text(self.problem())
            with open(path, "a") as fh:
                fh.write(f"{self.cat.id_hex} sm90a 132 NVIDIA%20H200 {key} 0.125 {text}\n")
                fh.write(f"{self.cat.id_hex} sm90a 114 NVIDIA%20H100%20PCIe {key} 0.25 {text}\n")
                fh.write(f"0000abcd sm90a 0 - {key} 0.5 {text}\n")   # another catalog, no device
            again = convcat.TuneCache(self.lib, path)
            self.assertEqual((again.count(), again.warning), (3, ""))
            out = os.path.join(tmp, "saved.txt")
            again.save(out)
            with open(out) as fh:
                saved = fh.read().splitlines()
            self.assertEqual(saved[0], "# convcat autotune cache 2")
            self.assertIn(f"{self.cat.id_hex} sm90a 132 NVIDIA%20H200 {key} 0.125000 {text}", saved)
            # Version 1 files still load (their rows have no device: measured again on use).
            with open(path, "w") as fh:
                fh.write(f"# convcat autotune cache 1\n{self.cat.id_hex} sm90a {key} 0.125 {text}\n")
            v1 = convcat.TuneCache(self.lib, path)
            self.assertEqual((v1.count(), v1.warning), (1, ""))
            # A version 1 line under the version 2 header breaks the grammar: the file is ignored.
            with open(path, "w") as fh:
                fh.write(f"# convcat autotune cache 2\n{self.cat.id_hex} sm90a {key} 0.125 {text}\n")
            mixed = convcat.TuneCache(self.lib, path)
            self.assertEqual(mixed.count(), 0)
            self.assertIn("<SMs> <device>", mixed.warning)
            with open(path, "w") as fh:
                fh.write("garbage\n")
            bad = convcat.TuneCache(self.lib, path)
            self.assertEqual(bad.count(), 0)
            self.assertIn("line 1 is not '# convcat autotune cache 2'", bad.warning)

    def test_autotune_results_without_a_gpu(self):
        if _env.has_gpu_driver():
            self.skipTest("a CUDA driver is here")
        buf, opts = self.cat.tune_options()
        self.assertEqual((opts.iterations, opts.top_k, opts.cache), (20, 0, None))
        _, opts = self.cat.tune_options(iterations=5, top_k=2)
        self.assertEqual((opts.iterations, opts.top_k), (5, 2))
        with self.assertRaises(convcat.AutotuneError) as cm:
            self.cat.autotune_results(self.problem(), convcat.make_tensors(), iterations=3, top_k=1)
        self.assertIsInstance(cm.exception, ConvcatError)
        self.assertIn(cm.exception.status, (_capi.CONVCAT_ERR_NO_DRIVER, _capi.CONVCAT_ERR_NO_DEVICE))
        self.assertIsInstance(cm.exception.results, list)

    def test_tune_result_rows(self):
        """convcat_autotune_results' rows become TuneResults (the library faked: no GPU here)."""
        entries = self.cat.entries

        def fake(cat, p, t, stream, opts, out, cap, count):   # the binding's buffers, as ctypes would pass them
            opt = _capi.TuneOptions.from_buffer(opts)
            rows = (_capi.TuneResult * cap).from_buffer(out)
            rows[0].index, rows[0].status, rows[0].ms, rows[0].predicted_us = 1, 0, 0.5, 400.0
            rows[1].index, rows[1].status, rows[1].workspace_bytes = 0, _capi.CONVCAT_ERR_UNSUPPORTED, 1 << 20
            rows[1].reason = b"workspace 1048576 bytes exceeds the caller's 0"
            count._obj.value = 2
            fake.seen = (opt.iterations, opt.top_k, opt.cache)
            return 0

        class FakeLib:
            convcat_autotune_results = staticmethod(fake)

            def __getattr__(self, name):
                return getattr(real, name)

        real = self.lib.cdll
        with mock.patch.object(self.lib, "cdll", FakeLib()):
            with tempfile.TemporaryDirectory() as tmp:
                cache = convcat.TuneCache(self.lib, os.path.join(tmp, "t.txt"))
                got = self.cat.autotune_results(self.problem(), convcat.make_tensors(), iterations=7, cache=cache)
                self.assertEqual(fake.seen, (7, 0, cache._handle.value))
        self.assertEqual([r.key for r in got], [entries[1].key, entries[0].key])
        self.assertTrue(got[0].ok)
        self.assertEqual((got[0].ms, got[0].predicted_us, got[0].reason), (0.5, 400.0, ""))
        self.assertEqual(got[0].status_name, self.lib.status_name(_capi.CONVCAT_OK))
        self.assertFalse(got[1].ok)
        self.assertEqual(got[1].status_name, self.lib.status_name(_capi.CONVCAT_ERR_UNSUPPORTED))
        self.assertIn("exceeds", got[1].reason)
        self.assertEqual(got[1].workspace_bytes, 1 << 20)

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


class TestCatalogSet(unittest.TestCase):
    def setUp(self):
        self.cat = _env.need_catalog(self)
        self.lib = self.cat.lib
        self.p = convcat.make_problem(self.lib, op="fprop", dims=2, n=8, h=28, w=28, c=64, k=128, r=3, s=3,
                                      pad_lo=(0, 1, 1), dtype="bf16")

    def test_unique_keys_or_shadowed(self):
        other = convcat.open_catalog(self.cat.path, self.lib)   # the same kernels: every key twice
        with convcat.CatalogSet([self.cat]) as s:
            with self.assertRaises(ConvcatError) as cm:
                s.add(other)
            self.assertEqual(cm.exception.status, _capi.CONVCAT_ERR_INVALID_ARGUMENT)
            self.assertIn("keys must be unique", cm.exception.text)
            self.assertEqual((len(s), s.catalogs), (1, [self.cat]))   # unchanged
            s.add(other, shadow=True)
            self.assertEqual(len(s), 2)
            self.assertEqual(s.count(), len(self.cat))   # shadowed entries are not counted
            key = self.cat.entries[5].key
            owner, entry = s.find(key)
            self.assertIs(owner, self.cat)
            self.assertEqual(entry.key, key)
            with self.assertRaises(KeyError):
                s.find("sm90a_fprop_2d_nothing")
            q, alone = s.query(self.p), self.cat.query(self.p)
            self.assertEqual([c.key for c in q.runnable], [c.key for c in alone.runnable])
            self.assertTrue(all(c.catalog is self.cat and c.position == 0 for c in q.runnable))
            shadowed = [c for c in q.refused if c.position == 1]
            self.assertEqual(len(shadowed), sum(e.arch == "sm90a" for e in other.entries))
            self.assertTrue(all(c.reason.startswith(f"shadowed: catalog 0 of the set (id {self.cat.id_hex})")
                                for c in shadowed))
            self.assertIs(q.runnable[0].entry, self.cat.entries[q.runnable[0].index])
            self.assertIn("2 catalogs", repr(s))
        self.assertIn("destroyed", repr(s))
        with self.assertRaises(ValueError):
            s.query(self.p)

    def test_halves_answer_as_the_whole(self):
        here = os.path.join(os.path.dirname(self.lib.path), "..", "tests")
        halves = [os.environ.get(v) or os.path.join(here, f"half{i}.catalog")
                  for i, v in enumerate(("CONVCAT_TEST_CATALOG_A", "CONVCAT_TEST_CATALOG_B"))]
        if not all(os.path.isfile(h) for h in halves):
            self.skipTest("no half catalogs (tests/half0.catalog, half1.catalog of the build tree)")
        a, b = (convcat.open_catalog(h, self.lib) for h in halves)
        s = convcat.CatalogSet([a, b])
        self.assertEqual(s.count(), len(a) + len(b))
        for p in (self.p, convcat.make_problem(self.lib, op="wgrad", dims=2, n=2, h=16, w=16, c=32, k=32, r=3, s=3,
                                               pad_lo=(0, 1, 1), groups=32, dtype="f16")):
            whole, both = self.cat.query(p), s.query(p)
            self.assertEqual(sorted(c.key for c in both.runnable), sorted(c.key for c in whole.runnable))
            self.assertEqual([c.predicted_us for c in both.runnable], sorted(c.predicted_us for c in both.runnable))
            for c in both.runnable:
                self.assertIs(c.catalog, (a, b)[c.position])
                self.assertEqual(c.catalog.entries[c.index].key, c.key)

    def test_plan_without_a_gpu_is_refused(self):
        if _env.has_gpu_driver():
            self.skipTest("a CUDA driver is here")
        s = convcat.CatalogSet([self.cat])
        with self.assertRaises(ConvcatError) as cm:
            s.plan(self.p)
        self.assertIn(cm.exception.status, (_capi.CONVCAT_ERR_NO_DRIVER, _capi.CONVCAT_ERR_NO_DEVICE))

    def test_closing_a_catalog_destroys_its_sets(self):
        cat = convcat.open_catalog(self.cat.path, self.lib)
        s = convcat.CatalogSet([cat])
        self.assertEqual(len(s), 1)
        cat.close()
        with self.assertRaises(ValueError):
            s.query(self.p)
        s.destroy()   # twice is fine


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
