#!/usr/bin/env python3
"""The README's Python serving snippet: the sparse MLA decode op (kernels/sparse_mla_decode/python,
over tunedb.torch) launches the DB's winner for any batch on torch's current stream, eager and
inside torch.cuda.graph. Usage: serve_torch.py FROZEN.db
Zero inputs make every score equal, so lse must be ln(2048); exits 1 when it is not."""
import math
import sys

import torch

import tunedb.torch as tt
import tunedb_sparse_mla_decode.torch as smla

launcher = tt.open(sys.argv[1])  # start-up: loads every cubin for this GPU's arch, once
workspace = smla.workspace(launcher, q_heads=16, topk=2048, max_batch=512)
failed = 0
for batch in (1, 37, 512):
    q = torch.zeros(batch, 16, 576, dtype=torch.bfloat16, device="cuda")
    kv = torch.zeros(4096, 656, dtype=torch.uint8, device="cuda")  # fp8_ds_mla rows
    indices = torch.zeros(batch, 2048, dtype=torch.int32, device="cuda")
    out = torch.empty(batch, 16, 512, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(batch, 16, dtype=torch.float32, device="cuda")
    report = smla.sparse_mla_decode(q, kv, indices, out, lse, 576 ** -0.5, workspace,
                                  launcher=launcher)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # the same call, captured; replays launch the same kernels
        smla.sparse_mla_decode(q, kv, indices, out, lse, 576 ** -0.5, workspace, launcher=launcher)
    lse.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    ok = abs(lse[-1, -1].item() - math.log(2048)) < 1e-3 and out.abs().max().item() == 0
    failed += not ok
    print("batch %d: %s (tuned batch %d) %s lse %.4f %s" % (
        batch, report.how, report.tuned_batch, report.params_json, lse[-1, -1].item(),
        "ok" if ok else "WRONG"))
sys.exit(1 if failed else 0)
