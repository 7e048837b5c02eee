"""convcat: a catalog of precompiled implicit-GEMM convolution kernels (NVIDIA sm_90a / sm_100a),
bound from Python with ctypes (no compiler needed).

    import convcat
    cat = convcat.open_catalog()                 # or open_catalog("path/to/convcat.catalog")
    p = convcat.make_problem(op="fprop", dims=2, n=32, h=56, w=56, c=64, k=64, r=3, s=3,
                             pad_lo=(0, 1, 1), dtype="bf16")
    q = cat.query(p, arch="sm90a")               # no GPU needed
    q.runnable[0].key, q.runnable[0].family, [c.reason for c in q.refused]
    plan = cat.plan(p)                           # on the current CUDA context's device
    plan.run(convcat.make_tensors(x=x_ptr, w=w_ptr, y=y_ptr), stream)
    cat.autotune_results(p, tensors, stream)     # every candidate's time, or why it was skipped
    convcat.CatalogSet([mine, cat], shadow=True).query(p)   # several catalogs as one

Kernel families (Entry.family): "tma" (implicit GEMM, channels multiples of 8, groups 1), "gather"
(implicit GEMM for any groups and channel counts: C = 3 stems, grouped convolutions) and "direct"
(depthwise).  cat.lib.version() is the library's release, cat.id its catalog's identity.

The library is found by find_library() ($CONVCAT_LIBRARY, the build tree's
build/runtime/libconvcat.so, the package, the system loader) and the catalog by open_catalog()
(convcat_open_default(): $CONVCAT_CATALOG, else the installed share/convcat/convcat.catalog; where
the library finds none, the package, the build tree, the installed ones of other prefixes).
PyTorch integration: convcat.torch.
"""
from ._capi import (CONVCAT_ACT_GELU, CONVCAT_ACT_NONE, CONVCAT_ACT_RELU, CONVCAT_ACT_SILU,  # noqa: F401
                    CONVCAT_AUTO, CONVCAT_DGRAD, CONVCAT_FPROP, CONVCAT_WGRAD)
# convcat_status values, to compare with ConvcatError.status (e.g. CONVCAT_ERR_NO_DEVICE: the device
# cannot run the kernel, a limit convcat_plan_create checks and convcat_query does not).
from ._capi import (CONVCAT_ERR_CORRUPT, CONVCAT_ERR_CUDA, CONVCAT_ERR_INVALID_ARGUMENT, CONVCAT_ERR_IO,  # noqa: F401
                    CONVCAT_ERR_MISALIGNED, CONVCAT_ERR_NO_DEVICE, CONVCAT_ERR_NO_DRIVER, CONVCAT_ERR_NO_MEMORY,
                    CONVCAT_ERR_NOT_FOUND, CONVCAT_ERR_UNSUPPORTED, CONVCAT_ERR_VERSION, CONVCAT_OK)
from .binding import (AutotuneError, Candidate, Catalog, CatalogSet, ConvcatError, Entry, Library,  # noqa: F401
                      NotFound, Plan, PlanInfo, QueryResult, SetCandidate, SetQueryResult, TuneCache, TuneResult,
                      find_catalog, find_library, load_library, make_problem, make_tensors, open_catalog,
                      problem_key, problem_text, set_log_callback)

__all__ = ["CONVCAT_ACT_GELU", "CONVCAT_ACT_NONE", "CONVCAT_ACT_RELU", "CONVCAT_ACT_SILU", "CONVCAT_AUTO",
           "CONVCAT_DGRAD", "CONVCAT_FPROP", "CONVCAT_WGRAD", "CONVCAT_OK", "CONVCAT_ERR_INVALID_ARGUMENT",
           "CONVCAT_ERR_IO", "CONVCAT_ERR_CORRUPT", "CONVCAT_ERR_VERSION", "CONVCAT_ERR_NOT_FOUND",
           "CONVCAT_ERR_UNSUPPORTED", "CONVCAT_ERR_NO_DRIVER", "CONVCAT_ERR_NO_DEVICE", "CONVCAT_ERR_CUDA",
           "CONVCAT_ERR_NO_MEMORY", "CONVCAT_ERR_MISALIGNED", "AutotuneError", "Candidate", "Catalog", "CatalogSet",
           "ConvcatError", "Entry", "Library", "NotFound", "Plan", "PlanInfo", "QueryResult", "SetCandidate",
           "SetQueryResult", "TuneCache", "TuneResult", "find_catalog", "find_library", "load_library",
           "make_problem", "make_tensors", "open_catalog", "problem_key", "problem_text", "set_log_callback"]
__version__ = "0.2.0"
