"""What runs behind convcat's torch operators: the catalog, the per-problem decision (a plan or the
reason to fall back to cuDNN), layouts, launches, the fallback computations, and what each layer did
(for report() and the once-per-layer warnings).

The decision is the catalog's query: whatever it can run runs on convcat, in whichever kernel
family ranks first (tma: implicit GEMM for channel counts in multiples of 8 (4 for TF32) and
groups 1; gather: any groups and channel counts, so C = 3 stems, odd channel counts and grouped
convolutions; direct: depthwise, groups == C).  A pass falls back to cuDNN only for a reason it
records: no kernel of the catalog can run it (with the query's reason), its dtype (f64; f32 with
TF32 disallowed), the device, or a first call while a CUDA graph is captured.

Decisions are cached per (problem, dtype, TF32 setting, device, catalog).  A plan is never made
while the current stream is being captured into a CUDA graph: a layer first seen during capture runs
cuDNN in the graph (with a warning); run the model once before capturing and every convcat layer
is captured as its plan's kernel launches.  Workspaces come from PyTorch's caching allocator
(torch.empty on the device), launches go to torch.cuda.current_stream().
"""
import dataclasses
import os
import threading
import warnings

import torch
import torch.nn.functional as F

import convcat
from convcat import _capi, _cuda
from convcat.binding import ConvcatError

_lock = threading.RLock()

OPS = ("fprop", "dgrad", "wgrad")
ACTIVATIONS = {"none": 0, "relu": 1, "gelu": 2, "silu": 3}
ACTIVATION_NAMES = {v: k for k, v in ACTIVATIONS.items()}


class ConvcatTorchWarning(UserWarning):
    """A convcat layer fell back to cuDNN, or its input was copied into the layout convcat reads."""


# ---------------------------------------------------------------------------
# Configuration


def _env_flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


@dataclasses.dataclass
class Config:
    library: str = None        # libconvcat.so (None: convcat.find_library's search)
    catalog: str = None        # catalog file (None: convcat.open_catalog's search)
    pins: tuple = ()           # kernel keys: for each problem the first of them that can run it
    pin_map: dict = dataclasses.field(default_factory=dict)   # problem text -> key
    autotune: bool = False     # time every runnable kernel on first use (convcat_autotune)
    tune_cache: str = None     # the autotune cache file (loaded once, saved after each new winner)
    tune_iterations: int = 10
    allow_sm100a: bool = False  # sm_100a kernels have never run on a GPU (README): opt in
    enabled: bool = True

    @classmethod
    def from_env(cls):
        pins = tuple(k.strip() for k in os.environ.get("CONVCAT_PIN", "").split(",") if k.strip())
        return cls(library=os.environ.get("CONVCAT_LIBRARY") or None, catalog=os.environ.get("CONVCAT_CATALOG") or None,
                   pins=pins, autotune=_env_flag("CONVCAT_AUTOTUNE"),
                   tune_cache=os.environ.get("CONVCAT_TUNE_CACHE") or None, allow_sm100a=_env_flag("CONVCAT_ALLOW_SM100A"),
                   enabled=not _env_flag("CONVCAT_DISABLE"))


_config = None
_catalog = None          # convcat.Catalog, or None with _catalog_error set
_catalog_error = None
_catalogs_kept = []      # every catalog opened stays open: captured graphs may run its code
_decisions = {}          # decision key -> Decision
_problems = {}           # (op, geometry, dtype, tf32) -> (Problem, text) or (None, reason)
_would = {}              # the same -> what the sm90a catalog would do (for calls on CPU tensors)
_tune_cache = None
_tune_cache_path = None


def config():
    global _config
    if _config is None:
        _config = Config.from_env()
    return _config


