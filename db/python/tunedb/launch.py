"""ctypes binding of libtunedb_cuda (deploy/tunedb_cuda.h): launch a frozen DB's winners on a CUDA
stream. Torch-free and family-free: each family declares its argument record (field names, kinds,
offsets) through the library, and `Launcher.launch(family, shape, batch, stream, **fields)` builds
the record from it:

    launcher = Launcher("frozen.db", device=0)          # at start-up, outside any capture
    size = launcher.workspace_bytes("<family>", shape, max_batch)
    report = launcher.launch("<family>", shape, batch, stream, q=..., out=..., workspace=...,
                             workspace_bytes=size, softmax_scale=0.04)

Pointer fields take a device address (int) or anything with data_ptr() (a torch tensor). The
library is found via $TUNEDB_CUDA_LIBRARY, next to this package, in the usual build directories,
or installed (libtunedb_cuda.so.0 on the loader's path). tunedb.torch adds torch's stream and
device checks; a family's typed op lives in the family's own package (kernels/<family>/python)."""

import ctypes
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import TunedbError

__all__ = ["Launcher", "Report", "ArgField", "ArgsLayout", "families", "args_layout",
           "load_cuda_library"]

# TUNEDB_CUDA_* codes: 1 db, 2 input, 3 no GPU, 4 workspace too small, 5 launch failed.
_KINDS = {1: "db", 2: "input", 3: "no_gpu", 4: "workspace", 5: "launch"}
# TUNEDB_CUDA_ARG_*: the field kinds and how each is packed (little-endian, as the GPU hosts are).
_ARG_KINDS = {1: ("pointer", "<Q"), 2: ("u64", "<Q"), 3: ("i32", "<i"), 4: ("f32", "<f")}
_ARG_KINDS_BY_NAME = {name: fmt for name, fmt in _ARG_KINDS.values()}


class _Report(ctypes.Structure):
    _fields_ = [("how", ctypes.c_char_p), ("miss", ctypes.c_char_p), ("tuned_batch", ctypes.c_int),
                ("params_json", ctypes.c_char_p), ("cuda_result", ctypes.c_int)]


class _ArgField(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("offset", ctypes.c_size_t)]


@dataclass
class Report:
    """What a launch ran: the lookup rule, why it missed (a default launch), the config."""
    how: str
    miss: str
    tuned_batch: int
    params_json: str


@dataclass(frozen=True)
class ArgField:
    name: str
    kind: str  # "pointer", "u64", "i32", "f32"
    offset: int


def _address(name: str, value) -> int:
    data_ptr = getattr(value, "data_ptr", None)
    address = data_ptr() if callable(data_ptr) else value
    if isinstance(address, bool) or not isinstance(address, int) or address < 0:
        raise TypeError("%s must be a device address (int) or have data_ptr(), got %r"
                        % (name, type(value).__name__))
    return address


@dataclass(frozen=True)
class ArgsLayout:
    """A family's argument record as the library declares it."""
    family: str
    size: int
    fields: Tuple[ArgField, ...]

    def names(self) -> List[str]:
        return [field.name for field in self.fields]

    def pack(self, values: Dict[str, object]) -> ctypes.Array:
        """The record (`size` bytes) with every field set from `values`; TypeError naming a
        missing, unknown or ill-typed field, ValueError for an out-of-range value."""
        missing = [name for name in self.names() if name not in values]
        unknown = sorted(set(values) - set(self.names()))
        if missing or unknown:
            problems = (["missing " + ", ".join(missing)] if missing else []) + (
                ["unknown " + ", ".join(unknown)] if unknown else [])
            raise TypeError("%s launch arguments: %s; its fields are %s" % (
                self.family, "; ".join(problems), ", ".join(self.names())))
        record = ctypes.create_string_buffer(self.size)
        for field in self.fields:
            value = values[field.name]
            fmt = _ARG_KINDS_BY_NAME[field.kind]
            if field.kind == "pointer":
                value = _address(field.name, value)
            elif field.kind == "f32":
                value = float(value)
            elif isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("%s must be an int, got %r" % (field.name, type(value).__name__))
            try:
                struct.pack_into(fmt, record, field.offset, value)
            except struct.error as error:
                raise ValueError("%s = %r does not fit a %s: %s" % (field.name, value, field.kind,
                                                                     error)) from None
        return record


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


_loaded: Dict[str, ctypes.CDLL] = {}


