"""ctypes binding of libtunedb_cuda (deploy/tunedb_cuda.h): launch a frozen DB's winners on a CUDA
stream from device addresses. Torch-free; tunedb.torch builds the PyTorch op on it. The library is
found via $TUNEDB_CUDA_LIBRARY, next to this package, in the usual build directories, or installed
(libtunedb_cuda.so.0 on the loader's path)."""

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from . import TunedbError

__all__ = ["Launcher", "Report", "load_cuda_library", "SPARSE_MLA_DECODE"]

SPARSE_MLA_DECODE = "sparse_mla_decode"
# TUNEDB_CUDA_* codes: 1 db, 2 input, 3 no GPU, 4 workspace too small, 5 launch failed.
_KINDS = {1: "db", 2: "input", 3: "no_gpu", 4: "workspace", 5: "launch"}


class _SparseMlaDecodeArgs(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in
                ("q", "kv", "indices", "out", "lse", "workspace", "workspace_bytes")] + [
                    ("softmax_scale", ctypes.c_float)]


class _Report(ctypes.Structure):
    _fields_ = [("how", ctypes.c_char_p), ("miss", ctypes.c_char_p), ("tuned_batch", ctypes.c_int),
                ("params_json", ctypes.c_char_p), ("cuda_result", ctypes.c_int)]


@dataclass
class Report:
    """What a launch ran: the lookup rule, why it missed (a default launch), the config."""
    how: str
    miss: str
    tuned_batch: int
    params_json: str


def _candidates():
    env = os.environ.get("TUNEDB_CUDA_LIBRARY")
    if env:
        yield env
        return
    here = Path(__file__).resolve().parent
    yield str(here / "libtunedb_cuda.so")
    for build in sorted(here.parent.parent.parent.glob("build*/deploy/libtunedb_cuda.so")):
        yield str(build)
    yield "libtunedb_cuda.so.0"


def load_cuda_library(path: Optional[str] = None) -> ctypes.CDLL:
    """Loads libtunedb_cuda from `path`, $TUNEDB_CUDA_LIBRARY, this package, a build or the
    loader's path."""
    tried = []
    for candidate in [path] if path else list(_candidates()):
        tried.append(candidate)
        try:
            return _declare(ctypes.CDLL(candidate))
        except OSError:
            continue
    raise TunedbError("input", "libtunedb_cuda.so not found (looked at: %s): build the "
                      "`tunedb_cuda` target and set TUNEDB_CUDA_LIBRARY to its path"
                      % ", ".join(tried))


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    handle = ctypes.c_void_p
    lib.tunedb_cuda_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(handle)]
    lib.tunedb_cuda_arch.argtypes = [handle]
    lib.tunedb_cuda_arch.restype = ctypes.c_char_p
    lib.tunedb_cuda_workspace_bytes.argtypes = [handle, ctypes.c_char_p, ctypes.c_char_p,
                                                ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)]
    lib.tunedb_cuda_launch_sparse_mla_decode.argtypes = [
        handle, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_SparseMlaDecodeArgs),
        ctypes.c_void_p, ctypes.POINTER(_Report)]
    lib.tunedb_cuda_last_error.restype = ctypes.c_char_p
    lib.tunedb_cuda_close.argtypes = [handle]
    return lib


class Launcher:
    """A frozen DB opened for one CUDA device: every cubin for its arch loaded at open (do it
    before any graph capture); launches are then allocation-free and capturable."""

    def __init__(self, path: str, device: int = 0, library: Optional[str] = None):
        self._lib = load_cuda_library(library)
        self._handle = ctypes.c_void_p()
        self._check(self._lib.tunedb_cuda_open(os.fsencode(path), device,
                                               ctypes.byref(self._handle)))
        self.device = device
        self.arch = self._lib.tunedb_cuda_arch(self._handle).decode()

    def _check(self, status: int) -> None:
        if status != 0:
            message = self._lib.tunedb_cuda_last_error().decode("utf-8", "replace")
            raise TunedbError(_KINDS.get(status, "internal"), message)

    def workspace_bytes(self, family: str, shape: str, max_batch: int) -> int:
        """The workspace every launch with batch 1..max_batch needs (ask once, at start-up)."""
        size = ctypes.c_uint64()
        self._check(self._lib.tunedb_cuda_workspace_bytes(
            self._handle, family.encode(), shape.encode(), max_batch, ctypes.byref(size)))
        return size.value

    def launch_sparse_mla_decode(self, shape: str, batch: int, q: int, kv: int, indices: int,
                                 out: int, lse: int, workspace: int, workspace_bytes: int,
                                 softmax_scale: float, stream: int) -> Report:
        """Device addresses in, one split (+ combine) enqueued on `stream` (a CUstream handle)."""
        args = _SparseMlaDecodeArgs(q, kv, indices, out, lse, workspace, workspace_bytes,
                                    softmax_scale)
        report = _Report()
        self._check(self._lib.tunedb_cuda_launch_sparse_mla_decode(
            self._handle, shape.encode(), batch, ctypes.byref(args), ctypes.c_void_p(stream),
            ctypes.byref(report)))
        return Report(report.how.decode(), report.miss.decode(), report.tuned_batch,
                      report.params_json.decode())

    def close(self) -> None:
        if self._handle:
            self._lib.tunedb_cuda_close(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass
