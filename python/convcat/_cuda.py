"""The few CUDA driver calls the torch integration needs, through ctypes (libcuda.so.1).

libconvcat plans and launches on the current CUDA context of the calling thread.  PyTorch runs
backward passes on its own worker threads, where the device's primary context need not be
current for the driver API yet (the runtime makes it current lazily); `ensure_context` makes the
primary context of a device current on the calling thread when it is not.
"""
import ctypes
import threading

_lock = threading.Lock()
_driver = None
_primary = {}   # device ordinal -> CUcontext (retained once, never released: it lives as long as the process)


def driver():
    """libcuda.so.1 with cuInit done; OSError if it cannot be loaded."""
    global _driver
    with _lock:
        if _driver is None:
            lib = ctypes.CDLL("libcuda.so.1")
            for name, args in (("cuInit", [ctypes.c_uint]), ("cuCtxGetCurrent", [ctypes.POINTER(ctypes.c_void_p)]),
                               ("cuCtxGetDevice", [ctypes.POINTER(ctypes.c_int)]),
                               ("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int]),
                               ("cuDevicePrimaryCtxRetain", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]),
                               ("cuCtxSetCurrent", [ctypes.c_void_p])):
                fn = getattr(lib, name)
                fn.argtypes, fn.restype = args, ctypes.c_int
            r = lib.cuInit(0)
            if r != 0:
                raise OSError(f"cuInit failed ({r})")
            _driver = lib
        return _driver


def _check(r, what):
    if r != 0:
        raise OSError(f"{what} failed (CUresult {r})")


def _primary_context(ordinal):
    lib = driver()   # takes _lock itself: before, not inside
    with _lock:
        primary = _primary.get(ordinal)
        if primary is None:
            dev = ctypes.c_int()
            _check(lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
            primary = ctypes.c_void_p()
            _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), dev.value), "cuDevicePrimaryCtxRetain")
            _primary[ordinal] = primary
        return primary


def ensure_context(ordinal):
    """Make device `ordinal`'s primary context current on this thread unless a context of that
    device already is."""
    lib = driver()
    primary = _primary.get(ordinal)
    if primary is None:
        primary = _primary_context(ordinal)
    ctx = ctypes.c_void_p()
    _check(lib.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    if ctx.value == primary.value:   # the common case: one driver call
        return
    if ctx.value:
        dev = ctypes.c_int()
        if lib.cuCtxGetDevice(ctypes.byref(dev)) == 0 and dev.value == ordinal:
            return
    _check(lib.cuCtxSetCurrent(primary), "cuCtxSetCurrent")
