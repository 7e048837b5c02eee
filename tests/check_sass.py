#!/usr/bin/env python3
"""check_sass.py CATALOG_BUILD_DIR: static checks of every compiled kernel's machine code.

For each KEY.fatbin: `cuobjdump --dump-sass` must show the math instructions
of the key's family and arch -- a TMA kernel the tensor-core instructions of
its arch (sm90a: HGMMA; sm100a: UTC*MMA, which nvdisasm 13.0 prints as UTCHMMA
for kind::f16/tf32 and UTCQMMA for kind::f8f6f4, with .2CTA for cta_group::2,
beside TMEM loads, MMA commits and TMA loads), a gather kernel mma.sync
(HMMA) on either arch, a direct kernel f32 FMAs (FFMA) -- and no local memory
traffic (LDL/STL); the kernel's symbol must be the key, and the helper kernels
the runtime looks up beside it must be there.  Which helpers those are is
what the catalog index says (space.index_values(key)["flags"], the bits of
convcat_gen.index.FLAG_BITS), as runtime/src/catalog.c reads them: KEY_reduce
for SPLITS_K, KEY_fill for SCATTERS, KEY_strided for STRIDED_KERNEL,
KEY_transpose for TRANSPOSES_FILTER.  ptxas spills and C75xx diagnostics
already fail the build (catalog/compile.py).

Exits 77 (skip) when cuobjdump or nvdisasm cannot be found: the CUDA toolkit
on PATH or under /usr/local/cuda, or the pip packages nvidia-cuda-cuobjdump
and nvidia-cuda-nvdisasm.
"""
import concurrent.futures
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "generator"))
from convcat_gen import index, space  # noqa: E402

# The math instructions of each (family, arch): a name and the pattern.
HGMMA, UTCMMA = ("HGMMA", re.compile(r"\bHGMMA\.")), ("UTC*MMA", re.compile(r"\bUTC\w*MMA"))
HMMA, FFMA = ("HMMA", re.compile(r"\bHMMA\.")), ("FFMA", re.compile(r"\bFFMA\b"))
MMA = {("tma", "sm90a"): HGMMA, ("tma", "sm100a"): UTCMMA,
       ("gather", "sm90a"): HMMA, ("gather", "sm100a"): HMMA,   # mma.sync on both arches
       ("direct", "sm90a"): FFMA, ("direct", "sm100a"): FFMA}   # CUDA cores, f32 arithmetic
# The rest of the sm_100a TMA pipeline: TMEM loads (tcgen05.ld), MMA commits to
# mbarriers (tcgen05.commit) and TMA loads.
ALSO = {("tma", "sm100a"): [re.compile(r"\bLDTM\b"), re.compile(r"\bUTCBAR\b"), re.compile(r"\bUTMALDG\.")]}
# The helper kernels the runtime loads beside KEY, by the index flag that says it exports them.
HELPERS = {"SPLITS_K": "_reduce", "SCATTERS": "_fill", "STRIDED_KERNEL": "_strided",
           "TRANSPOSES_FILTER": "_transpose"}


def expected(key):
    """(family, the helper kernel suffixes) of a key, from its index record."""
    k = space.parse(key)
    flags = space.index_values(k)["flags"]
    return space.family(k), [h for f, h in HELPERS.items() if flags & index.FLAG_BITS[f]]


def find_tools():
    """Directories that hold both cuobjdump and nvdisasm, best first."""
    dirs = [os.path.dirname(p) for p in [shutil.which("cuobjdump")] if p]
    dirs += ["/usr/local/cuda/bin"]
    dirs += glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "nvidia", "*", "bin"))
    for d in dirs:
        if os.access(os.path.join(d, "cuobjdump"), os.X_OK) and os.access(os.path.join(d, "nvdisasm"), os.X_OK):
            return d
    # cuobjdump and nvdisasm may come from different places
    cuobjdump = next((os.path.join(d, "cuobjdump") for d in dirs if os.access(os.path.join(d, "cuobjdump"), os.X_OK)), None)
    nvdisasm = next((os.path.join(d, "nvdisasm") for d in dirs if os.access(os.path.join(d, "nvdisasm"), os.X_OK)), None)
    return (cuobjdump, nvdisasm) if cuobjdump and nvdisasm else None


def main():
    build = pathlib.Path(sys.argv[1])
    fatbins = sorted(build.glob("*.fatbin"))
    if not fatbins:
        print(f"no fatbins under {build}")
        return 99
    tools = find_tools()
    if tools is None:
        print("SKIP: cuobjdump/nvdisasm not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        return 77
    env = dict(os.environ)
    if isinstance(tools, str):
        cuobjdump = os.path.join(tools, "cuobjdump")
        env["PATH"] = tools + os.pathsep + env.get("PATH", "")
    else:
        cuobjdump = tools[0]
        env["PATH"] = os.path.dirname(tools[1]) + os.pathsep + env.get("PATH", "")
    def check(f):
        key = f.stem
        arch = key.split("_")[0]
        family, helpers = expected(key)
        mma_name, mma = MMA[family, arch]
        r = subprocess.run([cuobjdump, "--dump-sass", str(f)], capture_output=True, text=True, env=env)
        sass = r.stdout
        problems = []
        if r.returncode != 0:
            problems.append(f"cuobjdump failed: {r.stderr.strip()}")
        else:
            if not mma.search(sass):
                problems.append(f"no {mma_name} instruction")
            problems += [f"no {r.pattern} instruction" for r in ALSO.get((family, arch), []) if not r.search(sass)]
            if re.search(r"\b(LDL|STL)\b", sass):
                problems.append("local memory traffic (LDL/STL)")
            if not re.search(rf"Function : {key}$", sass, re.M):
                problems.append("kernel symbol is not the key")
            problems += [f"no helper kernel {key}{h}" for h in helpers
                         if not re.search(rf"Function : {key}{h}$", sass, re.M)]
        count = len(mma.findall(sass))
        return (f"{'FAIL' if problems else 'ok  '} {key}: {count} {mma_name} instructions"
                + (": " + "; ".join(problems) if problems else "")), bool(problems)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(check, fatbins))
    for line, _ in results:
        print(line)
    failures = sum(bad for _, bad in results)
    print(f"{len(fatbins)} kernels, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
