"""Check convcat._capi (the ctypes mirror) against convcat.h with a C compiler.

    python3 -m convcat.abicheck [--header runtime/include/convcat.h] [--cc gcc]

It reads the header's struct definitions (which fields, in which order), then compiles and runs a
small C program against the header that prints sizeof and offsetof of every field the mirror has,
every enum value the mirror uses, and whether each bound function's prototype in the header is the
one the mirror declares.  Any difference is a problem: exit status 1, one line per difference.
Exit status 77 (skip) when no C compiler or no header is found.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import _capi

SKIP = 77


def find_header(explicit=None):
    """convcat.h: the argument, $CONVCAT_INCLUDE/convcat.h, the source tree's, the installed ones."""
    here = os.path.dirname(os.path.abspath(__file__))
    places = [explicit] if explicit else []
    if os.environ.get("CONVCAT_INCLUDE"):
        places.append(os.path.join(os.environ["CONVCAT_INCLUDE"], "convcat.h"))
    places += [os.path.join(here, "..", "..", "runtime", "include", "convcat.h"),
               os.path.join(sys.prefix, "include", "convcat.h"), "/usr/local/include/convcat.h",
               "/usr/include/convcat.h"]
    for p in places:
        if p and os.path.isfile(p):
            return os.path.abspath(p)
    return None


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_structs(text):
    """{typedef name: [field names in order]} for every `typedef struct X { ... } X;` in the header."""
    out = {}
    for m in re.finditer(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", _strip_comments(text), flags=re.S):
        fields = []
        for decl in m.group(2).split(";"):
            decl = decl.strip()
            if not decl:
                continue
            # "convcat_dtype a_type, b_type" / "int pad_lo[3], pad_hi[3]" / "const char *key"
            first, *rest = decl.split(",")
            for part in [first] + rest:
                nm = re.search(r"(\w+)\s*(\[[^\]]*\]\s*)*$", part.strip())
                if nm:
                    fields.append(nm.group(1))
        out[m.group(3)] = fields
    return out


def header_functions(text):
    """Names of the functions the header declares (CONVCAT_API ... name(...))."""
    return set(re.findall(r"CONVCAT_API[^;(]*?\b(convcat_\w+)\s*\(", _strip_comments(text), flags=re.S))


def c_program(text):
    """The C source that prints the layout, enum values and prototype checks."""
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "convcat.h"', "int main(void)", "{"]
    for cls, cname in _capi.STRUCTS.items():
        lines.append(f'    printf("struct {cname} %zu\\n", sizeof({cname}));')
        for f, _ in cls._fields_:
            lines.append(f'    printf("field {cname} {f} %zu %zu\\n", offsetof({cname}, {f}), '
                         f'sizeof((({cname} *)0)->{f}));')
    for name in _capi.ENUMS:
        lines.append(f'    printf("enum {name} %lld\\n", (long long){name});')
    lines.append('    printf("enum CONVCAT_AUTO %llu\\n", (unsigned long long)CONVCAT_AUTO);')
    declared = header_functions(text)
    for table in (_capi.FUNCTIONS, _capi.OPTIONAL_FUNCTIONS):
        for name, (_, _, proto) in table.items():
            if name not in declared:   # a bound function the header lacks is reported by check(), not compiled
                continue
            lines.append(f'    printf("sig {name} %d\\n", __builtin_types_compatible_p(__typeof__(&{name}), {proto}));')
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


class Unavailable(Exception):
    """No compiler or no header: the check cannot run here."""


def run_c(header, cc=None):
    """Compile and run the program; its output lines."""
    cc = cc or os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc or not shutil.which(cc):
        raise Unavailable("no C compiler (gcc or cc, or $CC)")
    with open(header) as fh:
        text = fh.read()
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
        with open(src, "w") as fh:
            fh.write(c_program(text))
        r = subprocess.run([cc, "-std=gnu11", "-I", os.path.dirname(header), src, "-o", exe],
                           capture_output=True, text=True)
        if r.returncode != 0:   # a mirrored field, enum or function the header no longer has
            raise RuntimeError(f"compiling the layout program against {header} failed:\n{r.stderr.strip()}")
        return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()


def check(header=None, cc=None):
    """A list of differences between the mirror and the header (empty: they agree).
    Raises Unavailable when it cannot run."""
    path = find_header(header)
    if not path:
        raise Unavailable("convcat.h not found (pass --header or set CONVCAT_INCLUDE)")
    with open(path) as fh:
        text = fh.read()
    problems = []
    structs = header_structs(text)
    for cls, cname in _capi.STRUCTS.items():
        mine = [f for f, _ in cls._fields_]
        theirs = structs.get(cname)
        if theirs is None:
            problems.append(f"{cname}: not found in {path}")
        elif mine != theirs:
            problems.append(f"{cname}: fields differ: header {theirs}, mirror {mine}")
    declared = header_functions(text)
    for name in _capi.FUNCTIONS:
        if name not in declared:
            problems.append(f"{name}: bound by the mirror, not declared in {path}")
    for name in sorted(declared - set(_capi.FUNCTIONS) - set(_capi.OPTIONAL_FUNCTIONS)):
        problems.append(f"{name}: declared in {path}, not bound by the mirror (convcat/_capi.py)")
    try:
        out = run_c(path, cc)
    except RuntimeError as e:
        return problems + [str(e)]
    sizes, offsets, sigs, enums = {}, {}, {}, {}
    for line in out:
        kind, *v = line.split()
        if kind == "struct":
            sizes[v[0]] = int(v[1])
        elif kind == "field":
            offsets[(v[0], v[1])] = (int(v[2]), int(v[3]))
        elif kind == "enum":
            enums[v[0]] = int(v[1])
        elif kind == "sig":
            sigs[v[0]] = v[1] == "1"
    import ctypes
    for cls, cname in _capi.STRUCTS.items():
        if sizes.get(cname) != ctypes.sizeof(cls):
            problems.append(f"{cname}: sizeof is {sizes.get(cname)} in C, {ctypes.sizeof(cls)} in the mirror")
        for f, _ in cls._fields_:
            got = (getattr(cls, f).offset, getattr(cls, f).size)
            if offsets.get((cname, f)) != got:
                problems.append(f"{cname}.{f}: offset/size {offsets.get((cname, f))} in C, {got} in the mirror")
    for name, value in _capi.ENUMS.items():
        if enums.get(name) != value:
            problems.append(f"{name} is {enums.get(name)} in C, {value} in the mirror")
    if enums.get("CONVCAT_AUTO") != _capi.CONVCAT_AUTO:
        problems.append(f"CONVCAT_AUTO is {enums.get('CONVCAT_AUTO')} in C, {_capi.CONVCAT_AUTO} in the mirror")
    for name, same in sigs.items():
        if not same:
            table = _capi.FUNCTIONS if name in _capi.FUNCTIONS else _capi.OPTIONAL_FUNCTIONS
            problems.append(f"{name}: the header's prototype is not {table[name][2]}")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description="compare convcat's ctypes mirror with convcat.h")
    ap.add_argument("--header", help="convcat.h (default: the source tree's or the installed one)")
    ap.add_argument("--cc", help="C compiler (default: $CC, gcc, cc)")
    a = ap.parse_args(argv)
    try:
        problems = check(a.header, a.cc)
    except Unavailable as e:
        print(f"abicheck: skipped: {e}")
        return SKIP
    path = find_header(a.header)
    if problems:
        print(f"abicheck: the ctypes mirror (convcat/_capi.py) and {path} DIFFER:")
        for p in problems:
            print(f"  {p}")
        return 1
    n = sum(len(c._fields_) for c in _capi.STRUCTS)
    print(f"abicheck: {len(_capi.STRUCTS)} structs ({n} fields), {len(_capi.ENUMS) + 1} enum values and "
          f"{len(_capi.FUNCTIONS)} prototypes agree with {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
