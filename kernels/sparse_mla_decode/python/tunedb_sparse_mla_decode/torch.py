"""Sparse MLA decode as a PyTorch op over tunedb.torch: the DB's winner launched on torch's current
stream (legal inside torch.cuda.graph capture).

    import tunedb.torch as tt
    import tunedb_sparse_mla_decode.torch as smla
    launcher = tt.open("frozen.db", device=0)              # at start-up, outside any capture
    workspace = smla.workspace(launcher, q_heads=16, topk=2048, max_batch=512)
    report = smla.sparse_mla_decode(q, kv, indices, out, lse, softmax_scale, workspace,
                                    launcher=launcher)     # report.how: exact / bucket / default

q [B, H, 576] bf16, kv [tokens, 656] uint8 (fp8_ds_mla) or [tokens, 576] bf16, indices [B, topk]
int32 (flat token ids, -1 = invalid), out [B, H, 512] bf16, lse [B, H] float32, workspace uint8:
all contiguous, on the launcher's device. A wrong dtype raises TypeError, anything else wrong
ValueError, both naming the argument and what it must be; nothing is launched then."""

from typing import Optional, Tuple

import torch

import tunedb.torch as tt
from tunedb.launch import Launcher, Report

from . import FAMILY, shape_text

__all__ = ["workspace", "sparse_mla_decode", "check_decode_args", "kv_format_of"]

FP8_DS_MLA_ROW_BYTES = 656
HEAD_DIM = 576
VALUE_DIM = 512


def workspace(launcher: Launcher, q_heads: int, topk: int, max_batch: int,
              kv_format: str = "fp8_ds_mla", page_size: int = 64) -> torch.Tensor:
    """A uint8 workspace on the launcher's device, large enough for every batch up to
    max_batch (allocate it once, before capture)."""
    return tt.workspace(launcher, FAMILY, shape_text(kv_format, q_heads, topk, page_size),
                        max_batch)


def kv_format_of(kv) -> str:
    if kv.dtype == torch.uint8 and kv.dim() == 2 and kv.shape[1] == FP8_DS_MLA_ROW_BYTES:
        return "fp8_ds_mla"
    if kv.dtype == torch.bfloat16 and kv.dim() == 2 and kv.shape[1] == HEAD_DIM:
        return "bf16"
    raise TypeError("kv must be [tokens, %d] uint8 (fp8_ds_mla) or [tokens, %d] bfloat16, got %s "
                    "%s" % (FP8_DS_MLA_ROW_BYTES, HEAD_DIM, tuple(kv.shape), kv.dtype))


def _expect(name, tensor, dtype, shape, device) -> None:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError("%s must be a torch.Tensor, got %s" % (name, type(tensor).__name__))
    if tensor.dtype != dtype:
        raise TypeError("%s must be %s, got %s" % (name, dtype, tensor.dtype))
    if tuple(tensor.shape) != tuple(shape):
        raise ValueError("%s must have shape %s, got %s" % (name, tuple(shape),
                                                            tuple(tensor.shape)))
    tt.check_tensor(name, tensor, device)


def check_decode_args(q, kv, indices, out, lse, workspace_tensor,
                      device) -> Tuple[str, int, int, int]:
    """Checks every tensor (TypeError / ValueError naming it); returns (kv_format, batch, heads,
    topk)."""
    if not isinstance(q, torch.Tensor) or q.dim() != 3 or q.shape[2] != HEAD_DIM:
        raise ValueError("q must be [batch, heads, %d] bfloat16, got %s" %
                         (HEAD_DIM, tuple(getattr(q, "shape", ()))))
    batch, heads = int(q.shape[0]), int(q.shape[1])
    _expect("q", q, torch.bfloat16, (batch, heads, HEAD_DIM), device)
    kv_format = kv_format_of(kv)
    _expect("kv", kv, kv.dtype, tuple(kv.shape), device)
    if not isinstance(indices, torch.Tensor) or indices.dim() != 2:
        raise ValueError("indices must be [batch, topk] int32")
    topk = int(indices.shape[1])
    _expect("indices", indices, torch.int32, (batch, topk), device)
    _expect("out", out, torch.bfloat16, (batch, heads, VALUE_DIM), device)
    _expect("lse", lse, torch.float32, (batch, heads), device)
    if not isinstance(workspace_tensor, torch.Tensor) or workspace_tensor.dim() != 1:
        raise ValueError("workspace must be a 1-D uint8 tensor from workspace()")
    _expect("workspace", workspace_tensor, torch.uint8, tuple(workspace_tensor.shape), device)
    return kv_format, batch, heads, topk


def sparse_mla_decode(q, kv, indices, out, lse, softmax_scale: float, workspace,
                      launcher: Optional[Launcher] = None, page_size: int = 64) -> Report:
    """Launches the DB's winner for this batch (or the default, which the report says) on torch's
    current stream, writing out and lse. Raises TunedbError(kind="workspace") when the workspace
    is smaller than this batch needs."""
    if launcher is None:
        raise ValueError("launcher is required: tunedb.torch.open(path) at start-up")
    kv_format, batch, heads, topk = check_decode_args(q, kv, indices, out, lse, workspace,
                                                      tt.device_of(launcher))
    if not softmax_scale > 0:
        raise ValueError("softmax_scale must be positive, got %r" % (softmax_scale,))
    return tt.launch(launcher, FAMILY, shape_text(kv_format, heads, topk, page_size), batch,
                     q=q, kv=kv, indices=indices, out=out, lse=lse, workspace=workspace,
                     workspace_bytes=workspace.numel(), softmax_scale=float(softmax_scale))
