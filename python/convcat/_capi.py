"""The ctypes mirror of runtime/include/convcat.h: every struct, enum and function signature.

This is the only module that spells the C layout.  `convcat.abicheck` compiles a small C program
against convcat.h and compares it with what is written here (sizeof, offsetof of every field, the
field lists, the enum values, the function prototypes), so that a header change fails a test
instead of corrupting memory at run time.  When convcat.h changes, change this file and run
`python3 -m convcat.abicheck`.

Buffers the library writes into (entry info, plan info, query rows, set query rows, autotune
results, tune options) are allocated with spare bytes behind the mirrored struct (see `padded`),
so a library built from a newer header whose struct grew at the end cannot write past a stale
mirror's buffer before the check catches it.

HEADER_VERSION is the convcat.h release this file mirrors (CONVCAT_VERSION); the library says its
own with convcat_version().
"""
import ctypes

HEADER_VERSION = "0.2.0"   # CONVCAT_VERSION of the convcat.h mirrored here

# ---------------------------------------------------------------------------
# Enums (values as in convcat.h; abicheck compares them with the C compiler's)

CONVCAT_OK = 0
CONVCAT_ERR_INVALID_ARGUMENT = -1
CONVCAT_ERR_IO = -2
CONVCAT_ERR_CORRUPT = -3
CONVCAT_ERR_VERSION = -4
CONVCAT_ERR_NOT_FOUND = -5
CONVCAT_ERR_UNSUPPORTED = -6
CONVCAT_ERR_NO_DRIVER = -7
CONVCAT_ERR_NO_DEVICE = -8
CONVCAT_ERR_CUDA = -9
CONVCAT_ERR_NO_MEMORY = -10
CONVCAT_ERR_MISALIGNED = -11

CONVCAT_FPROP = 0
CONVCAT_DGRAD = 1
CONVCAT_WGRAD = 2

CONVCAT_F16 = 1
CONVCAT_BF16 = 2
CONVCAT_TF32 = 3
CONVCAT_F32 = 4
CONVCAT_E4M3 = 5
CONVCAT_E5M2 = 6

CONVCAT_ARCH_ANY = 0
CONVCAT_ARCH_SM90A = 1
CONVCAT_ARCH_SM100A = 2

CONVCAT_COOP = 1
CONVCAT_PINGPONG = 2
CONVCAT_1SM = 3
CONVCAT_2SM = 4
CONVCAT_SWAP = 5
CONVCAT_HALO = 6
CONVCAT_GATHER = 7
CONVCAT_DIRECT = 8
CONVCAT_GROUPED = 9

CONVCAT_FAMILY_TMA = 1
CONVCAT_FAMILY_GATHER = 2
CONVCAT_FAMILY_DIRECT = 3

CONVCAT_CROSS_CORRELATION = 0
CONVCAT_CONVOLUTION = 1

CONVCAT_ACT_NONE = 0
CONVCAT_ACT_RELU = 1
CONVCAT_ACT_GELU = 2
CONVCAT_ACT_SILU = 3

CONVCAT_SET_UNIQUE = 0   # convcat_catalog_set_add flags (macros of unsigned values)
CONVCAT_SET_SHADOW = 1


def _table(names):
    g = globals()
    return {n: g[n] for n in names}


STATUS = _table(["CONVCAT_OK", "CONVCAT_ERR_INVALID_ARGUMENT", "CONVCAT_ERR_IO", "CONVCAT_ERR_CORRUPT",
                 "CONVCAT_ERR_VERSION", "CONVCAT_ERR_NOT_FOUND", "CONVCAT_ERR_UNSUPPORTED", "CONVCAT_ERR_NO_DRIVER",
                 "CONVCAT_ERR_NO_DEVICE", "CONVCAT_ERR_CUDA", "CONVCAT_ERR_NO_MEMORY", "CONVCAT_ERR_MISALIGNED"])