def load_cuda_library(path: Optional[str] = None) -> ctypes.CDLL:
    """Loads libtunedb_cuda from `path`, $TUNEDB_CUDA_LIBRARY, this package, a build or the
    loader's path."""
    tried = []
    for candidate in [path] if path else list(_candidates()):
        tried.append(candidate)
        if candidate in _loaded:
            return _loaded[candidate]
        try:
            _loaded[candidate] = _declare(ctypes.CDLL(candidate))
            return _loaded[candidate]
        except OSError:
            continue
    raise TunedbError("input", "libtunedb_cuda.so not found (looked at: %s): build the "
                      "`tunedb_cuda` target and set TUNEDB_CUDA_LIBRARY to its path"
                      % ", ".join(tried))


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    handle = ctypes.c_void_p
    size = ctypes.POINTER(ctypes.c_size_t)
    lib.tunedb_cuda_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(handle)]
    lib.tunedb_cuda_arch.argtypes = [handle]
    lib.tunedb_cuda_arch.restype = ctypes.c_char_p
    lib.tunedb_cuda_workspace_bytes.argtypes = [handle, ctypes.c_char_p, ctypes.c_char_p,
                                                ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)]
    lib.tunedb_cuda_launch.argtypes = [handle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                       ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                       ctypes.POINTER(_Report)]
    lib.tunedb_cuda_family.argtypes = [ctypes.c_size_t]
    lib.tunedb_cuda_family.restype = ctypes.c_char_p
    lib.tunedb_cuda_args_layout.argtypes = [ctypes.c_char_p, size, size]
    lib.tunedb_cuda_args_field.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                           ctypes.POINTER(_ArgField)]
    lib.tunedb_cuda_last_error.restype = ctypes.c_char_p
    lib.tunedb_cuda_close.argtypes = [handle]
    return lib


def _check(lib: ctypes.CDLL, status: int) -> None:
    if status != 0:
        message = lib.tunedb_cuda_last_error().decode("utf-8", "replace")
        raise TunedbError(_KINDS.get(status, "internal"), message)


def families(library: Optional[str] = None) -> List[str]:
    """The families the library launches (no GPU needed)."""
    lib = load_cuda_library(library)
    names = []
    while lib.tunedb_cuda_family(len(names)) is not None:
        names.append(lib.tunedb_cuda_family(len(names)).decode())
    return names


def args_layout(family: str, library: Optional[str] = None) -> ArgsLayout:
    """The family's argument record as the library declares it (no GPU needed); TunedbError
    (kind "input") naming the families there are for an unknown one."""
    lib = load_cuda_library(library)
    size, count = ctypes.c_size_t(), ctypes.c_size_t()
    _check(lib, lib.tunedb_cuda_args_layout(family.encode(), ctypes.byref(size),
                                            ctypes.byref(count)))
    fields = []
    for index in range(count.value):
        field = _ArgField()
        _check(lib, lib.tunedb_cuda_args_field(family.encode(), index, ctypes.byref(field)))
        fields.append(ArgField(field.name.decode(), _ARG_KINDS[field.kind][0], field.offset))
    return ArgsLayout(family, size.value, tuple(fields))


class Launcher:
    """A frozen DB opened for one CUDA device: every cubin for its arch loaded at open (do it
    before any graph capture); launches are then allocation-free in the library and capturable."""

    def __init__(self, path: str, device: int = 0, library: Optional[str] = None):
        self._library = library
        self._lib = load_cuda_library(library)
        self._handle = ctypes.c_void_p()
        self._layouts: Dict[str, ArgsLayout] = {}
        _check(self._lib, self._lib.tunedb_cuda_open(os.fsencode(path), device,
                                                     ctypes.byref(self._handle)))
        self.device = device
        self.arch = self._lib.tunedb_cuda_arch(self._handle).decode()

    def args_layout(self, family: str) -> ArgsLayout:
        if family not in self._layouts:
            self._layouts[family] = args_layout(family, self._library)
        return self._layouts[family]

    def workspace_bytes(self, family: str, shape: str, max_batch: int) -> int:
        """The workspace every launch with batch 1..max_batch needs (ask once, at start-up)."""
        size = ctypes.c_uint64()
        _check(self._lib, self._lib.tunedb_cuda_workspace_bytes(
            self._handle, family.encode(), shape.encode(), max_batch, ctypes.byref(size)))
        return size.value

    def launch(self, family: str, shape: str, batch: int, stream: int = 0, **fields) -> Report:
        """Builds the family's record from `fields` (every declared field, by name) and enqueues
        the winner's kernels on `stream` (a CUstream handle; 0: the legacy default stream)."""
        record = self.args_layout(family).pack(fields)
        report = _Report()
        _check(self._lib, self._lib.tunedb_cuda_launch(
            self._handle, family.encode(), shape.encode(), batch, record, ctypes.sizeof(record),
            ctypes.c_void_p(stream), ctypes.byref(report)))
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
