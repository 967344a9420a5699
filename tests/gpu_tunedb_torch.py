#!/usr/bin/env python3
"""The sparse MLA decode PyTorch op (kernels/sparse_mla_decode/python:
tunedb_sparse_mla_decode.torch over the generic tunedb.torch) on a GPU (issue 13; run by
scripts/device_calls/h200_issue13*.sh, needs torch): the op against a torch fp32 reference written
here from the fp8_ds_mla row format (512 e4m3 + 4 fp32 scales + 64 bf16 rope), at batches 1..512
(tuned, bucketed, untuned bf16), eager and replayed from a torch.cuda.graph on new inputs; the
generic tunedb.torch.launch with the fields by name; then the refusals. Usage: gpu_tunedb_torch.py
FROZEN.db
Exit 0 when everything passes, 1 otherwise (the failures are printed)."""

import sys

import torch

import tunedb.torch as tt
import tunedb_sparse_mla_decode.torch as smla
from tunedb import TunedbError
from tunedb_sparse_mla_decode import FAMILY, shape_text

HEADS, TOPK, TOKENS, MAX_BATCH, SCALE = 16, 2048, 1 << 16, 512, 576 ** -0.5
DEV = torch.device("cuda:0")
failures = []


def make_kv(kv_format, gen):
    if kv_format == "bf16":
        kv = (torch.randn(TOKENS, 576, generator=gen, device=DEV) * 0.5).to(torch.bfloat16)
        return kv, kv.float()
    latent = (torch.randn(TOKENS, 512, generator=gen, device=DEV) * 2).to(torch.float8_e4m3fn)
    scales = torch.rand(TOKENS, 4, generator=gen, device=DEV) * 0.5 + 0.05
    rope = (torch.randn(TOKENS, 64, generator=gen, device=DEV) * 0.5).to(torch.bfloat16)
    rows = torch.cat([latent.view(torch.uint8), scales.view(torch.uint8),
                      rope.view(torch.uint8)], dim=1).contiguous()
    full = torch.cat([latent.float() * scales.repeat_interleave(128, dim=1), rope.float()], 1)
    return rows, full


def draw(batch, gen, q=None, indices=None):
    q_new = torch.randn(batch, HEADS, 576, generator=gen, device=DEV).to(torch.bfloat16)
    idx_new = torch.randint(0, TOKENS, (batch, TOPK), generator=gen, device=DEV,
                            dtype=torch.int32)
    idx_new[torch.rand(batch, TOPK, generator=gen, device=DEV) < 0.03] = -1
    if q is None:
        return q_new, idx_new
    q.copy_(q_new)
    indices.copy_(idx_new)
    return q, indices


