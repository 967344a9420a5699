"""tunedb.torch: a frozen DB's winners launched on torch's current stream (legal inside
torch.cuda.graph capture), for any family the library launches. torch is needed only by this
module. A family's typed op (dtype and shape checks, its shape text) lives in the family's own
package, built on `launch` here (e.g. kernels/<family>/python).

    import tunedb.torch as tt
    launcher = tt.open("frozen.db", device=0)               # at start-up, outside any capture
    workspace = tt.workspace(launcher, "<family>", shape, max_batch=512)
    report = tt.launch(launcher, "<family>", shape, batch, workspace=workspace,
                       workspace_bytes=workspace.numel(), ...)  # the family's fields, by name

Tensor arguments must be contiguous and on the launcher's device (ValueError naming the argument
otherwise); the record's fields are checked by name (TypeError naming what is missing or
unknown)."""

import torch

from . import TunedbError
from .launch import Launcher, Report

__all__ = ["open", "workspace", "launch", "check_tensor", "Launcher", "Report", "TunedbError"]


def open(path: str, device=None) -> Launcher:  # noqa: A001 (the module's verb)
    """Opens `path` for `device` (default: torch's current CUDA device)."""
    if device is None:
        index = torch.cuda.current_device()
    elif isinstance(device, int):
        index = device
    else:
        chosen = torch.device(device)
        index = chosen.index if chosen.index is not None else torch.cuda.current_device()
    torch.cuda.init()
    with torch.cuda.device(index):
        return Launcher(path, index)


def device_of(launcher: Launcher) -> torch.device:
    return torch.device("cuda", launcher.device)


def workspace(launcher: Launcher, family: str, shape: str, max_batch: int) -> torch.Tensor:
    """A uint8 workspace on the launcher's device, large enough for every batch up to max_batch
    (allocate it once, before capture)."""
    size = launcher.workspace_bytes(family, shape, max_batch)
    return torch.empty(max(size, 1), dtype=torch.uint8, device=device_of(launcher))


def check_tensor(name: str, tensor, device: torch.device) -> None:
    """ValueError naming `name` unless it is a contiguous tensor on `device`."""
    if tensor.device != device:
        raise ValueError("%s is on %s, but the launcher serves %s: move it there" %
                         (name, tensor.device, device))
    if not tensor.is_contiguous():
        raise ValueError("%s must be contiguous: pass %s.contiguous()" % (name, name))


def launch(launcher: Launcher, family: str, shape: str, batch: int, **fields) -> Report:
    """Launches the DB's winner for this batch (or the default, which the report says) on torch's
    current stream. Tensors are passed by address after check_tensor; other fields as given."""
    device = device_of(launcher)
    for name, value in fields.items():
        if isinstance(value, torch.Tensor):
            check_tensor(name, value, device)
    stream = torch.cuda.current_stream(device).cuda_stream
    return launcher.launch(family, shape, batch, stream, **fields)
