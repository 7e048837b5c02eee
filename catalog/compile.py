#!/usr/bin/env python3
"""Compile one generated kernel: nvcc -cubin, check ptxas's report, fatbinary.

    compile.py --nvcc NVCC --fatbinary FATBINARY --arch sm90a -I DIR
               --src KEY.cu --fatbin KEY.fatbin --report KEY.json --depfile KEY.d

The build fails if ptxas reports any spill, a stack frame, or one of the
wgmma/setmaxnreg diagnostics that mean a silently slower kernel (C75xx:
serialized wgmma, injected waits, ignored setmaxnreg).  The report (JSON)
records registers, spills and stack for the catalog index.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys

GENCODE = {"sm90a": ("compute_90a", "sm_90a", "90a"), "sm100a": ("compute_100a", "sm_100a", "100a")}


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--fatbinary", required=True)
    ap.add_argument("--arch", required=True, choices=GENCODE)
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("--src", required=True)
    ap.add_argument("--fatbin", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--depfile", required=True)
    a = ap.parse_args()

    virt, real, sm = GENCODE[a.arch]
    cubin = str(pathlib.Path(a.fatbin).with_suffix(".cubin"))
    cmd = [a.nvcc, "-cubin", f"-gencode=arch={virt},code={real}", "-O3", "-Xptxas=-v",
           "-MD", "-MF", a.depfile, "-o", cubin, a.src] + [f"-I{d}" for d in a.includes]
    rc, log = run(cmd)
    if rc != 0:
        sys.exit(f"{a.src}: nvcc failed ({rc}):\n{log}")
    problems = []
    bad = re.findall(r".*\(C75\d\d\).*", log)
    if bad:
        problems.append("ptxas diagnostics: " + "; ".join(b.strip() for b in bad))
    # Every function (the kernel, a wgrad kernel's _reduce, out-of-line helpers) must be free of
    # spills and stack; the index records the registers of the kernel named by the key.
    frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    key = pathlib.Path(a.src).stem
    regs = re.search(r"Compiling entry function '" + re.escape(key) + r"'.*?Used (\d+) registers", log, re.S)
    if not frames or not regs:
        problems.append("no ptxas resource report for the kernel in the log")
    for stack, st, ld in (map(int, f) for f in frames):
        if st or ld or stack:
            problems.append(f"{st} bytes spill stores, {ld} bytes spill loads, {stack} bytes stack frame")
    if problems:
        sys.exit(f"{a.src}: refused: " + "; ".join(problems) + f"\n{log}")
    rc, flog = run([a.fatbinary, f"--create={a.fatbin}", f"--image3=kind=elf,sm={sm},file={cubin}"])
    if rc != 0:
        sys.exit(f"{a.src}: fatbinary failed ({rc}):\n{flog}")
    report = {"registers": int(regs.group(1)), "spill_stores": 0, "spill_loads": 0, "stack": 0}
    pathlib.Path(a.report).write_text(json.dumps(report, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
