#!/usr/bin/env python3
"""compare-sass.py BUILD_A BUILD_B: is every kernel's machine code the same in two builds?

Runs `cuobjdump -sass` on every KEY.cubin of BUILD_A/catalog and BUILD_B/catalog
(catalog/compile.py leaves one beside each KEY.fatbin), splits each listing
into its functions (the kernel named by the key, its helper kernels and
out-of-line device functions) and compares them function by function, every
instruction, encoding and header flag included.  Only what lies before the
first function is dropped: the listing's header (the fatbin/arch/code-version
lines, which name no instruction).  A kernel is identical when both builds have
the same functions with the same text; its functions in a different order
count as identical and are reported.  For a refactor of the templates or the
generator that must not change the kernels (same SASS before and after).

    scripts/compare-sass.py /path/to/build-before build
    scripts/compare-sass.py --show 3 A B       # the first differing lines of up to 3 kernels
    scripts/compare-sass.py --keys 'sm90a_*' A B

Prints one line per different, missing or reordered kernel, then a summary:
"N kernels: I identical, D different, M missing (R reordered)".  Exits 0 when
every kernel is identical and none is missing from either build, 1 otherwise,
2 when cuobjdump cannot be found (on PATH, under /usr/local/cuda, or the pip
package nvidia-cuda-cuobjdump, as tests/check_sass.py looks) or a build has no
kernels.
"""
import argparse
import concurrent.futures
import difflib
import fnmatch
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig


def find_cuobjdump():
    dirs = [os.path.dirname(p) for p in [shutil.which("cuobjdump")] if p]
    dirs += ["/usr/local/cuda/bin"]
    dirs += glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "nvidia", "*", "bin"))
    for d in dirs:
        exe = os.path.join(d, "cuobjdump")
        if os.access(exe, os.X_OK):
            return exe
    return None


def functions(cuobjdump, cubin):
    """[(name, text)] of a cubin's SASS listing, in listing order; or raises RuntimeError."""
    r = subprocess.run([cuobjdump, "-sass", str(cubin)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"cuobjdump -sass {cubin}: {r.stderr.strip()}")
    out, name, lines = [], None, []
    for line in r.stdout.splitlines():
        stripped = line.strip()
        if stripped.startswith("Function : "):
            if name is not None:
                out.append((name, "\n".join(lines)))
            name, lines = stripped[len("Function : "):], []
        elif name is not None:
            lines.append(line.rstrip())
    if name is not None:
        out.append((name, "\n".join(lines)))
    return out


def compare(cuobjdump, a, b):
    """(verdict, detail) for one kernel: 'identical', 'reordered' or 'different'."""
    fa, fb = functions(cuobjdump, a), functions(cuobjdump, b)
    da, db = dict(fa), dict(fb)
    if len(da) != len(fa) or len(db) != len(fb):
        return "different", "a function name appears twice in a listing"
    if set(da) != set(db):
        only_a, only_b = sorted(set(da) - set(db)), sorted(set(db) - set(da))
        return "different", f"functions only in A: {only_a}, only in B: {only_b}"
    changed = [n for n in da if da[n] != db[n]]
    if changed:
        n = changed[0]
        diff = difflib.unified_diff(da[n].splitlines(), db[n].splitlines(), "A", "B", lineterm="", n=1)
        return "different", (f"{len(changed)} of {len(da)} functions differ: {', '.join(changed)}\n"
                             + "\n".join(list(diff)[:12]))
    if [n for n, _ in fa] != [n for n, _ in fb]:
        return "reordered", "the same functions in another order"
    return "identical", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build_a", type=pathlib.Path)
    ap.add_argument("build_b", type=pathlib.Path)
    ap.add_argument("--keys", default="*", help="compare only the kernels whose key matches this glob")
    ap.add_argument("--show", type=int, default=0, help="print the first differing lines of up to this many kernels")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()

    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        print("cuobjdump not found (CUDA toolkit, or pip install nvidia-cuda-cuobjdump)", file=sys.stderr)
        return 2
    cubins = []
    for build in (args.build_a, args.build_b):
        d = build / "catalog" if (build / "catalog").is_dir() else build
        found = {p.stem: p for p in d.glob("*.cubin") if fnmatch.fnmatchcase(p.stem, args.keys)}
        if not found:
            print(f"no KEY.cubin matching {args.keys!r} under {d}", file=sys.stderr)
            return 2
        cubins.append(found)
    ca, cb = cubins
    keys = sorted(set(ca) | set(cb))
    both = [k for k in keys if k in ca and k in cb]

    def one(key):
        try:
            return key, compare(cuobjdump, ca[key], cb[key])
        except RuntimeError as e:
            return key, ("different", str(e))

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(pool.map(one, both))

    counts = {"identical": 0, "reordered": 0, "different": 0}
    shown = 0
    for key in keys:
        if key not in ca or key not in cb:
            print(f"missing   {key}: only in {args.build_a if key in ca else args.build_b}")
            continue
        verdict, detail = results[key]
        counts[verdict] += 1
        if verdict == "identical":
            continue
        first, _, rest = detail.partition("\n")
        print(f"{verdict:9s} {key}: {first}")
        if verdict == "different" and rest and shown < args.show:
            shown += 1
            print("\n".join("    " + line for line in rest.splitlines()))
    missing = len(keys) - len(both)
    identical = counts["identical"] + counts["reordered"]
    print(f"{len(keys)} kernels: {identical} identical, {counts['different']} different, {missing} missing"
          f" ({counts['reordered']} reordered)")
    return 0 if counts["different"] == 0 and missing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