OPS = _table(["CONVCAT_FPROP", "CONVCAT_DGRAD", "CONVCAT_WGRAD"])
DTYPES = _table(["CONVCAT_F16", "CONVCAT_BF16", "CONVCAT_TF32", "CONVCAT_F32", "CONVCAT_E4M3", "CONVCAT_E5M2"])
ARCHES = _table(["CONVCAT_ARCH_ANY", "CONVCAT_ARCH_SM90A", "CONVCAT_ARCH_SM100A"])
SCHEDULES = _table(["CONVCAT_COOP", "CONVCAT_PINGPONG", "CONVCAT_1SM", "CONVCAT_2SM", "CONVCAT_SWAP", "CONVCAT_HALO",
                    "CONVCAT_GATHER", "CONVCAT_DIRECT", "CONVCAT_GROUPED"])
FAMILIES = _table(["CONVCAT_FAMILY_TMA", "CONVCAT_FAMILY_GATHER", "CONVCAT_FAMILY_DIRECT"])
MODES = _table(["CONVCAT_CROSS_CORRELATION", "CONVCAT_CONVOLUTION"])
ACTIVATIONS = _table(["CONVCAT_ACT_NONE", "CONVCAT_ACT_RELU", "CONVCAT_ACT_GELU", "CONVCAT_ACT_SILU"])
SET_FLAGS = _table(["CONVCAT_SET_UNIQUE", "CONVCAT_SET_SHADOW"])
ENUMS = {**STATUS, **OPS, **DTYPES, **ARCHES, **SCHEDULES, **FAMILIES, **MODES, **ACTIVATIONS, **SET_FLAGS}

CONVCAT_AUTO = ctypes.c_size_t(-1).value   # (size_t)-1

# The names the library uses in keys (convcat_op_name etc.); abicheck/tests compare with the C ones.
OP_NAMES = {CONVCAT_FPROP: "fprop", CONVCAT_DGRAD: "dgrad", CONVCAT_WGRAD: "wgrad"}
DTYPE_NAMES = {CONVCAT_F16: "f16", CONVCAT_BF16: "bf16", CONVCAT_TF32: "tf32", CONVCAT_F32: "f32",
               CONVCAT_E4M3: "e4m3", CONVCAT_E5M2: "e5m2"}
ARCH_NAMES = {CONVCAT_ARCH_SM90A: "sm90a", CONVCAT_ARCH_SM100A: "sm100a"}
SCHEDULE_NAMES = {CONVCAT_COOP: "coop", CONVCAT_PINGPONG: "pingpong", CONVCAT_1SM: "1sm", CONVCAT_2SM: "2sm",
                  CONVCAT_SWAP: "swap", CONVCAT_HALO: "halo", CONVCAT_GATHER: "gather", CONVCAT_DIRECT: "direct",
                  CONVCAT_GROUPED: "grouped"}
# Kernel families (convcat_family; the header has no name function: these are the convcat command's).
FAMILY_NAMES = {CONVCAT_FAMILY_TMA: "tma", CONVCAT_FAMILY_GATHER: "gather", CONVCAT_FAMILY_DIRECT: "direct"}
# convcat_entry_info.groups_mode (an int in the header, not an enum): the groups a kernel takes.
GROUPS_ONE, GROUPS_WGRAD_DIAGONAL, GROUPS_ANY, GROUPS_DEPTHWISE, GROUPS_PACKED = 0, 1, 2, 3, 4
GROUPS_MODE_NAMES = {GROUPS_ONE: "1", GROUPS_WGRAD_DIAGONAL: "wgrad K == C", GROUPS_ANY: "any",
                     GROUPS_DEPTHWISE: "depthwise", GROUPS_PACKED: "fprop, whole groups a tile column"}
ACTIVATION_NAMES = {CONVCAT_ACT_NONE: "none", CONVCAT_ACT_RELU: "relu", CONVCAT_ACT_GELU: "gelu",
                    CONVCAT_ACT_SILU: "silu"}

# ---------------------------------------------------------------------------
# Structs: field names and order exactly as in convcat.h (abicheck parses the header and compares)

c_int3 = ctypes.c_int * 3
c_enum = ctypes.c_int   # every convcat enum is int-sized (abicheck checks sizeof of each struct field)


