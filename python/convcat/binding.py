"""The C API of libconvcat through ctypes: library and catalog discovery, entries, queries, plans,
launches, autotuning and the tune cache.  No compiler is needed; nothing here imports torch.

Device pointers and streams are plain integers (e.g. torch's `tensor.data_ptr()` and
`torch.cuda.current_stream().cuda_stream`).  Every failing call raises ConvcatError with the
library's sentence (convcat_last_error) and its status.
"""
import ctypes
import ctypes.util
import dataclasses
import os
import sys
import threading
import weakref

from . import _capi
from ._capi import CONVCAT_AUTO

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.abspath(os.path.join(PACKAGE_DIR, "..", ".."))   # the repository, when run from it


class ConvcatError(RuntimeError):
    """A libconvcat call failed: `status` (negative convcat_status), `status_name`, the sentence."""

    def __init__(self, what, status, status_name, text):
        super().__init__(f"{what}: {status_name}: {text}" if what else f"{status_name}: {text}")
        self.what, self.status, self.status_name, self.text = what, status, status_name, text


class NotFound(ConvcatError):
    """The library or a catalog was not found where it was looked for (`tried` lists where)."""

    def __init__(self, what, tried):
        lines = "\n  ".join(tried) if tried else "(nowhere to look)"
        super().__init__(what, _capi.CONVCAT_ERR_NOT_FOUND, "CONVCAT_ERR_NOT_FOUND", f"looked in:\n  {lines}")
        self.tried = list(tried)


# ---------------------------------------------------------------------------
# Names <-> enum values


def _lookup(table, value, what):
    if isinstance(value, int):
        if value not in table:
            raise ValueError(f"unknown {what} {value}")
        return value
    names = {v: k for k, v in table.items()}
    if value not in names:
        raise ValueError(f"unknown {what} {value!r} (one of {', '.join(sorted(names))})")
    return names[value]


def op_value(op):
    return _lookup(_capi.OP_NAMES, op, "op")


def dtype_value(dtype):
    return _lookup(_capi.DTYPE_NAMES, dtype, "dtype")


def arch_value(arch):
    if arch in (None, "any", _capi.CONVCAT_ARCH_ANY):
        return _capi.CONVCAT_ARCH_ANY
    return _lookup(_capi.ARCH_NAMES, arch, "arch")


def activation_value(act):
    if act is None:
        return _capi.CONVCAT_ACT_NONE
    return _lookup(_capi.ACTIVATION_NAMES, act, "activation")


# ---------------------------------------------------------------------------
# The library


def _library_candidates(explicit=None):
    """(description, path or loader name) in the order find_library tries them."""
    out = []
    if explicit:
        out.append(("argument", explicit))
    env = os.environ.get("CONVCAT_LIBRARY")
    if env:
        out.append(("$CONVCAT_LIBRARY", env))
    out.append(("build tree", os.path.join(SOURCE_ROOT, "build", "runtime", "libconvcat.so")))
    out.append(("package", os.path.join(PACKAGE_DIR, "lib", "libconvcat.so")))
    found = ctypes.util.find_library("convcat")
    out.append(("system loader", found or "libconvcat.so"))
    return out


def find_library(path=None):
    """The libconvcat.so that load_library would load: `path`, else $CONVCAT_LIBRARY, else the build
    tree's build/runtime/libconvcat.so (the repository this package sits in), else one shipped in
    the package (convcat/lib/), else the system loader's (LD_LIBRARY_PATH, ld.so.cache).  An explicit path or $CONVCAT_LIBRARY that does not
    exist is an error, not a reason to look elsewhere."""
    tried = []
    for how, p in _library_candidates(path):
        if how == "system loader":
            tried.append(f"{p} ({how})")
            return p
        if os.path.isfile(p):
            return os.path.abspath(p)
        tried.append(f"{p} ({how}: no such file)")
        if how in ("argument", "$CONVCAT_LIBRARY"):
            raise NotFound("libconvcat.so", tried)
    raise NotFound("libconvcat.so", tried)