def configure(library=None, catalog=None, pin=None, autotune=None, tune_cache=None, tune_iterations=None,
              allow_sm100a=None, enabled=None):
    """Set where the library and catalog are ("" for the default search), kernel pins, autotuning
    ("" for no tune cache); decisions made so far are
    forgotten (plans made after follow the new settings).  `pin`: a comma-separated string or a list
    of keys (for each problem the first of them that can run it), or a dict {problem text: key}
    (problem text as report() prints it).  Arguments left None keep their value; the first call to
    anything reads the environment (CONVCAT_LIBRARY, CONVCAT_CATALOG, CONVCAT_PIN, CONVCAT_AUTOTUNE,
    CONVCAT_TUNE_CACHE, CONVCAT_ALLOW_SM100A, CONVCAT_DISABLE)."""
    global _catalog, _catalog_error, _tune_cache, _tune_cache_path
    with _lock:
        c = config()
        if library is not None or catalog is not None:   # "" goes back to the search
            if library is not None:
                c.library = library or None
            if catalog is not None:
                c.catalog = catalog or None
            _catalog, _catalog_error = None, None
        if pin is not None:
            if isinstance(pin, dict):
                c.pin_map, c.pins = dict(pin), ()
            else:
                keys = pin.split(",") if isinstance(pin, str) else list(pin)
                c.pins, c.pin_map = tuple(k.strip() for k in keys if k.strip()), {}
        if autotune is not None:
            c.autotune = bool(autotune)
        if tune_cache is not None:
            c.tune_cache = tune_cache or None
            _tune_cache, _tune_cache_path = None, None
        if tune_iterations is not None:
            c.tune_iterations = int(tune_iterations)
        if allow_sm100a is not None:
            c.allow_sm100a = bool(allow_sm100a)
        if enabled is not None:
            c.enabled = bool(enabled)
        _decisions.clear()
        _problems.clear()
        _would.clear()
        if _catalog is not None:
            _check_pins(_catalog, c)


def _check_pins(cat, c):
    unknown = [k for k in list(c.pins) + list(c.pin_map.values()) if k not in cat._by_key]
    if unknown:
        raise ValueError(f"convcat: pinned kernel(s) not in the catalog {cat.path}: {', '.join(unknown)}")


def catalog():
    """The open catalog, or None (then catalog_error() says why)."""
    global _catalog, _catalog_error
    with _lock:
        if _catalog is None and _catalog_error is None:
            c = config()
            try:
                lib = convcat.load_library(c.library)
                _catalog = convcat.open_catalog(c.catalog, lib)
                _catalogs_kept.append(_catalog)
            except (ConvcatError, OSError) as e:
                _catalog_error = f"convcat is not available: {e}"
                return None
            _check_pins(_catalog, c)
        return _catalog


def catalog_error():
    return _catalog_error


# ---------------------------------------------------------------------------
# Geometry: a torch convolution in convcat's terms


@dataclasses.dataclass(frozen=True)
class Geometry:
    dims: int
    x_shape: tuple   # (N, C, *spatial)
    w_shape: tuple   # (K, C / groups, *filter)
    stride: tuple
    pad_lo: tuple
    pad_hi: tuple
    dilation: tuple
    groups: int

    def out_spatial(self):
        return tuple((i + lo + hi - d * (k - 1) - 1) // s + 1 for i, k, lo, hi, s, d in
                     zip(self.x_shape[2:], self.w_shape[2:], self.pad_lo, self.pad_hi, self.stride, self.dilation))

    def y_shape(self):
        return (self.x_shape[0], self.w_shape[0], *self.out_spatial())

    def symmetric(self):
        return self.pad_lo == self.pad_hi


def geometry(dims, x_shape, w_shape, stride, pad_lo, pad_hi, dilation, groups):
    return Geometry(dims, tuple(int(v) for v in x_shape), tuple(int(v) for v in w_shape), tuple(int(v) for v in stride),
                    tuple(int(v) for v in pad_lo), tuple(int(v) for v in pad_hi), tuple(int(v) for v in dilation),
                    int(groups))


def tf32_allowed():
    """Does PyTorch allow TF32 in cuDNN convolutions (torch.backends.cudnn.conv.fp32_precision where
    it exists, else torch.backends.cudnn.allow_tf32)?"""
    conv = getattr(torch.backends.cudnn, "conv", None)
    prec = getattr(conv, "fp32_precision", None) if conv is not None else None
    if prec == "tf32":
        return True
    if prec == "ieee":
        return False
    try:
        return bool(torch.backends.cudnn.allow_tf32)
    except RuntimeError:   # mixed legacy/new flags: the cudnn-wide precision decides
        return getattr(torch.backends.cudnn, "fp32_precision", "tf32") == "tf32"