def reference(q, full, indices):
    valid = indices >= 0
    rows = full[indices.clamp(min=0).long()]  # [B, topk, 576]
    scores = torch.einsum("bhd,btd->bht", q.float(), rows) * SCALE
    scores = scores.masked_fill(~valid[:, None, :], float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    out = torch.einsum("bht,btd->bhd", torch.softmax(scores, dim=-1), rows[..., :512])
    return out, lse


def agree(what, out, lse, ref_out, ref_lse):
    norms = ref_out.norm(dim=-1)
    floor = 0.01 * norms.pow(2).mean().sqrt()
    out_err = ((out.float() - ref_out).norm(dim=-1) / torch.maximum(norms, floor)).max().item()
    lse_err = ((lse - ref_lse).abs() / ref_lse.abs().clamp(min=1)).max().item()
    ok = out_err < 1e-2 and lse_err < 1e-3 and torch.isfinite(out.float()).all().item()
    if not ok:
        failures.append("%s: out rel err %.2e, lse rel err %.2e" % (what, out_err, lse_err))
    return ok


def run_batch(launcher, workspace, kv_format, kv, full, batch, gen):
    q, indices = draw(batch, gen)
    out = torch.full((batch, HEADS, 512), float("nan"), dtype=torch.bfloat16, device=DEV)
    lse = torch.full((batch, HEADS), float("nan"), dtype=torch.float32, device=DEV)
    report = smla.sparse_mla_decode(q, kv, indices, out, lse, SCALE, workspace, launcher=launcher)
    torch.cuda.synchronize()
    agree("%s batch %d eager (%s)" % (kv_format, batch, report.how), out, lse,
          *reference(q, full, indices))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as torch recommends
        smla.sparse_mla_decode(q, kv, indices, out, lse, SCALE, workspace, launcher=launcher)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        smla.sparse_mla_decode(q, kv, indices, out, lse, SCALE, workspace, launcher=launcher)
    for replay in range(2):
        draw(batch, gen, q, indices)
        out.fill_(float("nan"))
        lse.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        agree("%s batch %d graph replay %d" % (kv_format, batch, replay), out, lse,
              *reference(q, full, indices))
    return report


def generic_launch(launcher, gen):
    """tunedb.torch.launch with the family's record fields by name, against the reference."""
    kv, full = make_kv("fp8_ds_mla", gen)
    workspace = smla.workspace(launcher, HEADS, TOPK, MAX_BATCH)
    q, indices = draw(8, gen)
    out = torch.full((8, HEADS, 512), float("nan"), dtype=torch.bfloat16, device=DEV)
    lse = torch.full((8, HEADS), float("nan"), dtype=torch.float32, device=DEV)
    report = tt.launch(launcher, FAMILY, shape_text("fp8_ds_mla", HEADS, TOPK), 8, q=q, kv=kv,
                       indices=indices, out=out, lse=lse, workspace=workspace,
                       workspace_bytes=workspace.numel(), softmax_scale=SCALE)
    torch.cuda.synchronize()
    agree("generic launch batch 8 (%s)" % report.how, out, lse, *reference(q, full, indices))


def expect_refusal(what, error_type, call, kind=None):
    try:
        call()
    except error_type as error:
        if kind is not None and getattr(error, "kind", None) != kind:
            failures.append("%s: kind %s, wanted %s" % (what, error.kind, kind))
        print("refused as expected: %s: %s" % (what, error))
        return
    except Exception as error:  # noqa: BLE001
        failures.append("%s: raised %r instead of %s" % (what, error, error_type.__name__))
        return
    failures.append("%s: not refused" % what)


def refusals(launcher, workspace, kv, gen):
    q, indices = draw(4, gen)
    out = torch.empty(4, HEADS, 512, dtype=torch.bfloat16, device=DEV)
    lse = torch.empty(4, HEADS, dtype=torch.float32, device=DEV)

    def call(**changed):
        args = dict(q=q, kv=kv, indices=indices, out=out, lse=lse, softmax_scale=SCALE,
                    workspace=workspace, launcher=launcher)
        args.update(changed)
        return smla.sparse_mla_decode(**args)

    def generic(**changed):  # the family-free path: the record's fields by name
        fields = dict(q=q, kv=kv, indices=indices, out=out, lse=lse, workspace=workspace,
                      workspace_bytes=workspace.numel(), softmax_scale=SCALE)
        fields.update(changed)
        return tt.launch(launcher, FAMILY, shape_text("fp8_ds_mla", HEADS, TOPK), 4, **fields)

    expect_refusal("q float32", TypeError, lambda: call(q=q.float()))
    expect_refusal("indices int64", TypeError, lambda: call(indices=indices.long()))
    expect_refusal("q non-contiguous", ValueError,
                   lambda: call(q=q.transpose(0, 1).contiguous().transpose(0, 1)))
    expect_refusal("q on the CPU", ValueError, lambda: call(q=q.cpu()))
    expect_refusal("out wrong shape", ValueError, lambda: call(out=out[:, :8]))
    expect_refusal("workspace too small", TunedbError, lambda: call(workspace=workspace[:64]),
                   kind="workspace")
    expect_refusal("generic: fields missing", TypeError,
                   lambda: tt.launch(launcher, FAMILY, shape_text("fp8_ds_mla", HEADS, TOPK), 4,
                                     q=q))
    expect_refusal("generic: an unknown field", TypeError, lambda: generic(scale=SCALE))
    expect_refusal("generic: lse on the CPU", ValueError, lambda: generic(lse=lse.cpu()))


def main():
    launcher = tt.open(sys.argv[1], 0)
    gen = torch.Generator(device=DEV)
    gen.manual_seed(13)
    for kv_format, batches in (("fp8_ds_mla", (1, 2, 8, 37, 64, 128, 200, 512)),
                               ("bf16", (1, 16, 300))):
        workspace = smla.workspace(launcher, HEADS, TOPK, MAX_BATCH, kv_format=kv_format)
        kv, full = make_kv(kv_format, gen)
        for batch in batches:
            report = run_batch(launcher, workspace, kv_format, kv, full, batch, gen)
            print("%s batch %d: %s (miss %s, tuned batch %d) %s" % (
                kv_format, batch, report.how, report.miss, report.tuned_batch, report.params_json))
    generic_launch(launcher, gen)
    refusals(launcher, smla.workspace(launcher, HEADS, TOPK, MAX_BATCH),
             make_kv("fp8_ds_mla", gen)[0], gen)
    for failure in failures:
        print("FAILED:", failure)
    print("gpu_tunedb_torch: %s" % ("OK" if not failures else "%d FAILED" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