class Library:
    """libconvcat.so loaded with every function's signature set (convcat._capi)."""

    def __init__(self, path):
        self.path = path
        try:
            self.cdll = ctypes.CDLL(path)
        except OSError as e:
            raise NotFound(f"libconvcat.so: {e}", [path]) from None
        missing = _capi.bind(self.cdll)
        if missing:
            raise ConvcatError(f"{path}", _capi.CONVCAT_ERR_VERSION, "CONVCAT_ERR_VERSION",
                               f"the library lacks {', '.join(missing)}: older than this binding")

    def has(self, name):
        """Does the library export `name` (e.g. convcat_open_default)?"""
        try:
            getattr(self.cdll, name)
            return True
        except AttributeError:
            return False

    def status_name(self, status):
        s = self.cdll.convcat_status_string(status)
        return s.decode() if s else f"status {status}"

    def last_error(self):
        return (self.cdll.convcat_last_error() or b"").decode(errors="replace")

    def error(self, status, what):
        return ConvcatError(what, status, self.status_name(status), self.last_error())

    def check(self, status, what):
        if status != _capi.CONVCAT_OK:
            raise self.error(status, what)

    def name(self, kind, value):
        """convcat_{dtype,op,arch,schedule}_name(value), or None."""
        s = getattr(self.cdll, f"convcat_{kind}_name")(value)
        return s.decode() if s else None

    def device_arch(self):
        """(arch name or None, SM count) of the current CUDA context's device; raises without one."""
        arch, sms = ctypes.c_int(), ctypes.c_int()
        self.check(self.cdll.convcat_device_arch(ctypes.byref(arch), ctypes.byref(sms)), "convcat_device_arch")
        return _capi.ARCH_NAMES.get(arch.value), sms.value

    # ---- problems
    def problem_output(self, p):
        """(Z, P, Q) of a problem (1 for absent axes)."""
        z, pp, q = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self.check(self.cdll.convcat_problem_output(ctypes.byref(p), ctypes.byref(z), ctypes.byref(pp),
                                                    ctypes.byref(q)), "convcat_problem_output")
        return z.value, pp.value, q.value

    def problem_flops(self, p):
        return self.cdll.convcat_problem_flops(ctypes.byref(p))

    def problem_init(self):
        p = _capi.Problem()
        self.cdll.convcat_problem_init(ctypes.byref(p))
        return p


_libraries = {}
_libraries_lock = threading.Lock()


def load_library(path=None):
    """The Library at find_library(path), loaded once per path."""
    where = find_library(path)
    with _libraries_lock:
        lib = _libraries.get(where)
        if lib is None:
            lib = _libraries[where] = Library(where)
        return lib


# ---------------------------------------------------------------------------
# Problems


def make_problem(lib=None, op="fprop", dims=2, n=1, d=1, h=1, w=1, c=1, k=1, t=1, r=1, s=1, pad_lo=(0, 0, 0),
                 pad_hi=None, stride=(1, 1, 1), dilation=(1, 1, 1), groups=1, mode=0, dtype="bf16",
                 a_type=None, b_type=None, out_type=None):
    """A convcat_problem.  Arrays are in D, H, W order (convcat.h); `dtype` sets all three types
    ("tf32": tf32 x tf32 -> f32), a_type/b_type/out_type override.  `lib` (optional) checks the
    default field values against convcat_problem_init."""
    p = lib.problem_init() if lib is not None else _capi.Problem()
    p.op, p.dims = op_value(op), dims
    p.n, p.d, p.h, p.w, p.c, p.k, p.t, p.r, p.s = n, d, h, w, c, k, t, r, s
    pad_hi = pad_lo if pad_hi is None else pad_hi
    for i in range(3):
        p.pad_lo[i], p.pad_hi[i] = pad_lo[i], pad_hi[i]
        p.stride[i], p.dilation[i] = stride[i], dilation[i]
    p.groups, p.mode = groups, mode
    base = dtype_value(dtype)
    out = _capi.CONVCAT_F32 if base == _capi.CONVCAT_TF32 else base
    p.a_type = dtype_value(a_type) if a_type is not None else base
    p.b_type = dtype_value(b_type) if b_type is not None else base
    p.out_type = dtype_value(out_type) if out_type is not None else out
    return p


