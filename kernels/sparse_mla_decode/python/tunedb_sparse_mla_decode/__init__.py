"""Sparse MLA decode served from a frozen tuning DB: the family's name and shape text (torch-free);
the PyTorch op is tunedb_sparse_mla_decode.torch."""

__all__ = ["FAMILY", "shape_text"]

FAMILY = "sparse_mla_decode"


def shape_text(kv_format: str, local_heads: int, topk: int, page_size: int = 64) -> str:
    """The canonical shape text the DB keys on."""
    return "kv_format=%s,local_heads=%d,page_size=%d,topk=%d" % (kv_format, local_heads,
                                                                  page_size, topk)