class Problem(ctypes.Structure):
    """convcat_problem"""
    _fields_ = [("op", c_enum), ("dims", ctypes.c_int),
                ("n", ctypes.c_int), ("d", ctypes.c_int), ("h", ctypes.c_int), ("w", ctypes.c_int),
                ("c", ctypes.c_int), ("k", ctypes.c_int), ("t", ctypes.c_int), ("r", ctypes.c_int),
                ("s", ctypes.c_int), ("pad_lo", c_int3), ("pad_hi", c_int3), ("stride", c_int3),
                ("dilation", c_int3), ("groups", ctypes.c_int), ("mode", c_enum),
                ("a_type", c_enum), ("b_type", c_enum), ("out_type", c_enum)]


class EntryInfo(ctypes.Structure):
    """convcat_entry_info"""
    _fields_ = [("key", ctypes.c_char_p), ("arch", c_enum), ("op", c_enum), ("dims", ctypes.c_int),
                ("a_type", c_enum), ("b_type", c_enum), ("acc_type", c_enum), ("out_type", c_enum),
                ("tile_m", ctypes.c_int), ("tile_n", ctypes.c_int), ("tile_k", ctypes.c_int),
                ("stages", ctypes.c_int), ("cluster_m", ctypes.c_int), ("cluster_n", ctypes.c_int),
                ("schedule", c_enum), ("threads", ctypes.c_int), ("smem_bytes", ctypes.c_int),
                ("registers", ctypes.c_int), ("code_bytes", ctypes.c_size_t),
                ("fallback_m", ctypes.c_int), ("fallback_n", ctypes.c_int),
                ("family", c_enum), ("verified", ctypes.c_int), ("groups_mode", ctypes.c_int)]


REASON_BYTES = 192


class Candidate(ctypes.Structure):
    """convcat_candidate"""
    _fields_ = [("index", ctypes.c_size_t), ("ok", ctypes.c_int), ("predicted_us", ctypes.c_double),
                ("reason", ctypes.c_char * REASON_BYTES)]


class PlanInfo(ctypes.Structure):
    """convcat_plan_info"""
    _fields_ = [("index", ctypes.c_size_t), ("grid", ctypes.c_int), ("cluster", ctypes.c_int),
                ("threads", ctypes.c_int), ("smem_bytes", ctypes.c_int), ("workspace_bytes", ctypes.c_size_t),
                ("groups_per_cta", ctypes.c_int), ("splits", ctypes.c_int), ("split_sums", ctypes.c_int)]


class Tensors(ctypes.Structure):
    """convcat_tensors"""
    _fields_ = [("x", ctypes.c_void_p), ("w", ctypes.c_void_p), ("y", ctypes.c_void_p), ("c", ctypes.c_void_p),
                ("alpha", ctypes.c_float), ("beta", ctypes.c_float),
                ("bias", ctypes.c_void_p), ("activation", c_enum),
                ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t)]


class SetCandidate(ctypes.Structure):
    """convcat_set_candidate"""
    _fields_ = [("catalog", ctypes.c_void_p), ("position", ctypes.c_size_t), ("candidate", Candidate)]


class TuneOptions(ctypes.Structure):
    """convcat_tune_options"""
    _fields_ = [("iterations", ctypes.c_int), ("top_k", ctypes.c_size_t), ("cache", ctypes.c_void_p)]


class TuneResult(ctypes.Structure):
    """convcat_tune_result"""
    _fields_ = [("index", ctypes.c_size_t), ("status", c_enum), ("ms", ctypes.c_double),
                ("predicted_us", ctypes.c_double), ("workspace_bytes", ctypes.c_size_t),
                ("reason", ctypes.c_char * REASON_BYTES)]


STRUCTS = {Problem: "convcat_problem", EntryInfo: "convcat_entry_info", Candidate: "convcat_candidate",
           PlanInfo: "convcat_plan_info", Tensors: "convcat_tensors", SetCandidate: "convcat_set_candidate",
           TuneOptions: "convcat_tune_options", TuneResult: "convcat_tune_result"}

# convcat_log_callback: void (*)(void *user_data, const char *line)
LogCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)

SPARE_BYTES = 256   # behind every struct the library writes (see the module docstring)