def problem_key(p):
    """A hashable tuple of every field of a convcat_problem."""
    return (p.op, p.dims, p.n, p.d, p.h, p.w, p.c, p.k, p.t, p.r, p.s, tuple(p.pad_lo), tuple(p.pad_hi),
            tuple(p.stride), tuple(p.dilation), p.groups, p.mode, p.a_type, p.b_type, p.out_type)


def copy_problem(p):
    q = _capi.Problem()
    ctypes.memmove(ctypes.byref(q), ctypes.byref(p), ctypes.sizeof(q))
    return q


def problem_text(p):
    """The problem as the tune cache file spells it (runtime/src/tune.c problem_text):
    fprop/2d/bf16.bf16.bf16/n128.d1.h56.w56.c64/k64.t1.r3.s3/pad0.1.1-0.1.1/str1.1.1/dil1.1.1/g1/xcorr.
    Pin tables (convcat.torch) and reports use the same text."""
    def nm(table, v):
        return table.get(v, "?")
    return (f"{nm(_capi.OP_NAMES, p.op)}/{p.dims}d/{nm(_capi.DTYPE_NAMES, p.a_type)}."
            f"{nm(_capi.DTYPE_NAMES, p.b_type)}.{nm(_capi.DTYPE_NAMES, p.out_type)}/"
            f"n{p.n}.d{p.d}.h{p.h}.w{p.w}.c{p.c}/k{p.k}.t{p.t}.r{p.r}.s{p.s}/"
            f"pad{p.pad_lo[0]}.{p.pad_lo[1]}.{p.pad_lo[2]}-{p.pad_hi[0]}.{p.pad_hi[1]}.{p.pad_hi[2]}/"
            f"str{p.stride[0]}.{p.stride[1]}.{p.stride[2]}/dil{p.dilation[0]}.{p.dilation[1]}.{p.dilation[2]}/"
            f"g{p.groups}/{'xcorr' if p.mode == _capi.CONVCAT_CROSS_CORRELATION else 'conv'}")


def make_tensors(x=None, w=None, y=None, c=None, alpha=1.0, beta=0.0, bias=None, activation=None, workspace=None,
                 workspace_bytes=0):
    """A convcat_tensors from device addresses (ints or None), in forward terms: fprop reads x, w and
    writes y; dgrad reads y = dy, w and writes x = dx; wgrad reads y = dy, x and writes w = dw."""
    t = _capi.Tensors()
    t.x, t.w, t.y, t.c = x, w, y, c
    t.alpha, t.beta = alpha, beta
    t.bias, t.activation = bias, activation_value(activation)
    t.workspace, t.workspace_bytes = workspace, workspace_bytes if workspace else 0
    return t


# ---------------------------------------------------------------------------
# Catalogs


