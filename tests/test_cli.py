#!/usr/bin/env python3
"""The convcat command line (runtime/tools/convcat.c), on the CPU.

    test_cli.py CONVCAT CATALOG [CATALOG_A CATALOG_B]

Every command answers -h/--help; --version names the versions and the
catalog; --json output is one valid JSON document (checked with
`python3 -m json.tool`, as a user would); types are spelled as users spell
them; every invalid command line exits 2 with a sentence; the catalog is
found as the usage says.  Needs no particular kernel: problems come from
what the catalog lists.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CLI, CATALOG = sys.argv[1], sys.argv[2]
HALVES = sys.argv[3:5] if len(sys.argv) >= 5 else None


def run(*args, env=None, catalog=True):
    e = dict(os.environ)
    e.pop("CONVCAT_CATALOG", None)
    e.pop("CONVCAT_LOG", None)
    e.update(env or {})
    cmd = [CLI] + (["--catalog", CATALOG] if catalog else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=60)


def json_tool_accepts(text):
    r = subprocess.run([sys.executable, "-m", "json.tool"], input=text, capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def kernels():
    r = run("list", "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["kernels"]


def problem_args(k):
    """A small problem the kernel k's kind runs (as tests/unit.h's unit_problem)."""
    a = ["--op", k["op"], "--dims", str(k["dims"]), "--n", "2", "--c", "64", "--k", "64", "--w", "16", "--s", "3",
         "--pad_w", "1", "--a_type", k["a_type"], "--b_type", k["b_type"], "--out_type", k["out_type"]]
    if k["dims"] >= 2:
        a += ["--h", "16", "--r", "3", "--pad_h", "1"]
    if k["dims"] >= 3:
        a += ["--d", "8", "--t", "3", "--pad_d", "1"]
    return a


class Help(unittest.TestCase):
    def test_every_command_answers_help(self):
        for cmd in ("list", "info", "query", "run"):
            for flag in ("-h", "--help"):
                r = run(cmd, flag)
                self.assertEqual(r.returncode, 0, f"{cmd} {flag}: {r.stderr}")
                self.assertTrue(r.stdout.startswith(f"usage: convcat {cmd}"), r.stdout)
                self.assertEqual(r.stderr, "")
            r = run("help", cmd)
            self.assertEqual(r.returncode, 0)
            self.assertTrue(r.stdout.startswith(f"usage: convcat {cmd}"))
        # Help wins wherever it stands, even after a key or a flag's value.
        r = run("run", "somekey", "--n", "4", "-h")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: convcat run", r.stdout)
        for flag in ("-h", "--help"):
            r = run(flag, catalog=False)
            self.assertEqual(r.returncode, 0)
            self.assertIn("commands:", r.stdout)
        self.assertIn("PROBLEM:", run("query", "--help").stdout)

    def test_no_command_is_a_usage_error(self):
        r = run(catalog=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage:", r.stderr)


class Version(unittest.TestCase):
    def test_version_names_library_formats_and_catalog(self):
        r = run("--version")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r"^convcat \d+\.\d+\.\d+$")
        self.assertRegex(r.stdout, r"library +libconvcat \d+\.\d+\.\d+ \(soname libconvcat\.so\.\d+\)")
        self.assertRegex(r.stdout, r"catalog format +\d+")
        self.assertRegex(r.stdout, r"kernel ABI +\d+")
        self.assertIn(CATALOG, r.stdout)
        n = len(kernels())
        self.assertRegex(r.stdout, rf"id [0-9a-f]{{8}}, {n} kernels")

    def test_version_without_a_catalog_still_answers(self):
        r = run("--version", env={"CONVCAT_CATALOG": "/nonexistent.catalog"}, catalog=False)
        self.assertEqual(r.returncode, 0)
        self.assertIn("libconvcat", r.stdout)
        self.assertIn("/nonexistent.catalog", r.stderr)


class Json(unittest.TestCase):
    def check(self, *args, code=0):
        r = run(*args, "--json")
        self.assertEqual(r.returncode, code, r.stderr)
        ok, err = json_tool_accepts(r.stdout)
        self.assertTrue(ok, f"{args}: python3 -m json.tool refuses it: {err}\n{r.stdout[:2000]}")
        return json.loads(r.stdout)

    def test_list(self):
        d = self.check("list")
        self.assertEqual(d["shown"], d["total"])
        self.assertEqual(len(d["kernels"]), d["shown"])
        self.assertEqual(d["catalogs"][0]["path"], CATALOG)
        self.assertRegex(d["catalogs"][0]["id"], "^[0-9a-f]{8}$")
        for k in d["kernels"]:
            for field in ("key", "arch", "op", "dims", "a_type", "b_type", "acc_type", "out_type", "tile_m",
                          "tile_n", "tile_k", "stages", "cluster_m", "cluster_n", "schedule", "threads",
                          "smem_bytes", "registers", "code_bytes"):
                self.assertIn(field, k)
        some = d["kernels"][0]
        d2 = self.check("list", "--arch", some["arch"], "--op", some["op"])
        self.assertTrue(all(k["arch"] == some["arch"] and k["op"] == some["op"] for k in d2["kernels"]))
        self.assertIn(some["key"], [k["key"] for k in d2["kernels"]])

    def test_info(self):
        k = kernels()[0]
        d = self.check("info", k["key"])
        self.assertEqual(d, k)

    def test_query_every_kind(self):
        seen = set()
        for k in kernels():
            kind = (k["op"], k["dims"], k["a_type"], k["out_type"])
            if kind in seen:
                continue
            seen.add(kind)
            r = run("query", *problem_args(k), "--json")
            ok, err = json_tool_accepts(r.stdout)
            self.assertTrue(ok, err)
            d = json.loads(r.stdout)
            self.assertEqual(r.returncode, 0 if d["runnable"] else 1)
            self.assertEqual(len(d["candidates"]), d["total"])
            self.assertEqual(d["problem"]["op"], k["op"])
            for i, c in enumerate(d["candidates"]):
                if i < d["runnable"]:
                    self.assertTrue(c["ok"])
                    self.assertEqual(c["rank"], i + 1)
                    self.assertIsNone(c["reason"])
                    self.assertGreater(c["predicted_us"], 0)
                else:
                    self.assertFalse(c["ok"])
                    self.assertTrue(c["reason"])   # every refusal says why

    def test_a_3d_problem_that_folds_says_so(self):
        # T = 1: 2D kernels rank beside the 3D ones and the problem's 2D form is printed; T = 3: neither
        def ranked(out):
            return [line.split()[-1] for line in out.splitlines() if line.strip()[:1].isdigit() and " us " in line]

        flat = ["--dims", "3", "--n", "2", "--d", "4", "--h", "14", "--w", "14", "--c", "64", "--k", "64",
                "--r", "3", "--s", "3", "--pad_h", "1", "--pad_w", "1", "--dtype", "bf16", "--arch", "sm90a"]
        r = run("query", *flat)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2D kernels take it as the same memory in 2D: N 8 H 14 W 14, filter 3x3", r.stdout)
        keys = ranked(r.stdout)
        self.assertTrue(any("_2d_" in k for k in keys) and any("_3d_" in k for k in keys), keys)
        r = run("query", *flat, "--t", "3", "--pad_d", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("2D kernels take it", r.stdout)
        keys = ranked(r.stdout)
        self.assertFalse(any("_2d_" in k for k in keys), keys)


class Types(unittest.TestCase):
    def test_tf32_means_f32_tensors_with_tf32_math(self):
        tf32 = [k for k in kernels() if k["a_type"] == "tf32"]
        r = run("list", "--dtype", "tf32", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(k["key"] for k in json.loads(r.stdout)["kernels"]), sorted(k["key"] for k in tf32))
        for k in tf32[:1]:
            args = [a for a in problem_args(k) if a not in ("--a_type", "--b_type", "--out_type", "tf32", "f32")]
            r = run("query", *args, "--dtype", "tf32", "--json")
            d = json.loads(r.stdout)
            self.assertEqual(d["problem"]["a_type"], "tf32")
            self.assertEqual(d["problem"]["out_type"], "f32")
            self.assertIn(k["key"], [c["key"] for c in d["candidates"] if c["ok"]])

    def test_f32_says_what_to_use(self):
        if any(k["a_type"] == "f32" for k in kernels()):
            self.skipTest("this catalog has full-f32 kernels")
        for args in (("list", "--dtype", "f32"), ("query", "--dtype", "fp32"), ("query", "--dtype", "float32")):
            r = run(*args)
            self.assertEqual(r.returncode, 1, args)
            self.assertEqual(r.stdout, "")
            self.assertIn("full f32", r.stderr)
            self.assertIn("--dtype tf32", r.stderr)

    def test_usual_spellings(self):
        for spelled, name in (("fp16", "f16"), ("half", "f16"), ("bfloat16", "bf16"), ("BF16", "bf16"),
                              ("float16", "f16")):
            r = run("query", "--dtype", spelled, "--json")
            self.assertIn(r.returncode, (0, 1), r.stderr)
            self.assertEqual(json.loads(r.stdout)["problem"]["a_type"], name)
        r = run("query", "--dtype", "int8")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown data type 'int8'", r.stderr)

    def test_out_type_wins_over_dtype_in_any_order(self):
        for args in (("--out_type", "f32", "--dtype", "bf16"), ("--dtype", "bf16", "--out_type", "f32")):
            d = json.loads(run("query", *args, "--json").stdout)
            self.assertEqual((d["problem"]["a_type"], d["problem"]["out_type"]), ("bf16", "f32"))


class ExitCodes(unittest.TestCase):
    def bad(self, *args, says):
        r = run(*args)
        self.assertEqual(r.returncode, 2, f"{args}: {r.stdout} {r.stderr}")
        self.assertIn(says, r.stderr)
        return r

    def test_invalid_problems_are_command_line_errors(self):
        self.bad("query", "--n", "-5", says="extents must be >= 1")
        self.bad("query", "--groups", "0", says="groups 0")
        self.bad("query", "--stride_h", "0", says="stride and dilation along H")
        self.bad("query", "--c", "64", "--k", "64", "--groups", "3", says="--groups 3 must divide")
        self.bad("query", "--pad_w", "-1", says="padding along W is negative")
        self.bad("query", "--w", "2", "--s", "5", says="does not fit")
        self.bad("query", "--out_type", "tf32", says="tf32 is a math mode")
        self.bad("run", "auto", "--n", "0", says="extents must be >= 1")

    def test_catalog_option_needs_a_path(self):
        r = run("--catalog", catalog=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--catalog needs a path", r.stderr)
        for args in (["--catalog", "", "list"], ["--catalog=", "list"], ["list", "--catalog", ""]):
            r = run(*args, catalog=False)
            self.assertEqual(r.returncode, 2, f"{args}: {r.stdout} {r.stderr}")
            self.assertIn("--catalog needs a path, not an empty string", r.stderr)
        r = run("list", "--catalog", catalog=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--catalog needs a value", r.stderr)

    def test_alpha_and_beta_must_be_finite_floats(self):
        for flag in ("--alpha", "--beta"):
            for val in ("1e999", "-1e999", "inf", "-inf", "nan", "1e39", "", "1x"):
                self.bad("run", "auto", flag, val, says=f"{flag} needs a finite number")

    def test_a_fifo_as_the_catalog_does_not_hang(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "catalog")
            os.mkfifo(fifo)
            # No writer ever opens it: opening it for reading must not wait for one.
            r = subprocess.run([CLI, "--catalog", fifo, "list"], capture_output=True, text=True, timeout=20)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("is not a regular file", r.stderr)
            r = subprocess.run([CLI, "list"], capture_output=True, text=True, timeout=20,
                               env=dict(os.environ, CONVCAT_CATALOG=fifo))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("not a regular file", r.stderr)

    def test_integers_to_the_full_int_range(self):
        r = run("query", "--n", "2147483647", "--json")   # valid as an int; a problem no kernel runs, or one
        self.assertIn(r.returncode, (0, 1), r.stderr)
        self.assertEqual(json.loads(r.stdout)["problem"]["n"], 2147483647)
        self.bad("query", "--n", "2147483648", says="--n: 2147483648 is out of range (-2147483648 to 2147483647)")
        self.bad("query", "--h", "-99999999999", says="out of range (-2147483648 to 2147483647)")
        self.bad("query", "--n", "12x", says="--n: '12x' is not an integer")
        self.bad("query", "--n", "", says="is not an integer")
        self.bad("run", "auto", "--time", "-1", says="--time: -1 is out of range (0 to 1000000)")
        self.bad("run", "auto", "--device", "-1", says="--device: -1 is out of range")
        self.bad("query", "--dims", "4", says="--dims: 4 is out of range (1 to 3)")

    def test_unknown_and_misplaced_options(self):
        self.bad("query", "--bogus", "1", says="unknown option --bogus")
        self.bad("query", "-x", says="unknown option -x")
        self.bad("list", "--verify", says="--verify is not an option of list")
        self.bad("info", "--n", "3", "somekey", says="--n is not an option of info")
        self.bad("run", "auto", "--json", says="--json is not an option of run")
        self.bad("query", "--n", says="--n needs a value")
        self.bad("frobnicate", says="unknown command frobnicate")
        self.bad("info", says="info needs a kernel key")
        self.bad("info", "a", "b", says="unexpected argument 'b'")
        self.bad("query", "extra", says="unexpected argument 'extra'")
        self.bad("--bogus", says="unknown option --bogus")
        self.bad("--arch", "sm80", "list", says="unknown option --arch")
        self.bad("list", "--arch", "sm80", says="unknown arch 'sm80'")

    def test_work_that_fails_exits_1(self):
        r = run("info", "sm90a_no_such_kernel")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no kernel 'sm90a_no_such_kernel'", r.stderr)
        # A valid problem no kernel runs (a filter wider than any kernel's rules allow is still a problem).
        r = run("query", "--c", "3", "--k", "5", "--w", "9", "--h", "9", "--json")
        if json.loads(r.stdout)["runnable"] == 0:
            self.assertEqual(r.returncode, 1)


class Catalogs(unittest.TestCase):
    def test_environment_and_flag(self):
        r = run("list", env={"CONVCAT_CATALOG": CATALOG}, catalog=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("list", env={"CONVCAT_CATALOG": "/nonexistent.catalog"}, catalog=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("/nonexistent.catalog", r.stderr)
        # --catalog beats the environment, before or after the command.
        r = subprocess.run([CLI, "list", "--catalog", CATALOG], capture_output=True, text=True,
                           env=dict(os.environ, CONVCAT_CATALOG="/nonexistent.catalog"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_damaged_catalog_is_exit_2(self):
        with tempfile.NamedTemporaryFile(suffix=".catalog") as f:
            f.write(b"not a catalog at all, but long enough to be read as one " * 4)
            f.flush()
            r = subprocess.run([CLI, "--catalog", f.name, "list"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("not a convcat catalog", r.stderr)

    def test_the_build_tree_uses_its_own_catalog(self):
        # This binary runs from its build tree: with nothing named it takes the build's catalog.
        r = run("--version", catalog=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(os.path.realpath(CATALOG), r.stdout)

    @unittest.skipUnless(HALVES, "no half catalogs given")
    def test_several_catalogs_query_as_one(self):
        whole = run("list", "--json")
        a, b = HALVES
        r = subprocess.run([CLI, "--catalog", a, "--catalog", b, "list", "--json"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json_tool_accepts(r.stdout)[0])
        d, w = json.loads(r.stdout), json.loads(whole.stdout)
        self.assertEqual(sorted(k["key"] for k in d["kernels"]), sorted(k["key"] for k in w["kernels"]))
        self.assertEqual([c["path"] for c in d["catalogs"]], [a, b])
        # A key in two catalogs is taken from the first given.
        r = subprocess.run([CLI, "--catalog", a, "--catalog", CATALOG, "list", "--json"], capture_output=True,
                           text=True)
        d = json.loads(r.stdout)
        self.assertEqual(d["total"], len(w["kernels"]))
        first = {k["key"] for k in json.loads(subprocess.run([CLI, "--catalog", a, "list", "--json"],
                                                             capture_output=True, text=True).stdout)["kernels"]}
        for k in d["kernels"]:
            self.assertEqual(k["catalog"], a if k["key"] in first else CATALOG)
        k = w["kernels"][0]
        r = subprocess.run([CLI, "--catalog", a, "--catalog", b, "query", *problem_args(k), "--json"],
                           capture_output=True, text=True)
        self.assertTrue(json_tool_accepts(r.stdout)[0])
        q = json.loads(r.stdout)
        qw = json.loads(run("query", *problem_args(k), "--json").stdout)
        self.assertEqual(q["runnable"], qw["runnable"])
        self.assertEqual(sorted(c["key"] for c in q["candidates"]), sorted(c["key"] for c in qw["candidates"]))


class Quiet(unittest.TestCase):
    def test_success_prints_nothing_on_stderr(self):
        # The library prints only when asked (CONVCAT_LOG, a callback); the command adds nothing either.
        for args in (("list",), ("query", "--json"), ("--version",), ("info", kernels()[0]["key"])):
            r = run(*args)
            self.assertIn(r.returncode, (0, 1))
            self.assertEqual(r.stderr, "", args)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
