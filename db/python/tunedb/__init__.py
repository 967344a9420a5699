"""Python access to tunedb (libtunedb.so) through ctypes: look up tuned kernel configurations in a
frozen tuning DB. No build step; the library is found via $TUNEDB_LIBRARY, next to this module, in
the usual build directories, or installed (libtunedb.so.0 on the loader's path). `tunedb.torch`
launches the winners on torch's stream (torch is needed only there); tunedb.launch launches
them from device addresses, for any family, from the argument record the family declares.

    from tunedb import TuningDb
    with TuningDb("frozen.db") as db:
        # e.g. a family "my_gemm" with dimensions n, k, block: family names and dimensions
        # are data to tunedb (README.md lists the real families' shapes).
        found = db.lookup("my_gemm", "sm_120", n=4096, k=7168, block=128, batch=4)
        found.how, found.params, found.tuned_batch, found.median_us, found.device_name
        # A shape resolved once, then O(1) lookups by batch (e.g. per captured CUDA graph):
        shape = db.shape("my_gemm", "sm_120", n=4096, k=7168, block=128)
        configs = {batch: shape.lookup(batch).params for batch in (1, 2, 4, 8, 512)}

Lookup rules (exact / bucket / default / not_found) are those of db/tunedb/tunedb.hpp.

`Lookup.cubin` is a read-only memoryview of the image inside the library, not a copy. The view
stays valid after close(): close() frees the DB only once no lookup is in flight and no cubin view
is alive (call bytes(view) to keep a copy beyond that). close() is safe to call while other threads
look up; their later lookups raise TunedbError.
"""

import ctypes
import os
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional

__all__ = ["TuningDb", "Shape", "Lookup", "TunedbError", "verify", "load_library", "canonical_shape"]

_STATUS_NAMES = {1: "input", 2: "db", 3: "internal"}