@dataclasses.dataclass(frozen=True)
class Entry:
    """One kernel of a catalog (convcat_entry_info), with its enum values as names."""
    index: int
    key: str
    arch: str
    op: str
    dims: int
    a_type: str
    b_type: str
    acc_type: str
    out_type: str
    tile_m: int
    tile_n: int
    tile_k: int
    stages: int
    cluster_m: int
    cluster_n: int
    schedule: str
    threads: int
    smem_bytes: int
    registers: int
    code_bytes: int
    fallback_m: int
    fallback_n: int


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A row of a query answer: ok rows have predicted_us, the others their reason."""
    index: int
    key: str
    ok: bool
    predicted_us: float
    reason: str


@dataclasses.dataclass
class QueryResult:
    runnable: list   # of Candidate, fastest predicted first
    refused: list    # of Candidate, with reasons

    def why_none(self, p, entries):
        """Why nothing runs p: the reason a kernel of p's op, dims and data types gives, if the catalog
        has one; else a sentence that it has none."""
        want = (_capi.OP_NAMES.get(p.op), p.dims, _capi.DTYPE_NAMES.get(p.a_type), _capi.DTYPE_NAMES.get(p.b_type),
                _capi.DTYPE_NAMES.get(p.out_type))
        for c in self.refused:
            e = entries[c.index]
            if (e.op, e.dims, e.a_type, e.b_type, e.out_type) == want:
                return f"{c.reason} ({c.key})"
        return (f"the catalog has no {want[0]} {want[1]}D {want[2]} x {want[3]} -> {want[4]} kernel"
                + (f" among its {len(self.refused)} kernels of this arch" if self.refused else ""))


@dataclasses.dataclass(frozen=True)
class PlanInfo:
    index: int
    key: str
    grid: int
    cluster: int
    threads: int
    smem_bytes: int
    workspace_bytes: int


class Plan:
    """A kernel bound to a problem and to the device current when it was made."""

    def __init__(self, catalog, handle, problem):
        self.catalog, self._handle, self.problem = catalog, handle, copy_problem(problem)
        lib = catalog.lib
        buf, arr = _capi.padded(_capi.PlanInfo)
        lib.check(lib.cdll.convcat_plan_info_get(handle, buf), "convcat_plan_info_get")
        i = arr[0]
        self.info = PlanInfo(i.index, catalog.entries[i.index].key, i.grid, i.cluster, i.threads, i.smem_bytes,
                             i.workspace_bytes)

    @property
    def key(self):
        return self.info.key

    @property
    def workspace_bytes(self):
        return self.info.workspace_bytes

    def run(self, tensors, stream=None):
        """Launch (asynchronous) on `stream` (a CUstream as an int; None: the legacy default stream)."""
        if self._handle is None:
            raise ValueError("the plan was destroyed")
        lib = self.catalog.lib
        st = lib.cdll.convcat_plan_run(self._handle, ctypes.byref(tensors), stream)
        if st != _capi.CONVCAT_OK:
            raise lib.error(st, f"convcat_plan_run {self.info.key}")

    def destroy(self):
        if self._handle is not None:
            self.catalog.lib.cdll.convcat_plan_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass

    def __repr__(self):
        return f"<convcat.Plan {self.info.key} grid {self.info.grid} workspace {self.info.workspace_bytes}>"


class TuneCache:
    """Remembered autotune winners (convcat_tune_cache): load (a missing file is an empty cache; a
    damaged one is ignored with `warning` saying why), count, save (atomic)."""

    def __init__(self, lib, path):
        self.lib, self.path, self.warning = lib, path, ""
        self._handle = ctypes.c_void_p()
        why = ctypes.create_string_buffer(512)
        lib.check(lib.cdll.convcat_tune_cache_load(path.encode(), ctypes.byref(self._handle), why, len(why)),
                  f"convcat_tune_cache_load {path}")
        self.warning = why.value.decode(errors="replace")

    def count(self):
        return self.lib.cdll.convcat_tune_cache_count(self._handle)

    def save(self, path=None):
        path = path or self.path
        self.lib.check(self.lib.cdll.convcat_tune_cache_save(self._handle, path.encode()),
                       f"convcat_tune_cache_save {path}")

    def free(self):
        if self._handle:
            self.lib.cdll.convcat_tune_cache_free(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass


def _catalog_candidates(lib, explicit=None):
    """(description, path) in the order open_catalog tries them in Python."""
    out = []
    if explicit:
        out.append(("argument", explicit))
    env = os.environ.get("CONVCAT_CATALOG")
    if env:
        out.append(("$CONVCAT_CATALOG", env))
    out.append(("package", os.path.join(PACKAGE_DIR, "data", "convcat.catalog")))
    libdir = os.path.dirname(os.path.abspath(lib.path)) if os.path.sep in lib.path else None
    if libdir:   # a build tree's runtime/ holds the library, its catalog/ the catalog
        out.append(("the library's build tree", os.path.join(libdir, "..", "catalog", "convcat.catalog")))
    out.append(("source build tree", os.path.join(SOURCE_ROOT, "build", "catalog", "convcat.catalog")))
    if libdir:   # PREFIX/lib or PREFIX/lib/<multiarch>
        out.append(("installed", os.path.join(libdir, "..", "share", "convcat", "convcat.catalog")))
        out.append(("installed", os.path.join(libdir, "..", "..", "share", "convcat", "convcat.catalog")))
    for prefix in dict.fromkeys([sys.prefix, "/usr/local", "/usr"]):
        out.append(("installed", os.path.join(prefix, "share", "convcat", "convcat.catalog")))
    seen, uniq = set(), []
    for how, p in out:
        ap = os.path.abspath(p)
        if ap not in seen:
            seen.add(ap)
            uniq.append((how, ap))
    return uniq


class Catalog:
    """An open catalog file (convcat_catalog).  Use open_catalog() to find one."""

    def __init__(self, lib, path=None, handle=None, found_by=None):
        self.lib, self.path, self.found_by = lib, path, found_by or ("argument" if path else "")
        self._plans = weakref.WeakSet()
        if handle is None:
            handle = ctypes.c_void_p()
            lib.check(lib.cdll.convcat_open(path.encode(), ctypes.byref(handle)), f"convcat_open {path}")
        self._handle = handle
        self.entries = [self._entry(i) for i in range(lib.cdll.convcat_count(handle))]
        self._by_key = {e.key: e for e in self.entries}

    @property
    def handle(self):
        if not self._handle:
            raise ValueError("the catalog is closed")
        return self._handle

    def _entry(self, i):
        buf, arr = _capi.padded(_capi.EntryInfo)
        self.lib.check(self.lib.cdll.convcat_entry_info_get(self._handle, i, buf), "convcat_entry_info_get")
        e = arr[0]
        names = _capi.DTYPE_NAMES
        return Entry(i, e.key.decode(), _capi.ARCH_NAMES.get(e.arch, str(e.arch)), _capi.OP_NAMES[e.op], e.dims,
                     names[e.a_type], names[e.b_type], names[e.acc_type], names[e.out_type], e.tile_m, e.tile_n,
                     e.tile_k, e.stages, e.cluster_m, e.cluster_n, _capi.SCHEDULE_NAMES.get(e.schedule, str(e.schedule)),
                     e.threads, e.smem_bytes, e.registers, e.code_bytes, e.fallback_m, e.fallback_n)

    def __len__(self):
        return len(self.entries)

    def find(self, key):
        """The Entry with this key; KeyError if the catalog has none."""
        try:
            return self._by_key[key]
        except KeyError:
            raise KeyError(f"no kernel {key!r} in the catalog {self.path or ''}") from None

    def check(self, index, p):
        """(True, "ok") if entry `index` can compute p, else (False, the first rule it breaks)."""
        why = ctypes.create_string_buffer(_capi.REASON_BYTES + 64)
        st = self.lib.cdll.convcat_check(self.handle, index, ctypes.byref(p), why, len(why))
        if st == _capi.CONVCAT_OK:
            return True, "ok"
        if st == _capi.CONVCAT_ERR_UNSUPPORTED:
            return False, why.value.decode(errors="replace")
        raise self.lib.error(st, "convcat_check")

    def query(self, p, arch="sm90a", sm_count=0):
        """Every entry of `arch` ranked for p (convcat_query): QueryResult(runnable, refused)."""
        cap = max(len(self.entries), 1)
        buf, rows = _capi.padded(_capi.Candidate, cap)
        count, ok = ctypes.c_size_t(), ctypes.c_size_t()
        self.lib.check(self.lib.cdll.convcat_query(self.handle, ctypes.byref(p), arch_value(arch), sm_count, buf, cap,
                                                   ctypes.byref(count), ctypes.byref(ok)), "convcat_query")
        cands = [Candidate(c.index, self.entries[c.index].key, bool(c.ok), c.predicted_us,
                           c.reason.decode(errors="replace")) for c in rows[:count.value]]
        return QueryResult(cands[:ok.value], cands[ok.value:])

    def plan(self, p, index=CONVCAT_AUTO):
        """A Plan for p on the current CUDA context's device (convcat_plan_create); `index` an entry
        index, a key, or CONVCAT_AUTO (the query's best)."""
        if isinstance(index, str):
            index = self.find(index).index
        handle = ctypes.c_void_p()
        what = "convcat_plan_create " + ("auto" if index == CONVCAT_AUTO else self.entries[index].key)
        self.lib.check(self.lib.cdll.convcat_plan_create(self.handle, ctypes.byref(p), index, ctypes.byref(handle)),
                       what)
        plan = Plan(self, handle, p)
        self._plans.add(plan)
        return plan

    def autotune(self, p, tensors, stream=None, iterations=20, cache=None):
        """convcat_autotune: time every kernel that can run p on the caller's tensors and stream
        (synchronizes it) or reuse the cache's winner; returns (Entry, median ms)."""
        index, ms = ctypes.c_size_t(), ctypes.c_double()
        self.lib.check(self.lib.cdll.convcat_autotune(self.handle, ctypes.byref(p), ctypes.byref(tensors), stream,
                                                      iterations, cache._handle if cache else None,
                                                      ctypes.byref(index), ctypes.byref(ms)), "convcat_autotune")
        return self.entries[index.value], ms.value

    def close(self):
        """Destroy the plans made from it that are still alive, then close it."""
        if self._handle:
            for plan in list(self._plans):
                plan.destroy()
            self.lib.cdll.convcat_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"<convcat.Catalog {self.path or '(convcat_open_default)'}: {len(self.entries)} kernels>"


def find_catalog(path=None, library=None):
    """The catalog file open_catalog's Python search would open: `path`, else $CONVCAT_CATALOG, else
    convcat/data/convcat.catalog in the package, else the catalog of the build tree the library
    came from (BUILD/catalog/ beside BUILD/runtime/), else the source tree's build/, else the
    installed share/convcat/convcat.catalog (beside the library's prefix, sys.prefix, /usr/local,
    /usr).  An explicit path or $CONVCAT_CATALOG that does not exist is an error."""
    lib = library if isinstance(library, Library) else load_library(library)
    tried = []
    for how, p in _catalog_candidates(lib, path):
        if os.path.isfile(p):
            return p, how
        tried.append(f"{p} ({how}: no such file)")
        if how in ("argument", "$CONVCAT_CATALOG"):
            break
    raise NotFound("convcat.catalog", tried)


def open_catalog(path=None, library=None):
    """Open a catalog.  An explicit `path` is opened as given.  Otherwise the library's own search,
    convcat_open_default() ($CONVCAT_CATALOG, then the installed share/convcat/convcat.catalog), when
    the loaded library exports it; where it finds none (and $CONVCAT_CATALOG is unset) or the
    library lacks it, the same search in Python with the package's and the build tree's catalogs
    added (find_catalog).  `library`: a Library or a path for load_library."""
    lib = library if isinstance(library, Library) else load_library(library)
    if path:
        return Catalog(lib, os.path.abspath(path), found_by="argument")
    if lib.has("convcat_open_default"):
        handle = ctypes.c_void_p()
        st = lib.cdll.convcat_open_default(ctypes.byref(handle))
        if st == _capi.CONVCAT_OK:
            env = os.environ.get("CONVCAT_CATALOG")
            return Catalog(lib, os.path.abspath(env) if env else None, handle=handle, found_by="convcat_open_default")
        if os.environ.get("CONVCAT_CATALOG") or st not in (_capi.CONVCAT_ERR_NOT_FOUND, _capi.CONVCAT_ERR_IO):
            raise lib.error(st, "convcat_open_default")
    where, how = find_catalog(None, lib)
    return Catalog(lib, where, found_by=how)