def dtype_types(dtype, tf32):
    """(a, b, out) convcat types for tensors of `dtype`, or a reason they have none."""
    if dtype == torch.float16:
        return (_capi.CONVCAT_F16,) * 3
    if dtype == torch.bfloat16:
        return (_capi.CONVCAT_BF16,) * 3
    if dtype == torch.float32:
        if tf32:
            return (_capi.CONVCAT_TF32, _capi.CONVCAT_TF32, _capi.CONVCAT_F32)
        return ("f32 tensors with TF32 disallowed (torch.backends.cudnn.allow_tf32 / cudnn.conv.fp32_precision): "
                "convcat's f32 kernels compute in TF32")
    return f"dtype {str(dtype).replace('torch.', '')}: convcat runs f16, bf16 and f32 (as TF32) tensors"


def problem(op, geo, dtype, tf32):
    """(convcat Problem, its text) for op on geo, or (None, reason)."""
    key = (op, geo, dtype, tf32)
    got = _problems.get(key)
    if got is not None:
        return got
    types = dtype_types(dtype, tf32)
    if isinstance(types, str):
        got = (None, types)
    else:
        n, c = geo.x_shape[:2]
        k = geo.w_shape[0]
        sp, flt = list(geo.x_shape[2:]), list(geo.w_shape[2:])
        lead = 3 - geo.dims   # convcat's arrays are D, H, W: a 2D problem fills H, W
        full = lambda vals, fill: [fill] * lead + list(vals)   # noqa: E731
        ext, taps = full(sp, 1), full(flt, 1)
        p = convcat.make_problem(op=op, dims=geo.dims, n=n, d=ext[0], h=ext[1], w=ext[2], c=c, k=k, t=taps[0],
                                 r=taps[1], s=taps[2], pad_lo=full(geo.pad_lo, 0), pad_hi=full(geo.pad_hi, 0),
                                 stride=full(geo.stride, 1), dilation=full(geo.dilation, 1), groups=geo.groups)
        p.a_type, p.b_type, p.out_type = types
        got = (p, convcat.problem_text(p))
    _problems[key] = got
    return got


# ---------------------------------------------------------------------------
# Layouts


def _cl_format(dims):
    return torch.channels_last_3d if dims == 3 else torch.channels_last


def is_channels_last(t, dims):
    """Is t's memory channel-innermost and packed (convcat's N,D,H,W,C / K,T,R,S,C)?"""
    if dims == 1:
        return t.transpose(1, 2).is_contiguous()
    return t.is_contiguous(memory_format=_cl_format(dims))


def to_channels_last(t, dims):
    if dims == 1:
        return t.transpose(1, 2).contiguous().transpose(1, 2)
    return t.contiguous(memory_format=_cl_format(dims))


def cl_strides(shape):
    """Strides of a packed channel-innermost tensor of torch shape (N, C, *spatial)."""
    n, c, *sp = shape
    strides = [0] * len(shape)
    acc = c
    strides[1] = 1
    for i in range(len(sp) - 1, -1, -1):
        strides[2 + i] = acc
        acc *= sp[i]
    strides[0] = acc
    return strides


def empty_cl(shape, dtype, device):
    """A new packed channel-innermost tensor of torch shape (N, C, *spatial) (1D: (N, C, W) with
    strides (W*C, 1, C), the memory of (N, W, C))."""
    if len(shape) == 3:
        return torch.empty_strided(shape, cl_strides(shape), dtype=dtype, device=device)
    return torch.empty(shape, dtype=dtype, device=device, memory_format=_cl_format(len(shape) - 2))


def _aligned(t):
    return t is None or t.data_ptr() % 16 == 0


# ---------------------------------------------------------------------------
# What each layer did


@dataclasses.dataclass
class OpRecord:
    op: str
    problem: str = ""
    ran: str = ""           # "convcat", "cuDNN", "torch (cpu)" ...
    key: str = ""           # the kernel, when convcat ran it
    family: str = ""        # its kernel family: "tma", "gather" or "direct"
    reason: str = ""        # why it fell back
    note: str = ""          # pinned, autotuned, a pin ignored
    would: str = ""         # CPU tensors: what the sm90a catalog would do
    calls: int = 0
    copies: list = dataclasses.field(default_factory=list)


_records = {}   # layer tag -> {op: OpRecord}
_names = {}     # layer tag -> display name
_warned = set()
_tag_lock = threading.Lock()
_tag_count = [0]


def new_tag():
    with _tag_lock:
        _tag_count[0] += 1
        return f"convcat-layer-{_tag_count[0]}"


def set_name(tag, name):
    _names[tag] = name


def display_name(tag):
    return _names.get(tag) or tag or "convcat.torch.conv"


def records(tag):
    return _records.get(tag, {})


def _record(tag, op):
    layer = _records.get(tag)
    if layer is None:
        layer = _records[tag] = {}
    rec = layer.get(op)
    if rec is None:
        rec = layer[op] = OpRecord(op)
    return rec


def warn_once(key, message):
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, ConvcatTorchWarning, stacklevel=2)


def reset_warnings():
    _warned.clear()


def _note_copy(tag, op, what, rec):
    if what not in rec.copies:
        rec.copies.append(what)
    warn_once((tag, "copy", what),   # once per layer and tensor, whichever pass copied it first
              f"convcat: {display_name(tag)} ({op}): {what} is not channel-innermost (channels_last / "
              f"channels_last_3d, or (N, C, W) with strides (W*C, 1, C) in 1D): copied into that layout on "
              f"every call; keep tensors channels_last to avoid the copy (warned once per layer)")


def as_layout(t, dims, tag, op, what, rec):
    """t in convcat's layout, copied (and warned about once per layer) if it is not."""
    packed = is_channels_last(t, dims)
    if packed and _aligned(t):
        return t
    _note_copy(tag, op, what if not packed else f"{what} (not 16-byte aligned)", rec)
    out = to_channels_last(t, dims)
    return out if _aligned(out) else out.clone()


def weight_layout(w, dims):
    """The filter as K,T,R,S,C/groups memory (a copy if the parameter is not stored that way)."""
    if is_channels_last(w, dims) and _aligned(w):
        return w
    out = to_channels_last(w, dims)
    return out if _aligned(out) else out.clone()


# ---------------------------------------------------------------------------
# Decisions


@dataclasses.dataclass
class Decision:
    plan: object = None     # convcat.Plan, or None: fall back
    key: str = ""
    family: str = ""        # the kernel's family (tma, gather, direct)
    reason: str = ""
    note: str = ""
    problem: object = None
    text: str = ""


def arch_of(device):
    """(convcat arch name, SM count) of a CUDA device, or (None, reason)."""
    major, minor = torch.cuda.get_device_capability(device)
    props = torch.cuda.get_device_properties(device)
    if (major, minor) == (9, 0):
        return "sm90a", props.multi_processor_count
    if (major, minor) == (10, 0):
        if not config().allow_sm100a:
            return None, ("the device is sm_100, whose convcat kernels (sm100a) have never been executed on a GPU "
                          "(README): set CONVCAT_ALLOW_SM100A=1 or configure(allow_sm100a=True) to use them")
        return "sm100a", props.multi_processor_count
    return None, f"the device ({props.name}) is sm_{major}{minor}: the catalog's kernels are for sm_90 and sm_100"


def _capturing():
    try:
        return torch.cuda.is_current_stream_capturing()
    except Exception:
        return False


def would_run(op, geo, dtype, tf32):
    """For a CPU call: what the catalog would do with this problem on an sm90a device (text)."""
    cat = catalog()
    if cat is None:
        return _catalog_error
    p, text = problem(op, geo, dtype, tf32)
    if p is None:
        return f"falls back: {text}"
    q = cat.query(p, arch="sm90a")
    if not q.runnable:
        return f"falls back: {q.why_none(p, cat.entries)}"
    return f"runs {_pinned_order(cat, p, text, q)[0][0].key}"


def _pinned_order(cat, p, text, q):
    """[(candidate, note)] in the order plans are tried: a pin for this problem (dict) or the first
    pinned key that can run it (list), then the heuristic's ranking."""
    c = config()
    ranked = [(cand, "") for cand in q.runnable]
    want = c.pin_map.get(text)
    if want:
        hit = [cand for cand in q.runnable if cand.key == want]
        if hit:
            return [(hit[0], "pinned")] + [r for r in ranked if r[0].key != want]
        entry = cat.find(want)
        ok, why = cat.check(entry.index, p)
        return [(cand, f"pin {want} ignored: {why}") for cand, _ in ranked]
    for key in c.pins:
        hit = [cand for cand in q.runnable if cand.key == key]
        if hit:
            return [(hit[0], "pinned")] + [r for r in ranked if r[0].key != key]
    return ranked


def decide(op, geo, dtype, device, tune=None):
    """The Decision for op on geo with tensors of dtype on a CUDA device.  `tune(workspace_bytes) ->
    (convcat_tensors, what keeps them alive)` gives autotune the call's tensors (None: no autotune)."""
    tf32 = dtype == torch.float32 and tf32_allowed()
    dkey = (op, geo, dtype, tf32, device.index)
    d = _decisions.get(dkey)
    if d is not None:
        return d
    with _lock:
        d = _decisions.get(dkey)
        if d is not None:
            return d
        d, cache = _decide(op, geo, dtype, tf32, device, tune)
        if cache:
            _decisions[dkey] = d
        return d


