"""The C API of libconvcat through ctypes: versions, library and catalog discovery, entries (with
their kernel family), queries, plans, launches, catalog sets, autotuning (the winner, or every
candidate's result) and the tune cache, the opt-in log.  No compiler is needed; nothing here
imports torch.

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


def schedule_value(schedule):
    return _lookup(_capi.SCHEDULE_NAMES, schedule, "schedule")


def family_value(family):
    return _lookup(_capi.FAMILY_NAMES, family, "family")


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

    # ---- versions
    def version(self):
        """The library's release, "MAJOR.MINOR.PATCH" (convcat_version)."""
        return self.cdll.convcat_version().decode()

    def catalog_format_version(self):
        """The catalog file format this library reads (convcat_catalog_format_version)."""
        return self.cdll.convcat_catalog_format_version()

    def kernel_abi_version(self):
        """The kernel parameter ABI this library passes (convcat_kernel_abi_version)."""
        return self.cdll.convcat_kernel_abi_version()

    def versions(self):
        """{"library", "header" (the release this binding's mirror was written for), "catalog_format",
        "kernel_abi"}."""
        return dict(library=self.version(), header=_capi.HEADER_VERSION,
                    catalog_format=self.catalog_format_version(), kernel_abi=self.kernel_abi_version())

    # ---- finding the catalog
    def default_catalog_path(self):
        """The catalog convcat_open_default would open (convcat_default_catalog_path: $CONVCAT_CATALOG
        alone when set, else the share/convcat/convcat.catalog of the library's prefix, else of its
        configured prefix).  Raises ConvcatError (CONVCAT_ERR_IO, naming every place tried) when
        there is none."""
        size = 4096
        while True:
            buf = ctypes.create_string_buffer(size)
            st = self.cdll.convcat_default_catalog_path(buf, size)
            if st == _capi.CONVCAT_ERR_INVALID_ARGUMENT and size < (1 << 20):
                size *= 4   # a path longer than the buffer
                continue
            self.check(st, "convcat_default_catalog_path")
            return buf.value.decode(errors="surrogateescape")

    # ---- the log
    def set_log_callback(self, callback):
        """Send the library's log lines (which kernel each plan took and why, autotune results, cache
        hits, the catalog found) to `callback(line: str)`; None removes it (then CONVCAT_LOG=1 sends
        them to stderr).  The callback runs on the thread that made the decision and must not call
        into convcat; its exceptions are swallowed."""
        set_log_callback(callback, self)

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

    def problem_folded(self, p):
        """The 2D problem a 3D one is over the same memory (which 2D kernels run), or None where it does
        not fold (convcat_problem_folded)."""
        f = _capi.Problem()
        st = self.cdll.convcat_problem_folded(ctypes.byref(p), ctypes.byref(f))
        return f if st == _capi.CONVCAT_OK else None

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


# Every callback object handed to a library stays alive: a thread of the library may still be inside
# the previous one after convcat_set_log_callback replaced it (the library calls it outside its lock).
_log_callbacks = []


