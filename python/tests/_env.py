"""Where the tests find libconvcat and a catalog: $CONVCAT_LIBRARY / $CONVCAT_CATALOG, else the
build trees of the repository (build-ci, then build)."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import convcat  # noqa: E402


def library_path():
    env = os.environ.get("CONVCAT_LIBRARY")
    if env:
        return env
    for build in ("build-ci", "build"):
        p = os.path.join(ROOT, build, "runtime", "libconvcat.so")
        if os.path.isfile(p):
            return p
    return None


def catalog_path():
    env = os.environ.get("CONVCAT_CATALOG")
    if env:
        return env
    lib = library_path()
    if lib:
        p = os.path.join(os.path.dirname(os.path.abspath(lib)), "..", "catalog", "convcat.catalog")
        if os.path.isfile(p):
            return os.path.abspath(p)
    return None


def need_library(test):
    """The Library, or skip the test (no build here)."""
    path = library_path()
    if not path:
        raise unittest.SkipTest("no libconvcat.so: set CONVCAT_LIBRARY or build build-ci")
    return convcat.load_library(path)


def need_catalog(test):
    lib = need_library(test)
    path = catalog_path()
    if not path:
        raise unittest.SkipTest("no catalog: set CONVCAT_CATALOG or build build-ci")
    return convcat.open_catalog(path, lib)


def has_gpu_driver():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False
