#!/usr/bin/env python3
"""check_sass.py CATALOG_BUILD_DIR: static checks of every compiled kernel's machine code.

For each KEY.fatbin: `cuobjdump --dump-sass` must show the tensor-core
instructions of the key's arch (sm90a: HGMMA; sm100a: UTC*MMA, which nvdisasm
13.0 prints as UTCHMMA for kind::f16/tf32 and UTCQMMA for kind::f8f6f4, with
.2CTA for cta_group::2) and no local
memory traffic (LDL/STL); the kernel's symbol must be the key, and the
helper kernels the runtime looks up beside it must be there (KEY_reduce for
wgrad, KEY_fill for a dgrad kernel with the strided epilogue, and on sm90a
KEY_strided, the kernel of its stride phases).  ptxas spills
and C75xx diagnostics already fail the build (catalog/compile.py).

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
from convcat_gen import space  # noqa: E402

MMA = {"sm90a": re.compile(r"\bHGMMA\."), "sm100a": re.compile(r"\bUTC\w*MMA")}
# The rest of the sm_100a pipeline: TMEM loads (tcgen05.ld), MMA commits to
# mbarriers (tcgen05.commit) and TMA loads.
ALSO = {"sm90a": [], "sm100a": [re.compile(r"\bLDTM\b"), re.compile(r"\bUTCBAR\b"), re.compile(r"\bUTMALDG\.")]}


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
        r = subprocess.run([cuobjdump, "--dump-sass", str(f)], capture_output=True, text=True, env=env)
        sass = r.stdout
        problems = []
        if r.returncode != 0:
            problems.append(f"cuobjdump failed: {r.stderr.strip()}")
        else:
            if not MMA[arch].search(sass):
                problems.append(f"no {MMA[arch].pattern} instruction")
            problems += [f"no {r.pattern} instruction" for r in ALSO[arch] if not r.search(sass)]
            if re.search(r"\b(LDL|STL)\b", sass):
                problems.append("local memory traffic (LDL/STL)")
            if not re.search(rf"Function : {key}$", sass, re.M):
                problems.append("kernel symbol is not the key")
            k = space.parse(key)
            helpers = ["_reduce"] if space.splits_k(k) else ["_fill"] if space.dgrad_scatters(k) else []
            if arch == "sm90a" and space.dgrad_scatters(k):
                helpers.append("_strided")   # the stride phases' kernel (runtime: e->strided)
            problems += [f"no helper kernel {key}{h}" for h in helpers
                         if not re.search(rf"Function : {key}{h}$", sass, re.M)]
        count = len(MMA[arch].findall(sass))
        return (f"{'FAIL' if problems else 'ok  '} {key}: {count} {arch} MMA instructions"
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