def set_log_callback(callback, library=None):
    """convcat_set_log_callback for `library` (a Library or a path; default: load_library()):
    `callback(line)` gets each line of the library's opt-in log; None removes it."""
    lib = library if isinstance(library, Library) else load_library(library)
    if callback is None:
        lib.cdll.convcat_set_log_callback(_capi.LogCallback(), None)   # a NULL function pointer
        return

    def trampoline(_user, line):
        try:
            callback(line.decode(errors="replace") if line else "")
        except Exception:   # an exception must not unwind through C
            pass

    c_fn = _capi.LogCallback(trampoline)
    _log_callbacks.append(c_fn)
    lib.cdll.convcat_set_log_callback(c_fn, None)


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
    family: str = "tma"      # "tma", "gather" (any groups and channel counts) or "direct" (depthwise)
    verified: bool = False   # the GPU suite has executed this arch's kernels of this family
    groups_mode: int = 0     # 0 groups 1 only, 1 wgrad with K == C, 2 any groups, 3 depthwise (_capi.GROUPS_*)

    @property
    def groups(self):
        """The groups the kernel takes, in words: "1", "wgrad K == C", "any" or "depthwise"."""
        return _capi.GROUPS_MODE_NAMES.get(self.groups_mode, str(self.groups_mode))


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A row of a query answer: ok rows have predicted_us, the others their reason."""
    index: int
    key: str
    ok: bool
    predicted_us: float
    reason: str
    family: str = ""   # the entry's kernel family


@dataclasses.dataclass(frozen=True)
class SetCandidate:
    """A row of a catalog set's query answer: a Candidate of `catalog`, the set's `position`-th."""
    catalog: object   # the Catalog whose entry `index` it is
    position: int
    index: int
    key: str
    ok: bool
    predicted_us: float
    reason: str
    family: str = ""

    @property
    def entry(self):
        return self.catalog.entries[self.index]


@dataclasses.dataclass(frozen=True)
class TuneResult:
    """One candidate of convcat_autotune_results: timed (ok, ms) or skipped or failed (status, reason)."""
    index: int
    key: str
    status: int          # convcat_status: CONVCAT_OK when timed
    status_name: str
    ms: float            # median milliseconds (timed rows)
    predicted_us: float  # the query model's prediction
    workspace_bytes: int
    reason: str          # why not timed ("" when timed)

    @property
    def ok(self):
        return self.status == _capi.CONVCAT_OK


class AutotuneError(ConvcatError):
    """convcat_autotune_results timed nothing: `results` (TuneResult rows) say why for each candidate."""

    def __init__(self, base, results):
        super().__init__(base.what, base.status, base.status_name, base.text)
        self.results = list(results)


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
    groups_per_cta: int   # adjacent groups one CTA computes (gather packs of groups), else 1
    splits: int           # split-K slices of the K loop (1: unsplit)
    split_sums: str       # where the slices' sums are added: "none", "reduce" (a second launch), "cluster"


class Plan:
    """A kernel bound to a problem and to the device current when it was made."""

    def __init__(self, catalog, handle, problem):
        self.catalog, self._handle, self.problem = catalog, handle, copy_problem(problem)
        lib = catalog.lib
        buf, arr = _capi.padded(_capi.PlanInfo)
        lib.check(lib.cdll.convcat_plan_info_get(handle, buf), "convcat_plan_info_get")
        i = arr[0]
        self.info = PlanInfo(i.index, catalog.entries[i.index].key, i.grid, i.cluster, i.threads, i.smem_bytes,
                             i.workspace_bytes, i.groups_per_cta, i.splits,
                             ("none", "reduce", "cluster")[i.split_sums])

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
        self._sets = weakref.WeakSet()   # CatalogSets that borrow it
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
                     e.threads, e.smem_bytes, e.registers, e.code_bytes, e.fallback_m, e.fallback_n,
                     _capi.FAMILY_NAMES.get(e.family, str(e.family)), bool(e.verified), e.groups_mode)

    @property
    def id(self):
        """The catalog's identity (convcat_catalog_id): the CRC-32 of its index; tune caches key winners
        by it.  id_hex spells it as they do."""
        return self.lib.cdll.convcat_catalog_id(self.handle)

    @property
    def id_hex(self):
        return f"{self.id:08x}"

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
                           c.reason.decode(errors="replace"), self.entries[c.index].family) for c in rows[:count.value]]
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

    def tune_options(self, iterations=None, top_k=None, cache=None):
        """A convcat_tune_options with the library's defaults (convcat_tune_options_init), then the
        arguments given: iterations (0: the library's 20), top_k (0: every runnable candidate), cache
        (a TuneCache the winner is remembered in; never read)."""
        buf, arr = _capi.padded(_capi.TuneOptions)
        self.lib.cdll.convcat_tune_options_init(buf)
        o = arr[0]
        if iterations is not None:
            o.iterations = iterations
        if top_k is not None:
            o.top_k = top_k
        if cache is not None:
            o.cache = cache._handle.value
        return buf, o

    def autotune_results(self, p, tensors, stream=None, iterations=None, top_k=None, cache=None):
        """convcat_autotune_results, in the manner of cudnnFind: plan and time each kernel that can run
        p (or the model's top_k best) on the caller's tensors and stream (synchronizes it); a list of
        TuneResult, the timed ones fastest first (the first is the winner), then the skipped (the
        device cannot run it, its workspace exceeds tensors.workspace_bytes) and failed ones with
        their reasons.  `cache` (a TuneCache) remembers the winner.  Raises AutotuneError, whose
        `results` say why for each candidate, when none could be timed."""
        opts_buf, _ = self.tune_options(iterations, top_k, cache)
        cap = max(len(self.entries), 1)
        buf, rows = _capi.padded(_capi.TuneResult, cap)
        count = ctypes.c_size_t()
        st = self.lib.cdll.convcat_autotune_results(self.handle, ctypes.byref(p), ctypes.byref(tensors), stream,
                                                    opts_buf, buf, cap, ctypes.byref(count))
        failed = self.lib.error(st, "convcat_autotune_results") if st != _capi.CONVCAT_OK else None
        out = [TuneResult(r.index, self.entries[r.index].key if r.index < len(self.entries) else "", r.status,
                          self.lib.status_name(r.status), r.ms, r.predicted_us, r.workspace_bytes,
                          r.reason.decode(errors="replace"))
               for r in rows[:min(count.value, cap)]]
        if failed is not None:
            raise AutotuneError(failed, out)
        return out

    def close(self):
        """Destroy the plans made from it that are still alive and the catalog sets holding it, then
        close it."""
        if self._handle:
            for s in list(self._sets):
                s.destroy()
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


@dataclasses.dataclass
class SetQueryResult:
    runnable: list   # of SetCandidate, fastest predicted first across the set's catalogs
    refused: list    # of SetCandidate, with reasons (shadowed entries say by which catalog)


class CatalogSet:
    """Several catalogs queried as one (convcat_catalog_set): a user's regenerated tiles beside the
    shipped catalog.  Keys are unique across a set: add(catalog) refuses a catalog holding a key the
    set has (ConvcatError naming it), add(catalog, shadow=True) lets the catalog added first win (its
    entries shadow the later one's, as on a search path).  The set keeps its Catalog objects alive;
    closing one of them destroys the set first."""

    def __init__(self, catalogs=(), shadow=False, library=None):
        cats = list(catalogs)
        if library is None:
            library = cats[0].lib if cats else load_library()
        self.lib = library if isinstance(library, Library) else load_library(library)
        self.catalogs = []
        self._handle = ctypes.c_void_p()
        self.lib.check(self.lib.cdll.convcat_catalog_set_create(ctypes.byref(self._handle)),
                       "convcat_catalog_set_create")
        for c in cats:
            self.add(c, shadow)

    @property
    def handle(self):
        if not self._handle:
            raise ValueError("the catalog set was destroyed (or one of its catalogs closed)")
        return self._handle

    def add(self, catalog, shadow=False):
        """Add a Catalog (convcat_catalog_set_add); shadow: its keys the set already has are shadowed
        instead of refused."""
        if catalog.lib.cdll is not self.lib.cdll:
            raise ValueError("a catalog set's catalogs must come from its own library")
        flags = _capi.CONVCAT_SET_SHADOW if shadow else _capi.CONVCAT_SET_UNIQUE
        self.lib.check(self.lib.cdll.convcat_catalog_set_add(self.handle, catalog.handle, flags),
                       f"convcat_catalog_set_add {catalog.path or ''}".rstrip())
        self.catalogs.append(catalog)
        catalog._sets.add(self)
        return self

    def __len__(self):
        """Catalogs in the set (convcat_catalog_set_size)."""
        return self.lib.cdll.convcat_catalog_set_size(self.handle)

    def count(self):
        """Kernels the set holds, shadowed ones not counted (convcat_catalog_set_count)."""
        return self.lib.cdll.convcat_catalog_set_count(self.handle)

    def _catalog_of(self, pointer):
        for c in self.catalogs:
            if c._handle and c._handle.value == pointer:
                return c
        raise ConvcatError("catalog set", _capi.CONVCAT_ERR_INVALID_ARGUMENT, "CONVCAT_ERR_INVALID_ARGUMENT",
                           f"the library named a catalog ({pointer:#x}) the set does not hold")

    def find(self, key):
        """(Catalog, Entry) of `key`: the first catalog of the set holding it; KeyError if none does."""
        cat, index = ctypes.c_void_p(), ctypes.c_size_t()
        st = self.lib.cdll.convcat_catalog_set_find(self.handle, key.encode(), ctypes.byref(cat), ctypes.byref(index))
        if st == _capi.CONVCAT_ERR_NOT_FOUND:
            raise KeyError(self.lib.last_error() or f"no kernel {key!r} in the set")
        self.lib.check(st, "convcat_catalog_set_find")
        c = self._catalog_of(cat.value)
        return c, c.entries[index.value]

    def query(self, p, arch="sm90a", sm_count=0):
        """convcat_query_set: every entry of `arch` of every catalog, ranked as one:
        SetQueryResult(runnable, refused).  Plan a row with row.catalog.plan(p, row.index)."""
        cap = max(sum(len(c) for c in self.catalogs), 1)
        buf, rows = _capi.padded(_capi.SetCandidate, cap)
        count, ok = ctypes.c_size_t(), ctypes.c_size_t()
        self.lib.check(self.lib.cdll.convcat_query_set(self.handle, ctypes.byref(p), arch_value(arch), sm_count, buf,
                                                       cap, ctypes.byref(count), ctypes.byref(ok)),
                       "convcat_query_set")
        out = []
        for r in rows[:count.value]:
            cat = self.catalogs[r.position] if r.position < len(self.catalogs) else self._catalog_of(r.catalog)
            c = r.candidate
            e = cat.entries[c.index]
            out.append(SetCandidate(cat, r.position, c.index, e.key, bool(c.ok), c.predicted_us,
                                    c.reason.decode(errors="replace"), e.family))
        return SetQueryResult(out[:ok.value], out[ok.value:])

    def plan(self, p):
        """convcat_plan_create_set: a Plan of the best-ranked kernel of any of the set's catalogs for the
        current CUDA context's device; plan.catalog says which catalog it came from."""
        handle, cat, index = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
        self.lib.check(self.lib.cdll.convcat_plan_create_set(self.handle, ctypes.byref(p), ctypes.byref(handle),
                                                             ctypes.byref(cat), ctypes.byref(index)),
                       "convcat_plan_create_set")
        owner = self._catalog_of(cat.value)
        plan = Plan(owner, handle, p)
        owner._plans.add(plan)
        return plan

    def destroy(self):
        """Destroy the set (not its catalogs).  Twice is fine."""
        if self._handle:
            self.lib.cdll.convcat_catalog_set_destroy(self._handle)
            self._handle = ctypes.c_void_p()
            for c in self.catalogs:
                c._sets.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass

    def __repr__(self):
        if not self._handle:
            return "<convcat.CatalogSet (destroyed)>"
        return f"<convcat.CatalogSet of {len(self.catalogs)} catalogs: {self.count()} kernels>"


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
    convcat_open_default() ($CONVCAT_CATALOG alone when set, then the share/convcat/convcat.catalog of
    the library's prefix, then of its configured prefix), the catalog's path taken from
    convcat_default_catalog_path (so Catalog.path says which file was opened); where the library finds
    none (and $CONVCAT_CATALOG is unset), the same search in Python with the package's and the build
    tree's catalogs added (find_catalog).  `library`: a Library or a path for load_library."""
    lib = library if isinstance(library, Library) else load_library(library)
    if path:
        return Catalog(lib, os.path.abspath(path), found_by="argument")
    env_set = bool(os.environ.get("CONVCAT_CATALOG"))
    lookable = (_capi.CONVCAT_ERR_NOT_FOUND, _capi.CONVCAT_ERR_IO)   # none there: look on in Python
    try:
        where = lib.default_catalog_path()
    except ConvcatError as e:
        if env_set or e.status not in lookable:
            raise
        where = None
    if where is not None:
        handle = ctypes.c_void_p()
        st = lib.cdll.convcat_open_default(ctypes.byref(handle))
        if st == _capi.CONVCAT_OK:
            return Catalog(lib, os.path.abspath(where), handle=handle, found_by="convcat_open_default")
        if env_set or st not in lookable:
            raise lib.error(st, f"convcat_open_default ({where})")
    where, how = find_catalog(None, lib)
    return Catalog(lib, where, found_by=how)