class TunedbError(Exception):
    """A failed tunedb call. `kind` is "input" (missing, foreign or newer file; bad argument),
    "db" (damaged file, checksum mismatch) or "internal"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class _Param(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


class _Result(ctypes.Structure):
    _fields_ = [
        ("how", ctypes.c_int),
        ("miss", ctypes.c_int),
        ("tuned_batch", ctypes.c_int),
        ("default_kept", ctypes.c_int),
        ("median_us", ctypes.c_double),
        ("run_id", ctypes.c_int64),
        ("params", ctypes.POINTER(_Param)),
        ("n_params", ctypes.c_size_t),
        ("params_json", ctypes.c_char_p),
        ("measured_arch", ctypes.c_char_p),
        ("device_name", ctypes.c_char_p),
        ("cubin", ctypes.c_void_p),
        ("cubin_size", ctypes.c_size_t),
        ("kernel_names", ctypes.c_char_p),
    ]


@dataclass(frozen=True)
class Lookup:
    how: str  # "exact", "bucket", "default", "not_found"
    miss: str  # "none", "arch_not_in_db", "family_not_in_db", "shape_not_tuned"
    params: Dict[str, int] = field(default_factory=dict)
    params_json: str = ""
    tuned_batch: int = 0
    median_us: float = float("nan")
    run_id: int = 0
    measured_arch: str = ""
    device_name: str = ""
    default_kept: bool = False
    cubin: Optional[memoryview] = None  # read-only, no copy; see the module docstring
    kernel_names: tuple = ()


def _candidate_paths():
    env = os.environ.get("TUNEDB_LIBRARY")
    if env:
        yield Path(env)
        return
    here = Path(__file__).resolve().parent
    yield here / "libtunedb.so"
    root = here.parent.parent.parent  # db/python/tunedb/ in a checkout
    for build in sorted(root.glob("build*/db/libtunedb.so")):
        yield build
    # Installed (`cmake --install`): the SONAME, found by the dynamic loader (LD_LIBRARY_PATH,
    # ldconfig's cache).
    yield Path("libtunedb.so.0")


def load_library(path: Optional[str] = None) -> ctypes.CDLL:
    """Loads libtunedb.so from `path`, $TUNEDB_LIBRARY, next to this module or a build dir."""
    candidates = [Path(path)] if path else list(_candidate_paths())
    for candidate in candidates:
        if candidate.exists():
            return _declare(ctypes.CDLL(str(candidate)))
        if candidate.parent == Path("."):
            try:
                return _declare(ctypes.CDLL(str(candidate)))
            except OSError:
                continue
    raise TunedbError(
        "input",
        "libtunedb.so not found (looked at: %s): build the `tunedb` target and set "
        "TUNEDB_LIBRARY to its path" % ", ".join(str(c) for c in candidates),
    )


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    handle_p = ctypes.c_void_p
    lib.tunedb_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(handle_p)]
    lib.tunedb_open.restype = ctypes.c_int
    lib.tunedb_lookup.argtypes = [
        handle_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
        ctypes.POINTER(_Result),
    ]
    lib.tunedb_lookup.restype = ctypes.c_int
    lib.tunedb_shape_open.argtypes = [
        handle_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(handle_p),
    ]
    lib.tunedb_shape_open.restype = ctypes.c_int
    lib.tunedb_shape_lookup.argtypes = [handle_p, ctypes.c_int, ctypes.POINTER(_Result)]
    lib.tunedb_shape_lookup.restype = ctypes.c_int
    lib.tunedb_shape_largest_tuned_batch.argtypes = [handle_p]
    lib.tunedb_shape_largest_tuned_batch.restype = ctypes.c_int
    lib.tunedb_shape_close.argtypes = [handle_p]
    lib.tunedb_shape_close.restype = None
    lib.tunedb_verify.argtypes = [ctypes.c_char_p]
    lib.tunedb_verify.restype = ctypes.c_int
    lib.tunedb_close.argtypes = [handle_p]
    lib.tunedb_close.restype = None
    lib.tunedb_last_error.argtypes = []
    lib.tunedb_last_error.restype = ctypes.c_char_p
    for name in ("tunedb_how_name", "tunedb_miss_name"):
        getattr(lib, name).argtypes = [ctypes.c_int]
        getattr(lib, name).restype = ctypes.c_char_p
    return lib


def _check(lib: ctypes.CDLL, status: int) -> None:
    if status != 0:
        message = lib.tunedb_last_error().decode("utf-8", "replace")
        raise TunedbError(_STATUS_NAMES.get(status, "internal"), message)


def _text(value: Optional[bytes]) -> str:
    return value.decode("utf-8") if value else ""


def canonical_shape(**dims) -> str:
    """name=value pairs sorted by name, joined by ',' (the text the DB keys shapes on)."""
    if not dims:
        raise TunedbError("input", "a shape needs at least one dimension, e.g. n=4096, k=7168")
    return ",".join(f"{name}={value}" for name, value in sorted(dims.items()))


def verify(path: str, library: Optional[str] = None) -> None:
    """Raises TunedbError unless `path` is a frozen DB whose checksum still matches."""
    lib = load_library(library)
    _check(lib, lib.tunedb_verify(os.fsencode(path)))


def _shape_text(shape: Optional[str], dims: dict) -> str:
    if shape is None:
        return canonical_shape(**dims)
    if dims:
        raise TunedbError("input", "pass the shape either as shape= text or as keywords, "
                          f"not both (got shape={shape!r} and {sorted(dims)})")
    return shape


class _Closes:
    """A context manager whose close() also runs when the object is collected."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass


class TuningDb(_Closes):
    """A frozen tuning DB (or a tuning store) opened read-only; lookups are thread-safe."""

    def __init__(self, path: str, library: Optional[str] = None):
        self._handle = None
        self._lock = threading.RLock()  # a view finalizer may run inside a locked section
        self._users = 0  # lookups in flight + live cubin views: they keep the handle open
        self._closing = False
        self._lib = load_library(library)
        handle = ctypes.c_void_p()
        _check(self._lib, self._lib.tunedb_open(os.fsencode(path), ctypes.byref(handle)))
        self._handle = handle

    def _acquire(self) -> ctypes.c_void_p:
        with self._lock:
            if self._handle is None or self._closing:
                raise TunedbError("input", "lookup on a closed TuningDb")
            self._users += 1
            return self._handle

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._closing and self._users == 0:
                self._free()

    def _free(self) -> None:  # with self._lock held
        if self._handle is not None:
            self._lib.tunedb_close(self._handle)
            self._handle = None

    def _cubin_view(self, address: int, size: int) -> memoryview:
        image = (ctypes.c_char * size).from_address(address)
        with self._lock:
            self._users += 1
        # The view keeps `image` alive; when the last view of it goes, the handle may be freed.
        weakref.finalize(image, self._release)
        return memoryview(image).cast("B").toreadonly()

    def lookup(self, family: str, arch: str, *, batch: int, shape: Optional[str] = None,
               **dims) -> Lookup:
        """The config for (family, arch, shape, batch). The shape is the family's canonical
        dimensions as keyword arguments (e.g. n=4096, k=7168, block=128), or `shape` as canonical
        text."""
        shape = _shape_text(shape, dims)
        handle = self._acquire()
        try:
            return self._lookup(handle, family, arch, shape, batch)
        finally:
            self._release()

    def _lookup(self, handle, family: str, arch: str, shape: str, batch: int) -> Lookup:
        result = _Result()
        _check(self._lib, self._lib.tunedb_lookup(
            handle, family.encode(), arch.encode(), shape.encode(), batch,
            ctypes.byref(result)))
        return self._to_lookup(result)

    def shape(self, family: str, arch: str, *, shape: Optional[str] = None, **dims) -> "Shape":
        """(family, arch, shape) resolved once into a Shape whose lookup(batch) reads a dense
        table (the same answers as lookup(), without the search). The DB stays open while the
        Shape lives (or until Shape.close())."""
        return Shape(self, family, arch, _shape_text(shape, dims))

    def _to_lookup(self, result: "_Result") -> Lookup:
        params = {result.params[i].name.decode(): result.params[i].value
                  for i in range(result.n_params)}
        cubin = self._cubin_view(result.cubin, result.cubin_size) if result.cubin else None
        return Lookup(
            how=_text(self._lib.tunedb_how_name(result.how)),
            miss=_text(self._lib.tunedb_miss_name(result.miss)),
            params=params,
            params_json=_text(result.params_json),
            tuned_batch=result.tuned_batch,
            median_us=result.median_us,
            run_id=result.run_id,
            measured_arch=_text(result.measured_arch),
            device_name=_text(result.device_name),
            default_kept=bool(result.default_kept),
            cubin=cubin,
            kernel_names=tuple(n for n in _text(result.kernel_names).split("\n") if n),
        )

    def close(self) -> None:
        """No new lookups; the DB is freed now, or when the last lookup or cubin view ends."""
        lock = getattr(self, "_lock", None)
        if lock is None:  # __init__ failed before the lock existed
            return
        with lock:
            if self._handle is None or self._closing:
                return
            self._closing = True
            if self._users == 0:
                self._free()



class Shape(_Closes):
    """A shape resolved once (TuningDb.shape): lookup(batch) is O(1). Batches below 1 raise
    TunedbError("input"); a batch above the largest tuned one gets that batch's config (how
    "bucket", tuned_batch < batch)."""

    def __init__(self, db: TuningDb, family: str, arch: str, shape: str):
        self._db = db
        self._shape = None
        self._lock = threading.Lock()
        handle = db._acquire()  # held until close(): the DB outlives this shape
        try:
            resolved = ctypes.c_void_p()
            _check(db._lib, db._lib.tunedb_shape_open(
                handle, family.encode(), arch.encode(), shape.encode(), ctypes.byref(resolved)))
        except BaseException:
            db._release()
            raise
        self._shape = resolved
        self.largest_tuned_batch = db._lib.tunedb_shape_largest_tuned_batch(resolved)

    def lookup(self, batch: int) -> Lookup:
        if not isinstance(batch, int) or not -2**31 <= batch < 2**31:
            raise TunedbError("input", f"batch {batch!r} is not a batch size: pass an int "
                              "from 1 to 2**31-1")
        with self._lock:
            if self._shape is None:
                raise TunedbError("input", "lookup on a closed Shape")
            result = _Result()
            _check(self._db._lib, self._db._lib.tunedb_shape_lookup(
                self._shape, batch, ctypes.byref(result)))
            return self._db._to_lookup(result)

    def close(self) -> None:
        lock = getattr(self, "_lock", None)
        if lock is None:
            return
        with lock:
            if self._shape is None:
                return
            self._db._lib.tunedb_shape_close(self._shape)
            self._shape = None
            self._db._release()