def _decide(op, geo, dtype, tf32, device, tune):
    """(Decision, cache it?)"""
    c = config()
    if not c.enabled:
        return Decision(reason="convcat is disabled (CONVCAT_DISABLE / configure(enabled=False))"), True
    cat = catalog()
    if cat is None:
        return Decision(reason=_catalog_error), True
    p, text = problem(op, geo, dtype, tf32)
    if p is None:
        return Decision(reason=text), True
    arch, sms = arch_of(device)
    if arch is None:
        return Decision(reason=sms, problem=p, text=text), True
    q = cat.query(p, arch=arch, sm_count=sms)
    if not q.runnable:
        return Decision(reason=q.why_none(p, cat.entries), problem=p, text=text), True
    if _capturing():   # making a plan loads code and queries the device: never inside a capture
        return Decision(reason="first seen while a CUDA graph was being captured, when no plan is made: run the "
                               "model once before capturing", problem=p, text=text), False
    order = _pinned_order(cat, p, text, q)
    errors = []
    with torch.cuda.device(device):
        _cuda.ensure_context(device.index)
        if c.autotune and tune is not None and not any(note == "pinned" for _, note in order):
            try:
                return _autotune(cat, p, text, order, tune), True
            except ConvcatError as e:
                errors.append(f"autotune: {e}")
        for cand, note in order:
            if note.startswith("pin "):
                warn_once(("pin", text), f"convcat: {note} (problem {text})")
            try:
                plan = cat.plan(p, cand.index)
            except ConvcatError as e:   # device limits (shared memory, clusters) are checked here
                errors.append(str(e))
                continue
            return Decision(plan=plan, key=cand.key, family=cat.entries[cand.index].family, note=note, problem=p,
                            text=text), True
    return Decision(reason="no plan could be made: " + "; ".join(errors), problem=p, text=text), True


def _tune_cache_for(cat):
    global _tune_cache, _tune_cache_path
    path = config().tune_cache
    if not path:
        return None
    if _tune_cache is None or _tune_cache_path != path:
        _tune_cache = convcat.TuneCache(cat.lib, path)
        _tune_cache_path = path
        if _tune_cache.warning:
            warnings.warn(f"convcat: tune cache {path}: {_tune_cache.warning}", ConvcatTorchWarning)
    return _tune_cache


def _autotune(cat, p, text, order, tune):
    """Time every runnable kernel on the call's tensors (or take the cache's winner) and plan it."""
    plans = []
    try:
        for cand, _ in order:   # the largest workspace any of them needs
            try:
                plans.append(cat.plan(p, cand.index))
            except ConvcatError:
                pass
        ws = max((pl.workspace_bytes for pl in plans), default=0)
    finally:
        for pl in plans:
            pl.destroy()
    tensors, keep = tune(ws)
    cache = _tune_cache_for(cat)
    before = cache.count() if cache else 0
    stream = torch.cuda.current_stream().cuda_stream
    entry, ms = cat.autotune(p, tensors, stream, config().tune_iterations, cache)
    del keep
    if cache is not None and cache.count() != before:
        cache.save()
    plan = cat.plan(p, entry.index)
    return Decision(plan=plan, key=entry.key, family=entry.family, note=f"autotuned ({ms * 1e3:.1f} us)", problem=p,
                    text=text)


# ---------------------------------------------------------------------------
# Running an op: convcat where a decision has a plan, else the fallback; recorded either way


def _launch(plan, tensors, device):
    if torch.cuda.current_device() != device.index:
        with torch.cuda.device(device):
            _cuda.ensure_context(device.index)
            plan.run(tensors, torch.cuda.current_stream(device).cuda_stream)
    else:
        _cuda.ensure_context(device.index)
        plan.run(tensors, torch.cuda.current_stream(device).cuda_stream)


def _fall_back(tag, op, rec, reason, device):
    rec.ran = "cuDNN" if device.type == "cuda" else f"torch ({device.type})"
    rec.reason, rec.key, rec.family, rec.note = reason, "", "", ""
    if device.type == "cuda":
        warn_once((tag, op, "fallback", reason),
                  f"convcat: {display_name(tag)} ({op}, {rec.problem}) falls back to cuDNN: {reason} (warned once "
                  f"per layer; convcat.torch.report(model) lists every layer)")


def _start(tag, op, geo, dtype, device):
    rec = _record(tag, op)
    rec.calls += 1
    tf32 = dtype == torch.float32 and tf32_allowed()
    p, text = problem(op, geo, dtype, tf32)
    rec.problem = text if p is not None else f"{op} {geo.dims}D {str(dtype).replace('torch.', '')} {geo.x_shape}"
    if device.type != "cuda":
        rec.would = _would.get((op, geo, dtype, tf32)) or _would.setdefault((op, geo, dtype, tf32),
                                                                            would_run(op, geo, dtype, tf32))
    return rec


def _run(op, geo, dtype, device, tag, rec, tensors):
    """Run op on convcat where its decision has a plan (`tensors(workspace_bytes)` gives the call's
    convcat_tensors and what keeps its workspace alive) and record it; False, with the reason
    recorded, where the caller must fall back."""
    d = decide(op, geo, dtype, device, tensors)
    if d.plan is None:
        _fall_back(tag, op, rec, d.reason, device)
        return False
    t, ws = tensors(d.plan.workspace_bytes)
    try:
        _launch(d.plan, t, device)
    except ConvcatError as e:
        _fall_back(tag, op, rec, f"convcat_plan_run failed: {e}", device)
        return False
    rec.ran, rec.key, rec.family, rec.reason, rec.note = "convcat", d.key, d.family, "", d.note
    return True


def fprop(x, w, bias, residual, geo, act, alpha, beta, tag):
    dims = geo.dims
    rec = _start(tag, "fprop", geo, x.dtype, x.device)
    x = as_layout(x, dims, tag, "fprop", "x", rec)
    w = weight_layout(w, dims)
    c = None
    if residual is not None and beta != 0.0:
        c = as_layout(residual.to(x.dtype), dims, tag, "fprop", "the residual", rec)
    if bias is not None:
        bias = bias.to(x.dtype).contiguous()
        if not _aligned(bias):
            bias = bias.clone()
    if x.device.type != "cuda":
        _fall_back(tag, "fprop", rec, f"tensors on {x.device.type}: convcat runs CUDA tensors", x.device)
        return fprop_fallback(x, w, bias, c, geo, act, alpha, beta)
    if x.dtype != w.dtype or (c is not None and c.shape != geo.y_shape()):
        _fall_back(tag, "fprop", rec, "mixed dtypes or a residual of another shape", x.device)
        return fprop_fallback(x, w, bias, c, geo, act, alpha, beta)
    y = empty_cl(geo.y_shape(), x.dtype, x.device)

    def tensors(ws_bytes):
        ws = torch.empty(ws_bytes, dtype=torch.uint8, device=x.device) if ws_bytes else None
        t = convcat.make_tensors(x=x.data_ptr(), w=w.data_ptr(), y=y.data_ptr(), c=c.data_ptr() if c is not None else None,
                                 alpha=alpha, beta=beta if c is not None else 0.0,
                                 bias=bias.data_ptr() if bias is not None else None, activation=act,
                                 workspace=ws.data_ptr() if ws is not None else None, workspace_bytes=ws_bytes)
        return t, ws

    if _run("fprop", geo, x.dtype, x.device, tag, rec, tensors):
        return y
    return fprop_fallback(x, w, bias, c, geo, act, alpha, beta)


def dgrad(dy, w, geo, tag):
    dims = geo.dims
    rec = _start(tag, "dgrad", geo, dy.dtype, dy.device)
    dy = as_layout(dy, dims, tag, "dgrad", "dy", rec)
    w = weight_layout(w, dims)
    if dy.device.type != "cuda" or dy.dtype != w.dtype:
        why = f"tensors on {dy.device.type}: convcat runs CUDA tensors" if dy.device.type != "cuda" else "mixed dtypes"
        _fall_back(tag, "dgrad", rec, why, dy.device)
        return dgrad_fallback(dy, w, geo)
    dx = empty_cl(geo.x_shape, dy.dtype, dy.device)

    def tensors(ws_bytes):
        ws = torch.empty(ws_bytes, dtype=torch.uint8, device=dy.device) if ws_bytes else None
        return convcat.make_tensors(x=dx.data_ptr(), w=w.data_ptr(), y=dy.data_ptr(),
                                    workspace=ws.data_ptr() if ws is not None else None, workspace_bytes=ws_bytes), ws

    if _run("dgrad", geo, dy.dtype, dy.device, tag, rec, tensors):
        return dx
    return dgrad_fallback(dy, w, geo)