def padded(cls, count=1):
    """A zeroed buffer of `count` structs of `cls` with SPARE_BYTES behind it; returns (buffer, array)
    where array is a ctypes array of `cls` over the buffer's start."""
    buf = ctypes.create_string_buffer(ctypes.sizeof(cls) * count + SPARE_BYTES)
    return buf, (cls * count).from_buffer(buf)


# ---------------------------------------------------------------------------
# Functions: name -> (restype, argtypes, the C prototype abicheck compares with convcat.h's)

_P, _S, _I, _V = ctypes.POINTER, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p
_CHARP = ctypes.c_char_p

FUNCTIONS = {
    "convcat_problem_init": (None, [_P(Problem)], "void (*)(convcat_problem *)"),
    "convcat_problem_output": (_I, [_P(Problem), _P(_I), _P(_I), _P(_I)],
                               "convcat_status (*)(const convcat_problem *, int *, int *, int *)"),
    "convcat_problem_flops": (ctypes.c_double, [_P(Problem)], "double (*)(const convcat_problem *)"),
    "convcat_problem_folded": (_I, [_P(Problem), _P(Problem)],
                               "convcat_status (*)(const convcat_problem *, convcat_problem *)"),
    "convcat_open": (_I, [_CHARP, _P(_V)], "convcat_status (*)(const char *, convcat_catalog **)"),
    "convcat_open_memory": (_I, [_V, _S, _P(_V)],
                            "convcat_status (*)(const void *, size_t, convcat_catalog **)"),
    "convcat_close": (None, [_V], "void (*)(convcat_catalog *)"),
    "convcat_count": (_S, [_V], "size_t (*)(const convcat_catalog *)"),
    "convcat_entry_info_get": (_I, [_V, _S, _V],
                               "convcat_status (*)(const convcat_catalog *, size_t, convcat_entry_info *)"),
    "convcat_find": (_I, [_V, _CHARP, _P(_S)],
                     "convcat_status (*)(const convcat_catalog *, const char *, size_t *)"),
    "convcat_check": (_I, [_V, _S, _P(Problem), _CHARP, _S],
                      "convcat_status (*)(const convcat_catalog *, size_t, const convcat_problem *, char *, size_t)"),
    "convcat_query": (_I, [_V, _P(Problem), _I, _I, _V, _S, _P(_S), _P(_S)],
                      "convcat_status (*)(const convcat_catalog *, const convcat_problem *, convcat_arch, int, "
                      "convcat_candidate *, size_t, size_t *, size_t *)"),
    "convcat_plan_create": (_I, [_V, _P(Problem), _S, _P(_V)],
                            "convcat_status (*)(const convcat_catalog *, const convcat_problem *, size_t, "
                            "convcat_plan **)"),
    "convcat_plan_info_get": (_I, [_V, _V], "convcat_status (*)(const convcat_plan *, convcat_plan_info *)"),
    "convcat_plan_destroy": (None, [_V], "void (*)(convcat_plan *)"),
    "convcat_plan_run": (_I, [_V, _P(Tensors), _V],
                         "convcat_status (*)(const convcat_plan *, const convcat_tensors *, void *)"),
    "convcat_status_string": (_CHARP, [_I], "const char *(*)(convcat_status)"),
    "convcat_last_error": (_CHARP, [], "const char *(*)(void)"),
    "convcat_last_cuda_error": (_I, [], "int (*)(void)"),
    "convcat_dtype_name": (_CHARP, [_I], "const char *(*)(convcat_dtype)"),
    "convcat_op_name": (_CHARP, [_I], "const char *(*)(convcat_op)"),
    "convcat_arch_name": (_CHARP, [_I], "const char *(*)(convcat_arch)"),
    "convcat_schedule_name": (_CHARP, [_I], "const char *(*)(convcat_schedule)"),
    "convcat_tune_cache_load": (_I, [_CHARP, _P(_V), _CHARP, _S],
                                "convcat_status (*)(const char *, convcat_tune_cache **, char *, size_t)"),
    "convcat_tune_cache_save": (_I, [_V, _CHARP], "convcat_status (*)(const convcat_tune_cache *, const char *)"),
    "convcat_tune_cache_count": (_S, [_V], "size_t (*)(const convcat_tune_cache *)"),
    "convcat_tune_cache_free": (None, [_V], "void (*)(convcat_tune_cache *)"),
    "convcat_autotune": (_I, [_V, _P(Problem), _P(Tensors), _V, _I, _V, _P(_S), _P(ctypes.c_double)],
                         "convcat_status (*)(const convcat_catalog *, const convcat_problem *, "
                         "const convcat_tensors *, void *, int, convcat_tune_cache *, size_t *, double *)"),
    "convcat_device_arch": (_I, [_P(_I), _P(_I)], "convcat_status (*)(convcat_arch *, int *)"),
    # versions
    "convcat_version": (_CHARP, [], "const char *(*)(void)"),
    "convcat_catalog_format_version": (ctypes.c_uint, [], "unsigned (*)(void)"),
    "convcat_kernel_abi_version": (ctypes.c_uint, [], "unsigned (*)(void)"),
    "convcat_catalog_id": (ctypes.c_uint32, [_V], "uint32_t (*)(const convcat_catalog *)"),
    # finding the catalog
    "convcat_default_catalog_path": (_I, [_CHARP, _S], "convcat_status (*)(char *, size_t)"),
    "convcat_open_default": (_I, [_P(_V)], "convcat_status (*)(convcat_catalog **)"),
    # catalog sets
    "convcat_catalog_set_create": (_I, [_P(_V)], "convcat_status (*)(convcat_catalog_set **)"),
    "convcat_catalog_set_destroy": (None, [_V], "void (*)(convcat_catalog_set *)"),
    "convcat_catalog_set_add": (_I, [_V, _V, ctypes.c_uint],
                                "convcat_status (*)(convcat_catalog_set *, const convcat_catalog *, unsigned)"),
    "convcat_catalog_set_size": (_S, [_V], "size_t (*)(const convcat_catalog_set *)"),
    "convcat_catalog_set_at": (_V, [_V, _S], "const convcat_catalog *(*)(const convcat_catalog_set *, size_t)"),
    "convcat_catalog_set_count": (_S, [_V], "size_t (*)(const convcat_catalog_set *)"),
    "convcat_catalog_set_find": (_I, [_V, _CHARP, _P(_V), _P(_S)],
                                 "convcat_status (*)(const convcat_catalog_set *, const char *, "
                                 "const convcat_catalog **, size_t *)"),
    "convcat_query_set": (_I, [_V, _P(Problem), _I, _I, _V, _S, _P(_S), _P(_S)],
                          "convcat_status (*)(const convcat_catalog_set *, const convcat_problem *, convcat_arch, int, "
                          "convcat_set_candidate *, size_t, size_t *, size_t *)"),
    "convcat_plan_create_set": (_I, [_V, _P(Problem), _P(_V), _P(_V), _P(_S)],
                                "convcat_status (*)(const convcat_catalog_set *, const convcat_problem *, "
                                "convcat_plan **, const convcat_catalog **, size_t *)"),
    # autotuning with every candidate's result
    "convcat_tune_options_init": (None, [_V], "void (*)(convcat_tune_options *)"),
    "convcat_autotune_results": (_I, [_V, _P(Problem), _P(Tensors), _V, _V, _V, _S, _P(_S)],
                                 "convcat_status (*)(const convcat_catalog *, const convcat_problem *, "
                                 "const convcat_tensors *, void *, const convcat_tune_options *, "
                                 "convcat_tune_result *, size_t, size_t *)"),
    # the opt-in log
    "convcat_set_log_callback": (None, [LogCallback, _V], "void (*)(convcat_log_callback, void *)"),
}

# Functions a library may or may not export: bound when present, checked when the header has them.
# Empty for this header (every function of convcat.h 0.2.0 is required above); a function added by a
# later header that the binding can do without goes here first.
OPTIONAL_FUNCTIONS = {}


def bind(lib):
    """Set restype/argtypes on a ctypes.CDLL for every function it exports; returns the names of the
    required functions it lacks (an empty list for a complete library)."""
    missing = []
    for table, required in ((FUNCTIONS, True), (OPTIONAL_FUNCTIONS, False)):
        for name, (res, args, _) in table.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                if required:
                    missing.append(name)
                continue
            fn.restype = res
            fn.argtypes = args
    return missing