def wgrad(dy, x, geo, tag):
    dims = geo.dims
    rec = _start(tag, "wgrad", geo, dy.dtype, dy.device)
    dy = as_layout(dy, dims, tag, "wgrad", "dy", rec)
    x = as_layout(x, dims, tag, "wgrad", "x", rec)
    if dy.device.type != "cuda" or dy.dtype != x.dtype:
        why = f"tensors on {dy.device.type}: convcat runs CUDA tensors" if dy.device.type != "cuda" else "mixed dtypes"
        _fall_back(tag, "wgrad", rec, why, dy.device)
        return wgrad_fallback(dy, x, geo)
    dw = empty_cl(geo.w_shape, dy.dtype, dy.device)

    def tensors(ws_bytes):
        ws = torch.empty(ws_bytes, dtype=torch.uint8, device=dy.device) if ws_bytes else None
        return convcat.make_tensors(x=x.data_ptr(), w=dw.data_ptr(), y=dy.data_ptr(),
                                    workspace=ws.data_ptr() if ws is not None else None, workspace_bytes=ws_bytes), ws

    if _run("wgrad", geo, dy.dtype, dy.device, tag, rec, tensors):
        return dw
    return wgrad_fallback(dy, x, geo)


# ---------------------------------------------------------------------------
# Fallbacks: PyTorch's own convolution (cuDNN on CUDA), the output in convcat's layout


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _pairs(geo):
    """F.pad's argument for geo's padding (last axis first)."""
    out = []
    for lo, hi in zip(reversed(geo.pad_lo), reversed(geo.pad_hi)):
        out += [lo, hi]
    return out


def _restride(t, shape):
    if list(t.stride()) == cl_strides(shape) or t.numel() == 0:
        return t
    out = empty_cl(shape, t.dtype, t.device)
    out.copy_(t)
    return out


def apply_activation(y, act):
    if act == 1:
        return torch.relu(y)
    if act == 2:
        return F.gelu(y)
    if act == 3:
        return F.silu(y)
    return y


def fprop_fallback(x, w, bias, c, geo, act, alpha, beta):
    conv = _CONV[geo.dims]
    if not geo.symmetric():
        x, pad = F.pad(x, _pairs(geo)), (0,) * geo.dims
    else:
        pad = geo.pad_lo
    plain = alpha == 1.0 and c is None and act == 0
    y = conv(x, w, bias if alpha == 1.0 else None, geo.stride, pad, geo.dilation, geo.groups)
    if not plain:
        if alpha != 1.0:
            y = y * alpha
            if bias is not None:
                y = y + bias.view(1, -1, *([1] * geo.dims))
        if c is not None and beta != 0.0:
            y = y + (c if beta == 1.0 else c * beta)
        y = apply_activation(y, act)
    return _restride(y, geo.y_shape())


def dgrad_fallback(dy, w, geo):
    shape = list(geo.x_shape)
    if not geo.symmetric():
        for i in range(geo.dims):
            shape[2 + i] += geo.pad_lo[i] + geo.pad_hi[i]
        pad = (0,) * geo.dims
    else:
        pad = geo.pad_lo
    x_dummy = dy.new_empty(1).expand(shape)
    dx = torch.ops.aten.convolution_backward(dy, x_dummy, w, None, list(geo.stride), list(pad), list(geo.dilation),
                                             False, [0] * geo.dims, geo.groups, [True, False, False])[0]
    if not geo.symmetric():
        for i in range(geo.dims):
            dx = dx.narrow(2 + i, geo.pad_lo[i], geo.x_shape[2 + i])
    return _restride(dx, geo.x_shape)


def wgrad_fallback(dy, x, geo):
    if not geo.symmetric():
        x, pad = F.pad(x, _pairs(geo)), (0,) * geo.dims
    else:
        pad = geo.pad_lo
    w_dummy = dy.new_empty(1).expand(geo.w_shape)
    dw = torch.ops.aten.convolution_backward(dy, x, w_dummy, None, list(geo.stride), list(pad), list(geo.dilation),
                                             False, [0] * geo.dims, geo.groups, [False, True, False])[1]
    return _restride(dw, geo.w_shape)
