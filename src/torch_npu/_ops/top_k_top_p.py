"""``torch_npu.npu_top_k_top_p(logits, p=None, k=None)``: top-k then top-p filtering of 2-D
logits, as torch_npu's formula: per row, values below the ``k[b]``-th largest become -inf;
then, over the ascending stable sort of what is left, the values whose softmax cumulative sum
is ``<= 1 - p[b]`` become -inf (the largest always stays); the result in the logits' order and
dtype (the kept values are the logits' own). Sorted and summed in fp32; torch_npu registers no
backward."""

from __future__ import annotations

from typing import Optional

import torch

from ._no_derivative import without_derivative
from ._precision import upcast
from ._registry import operator


@operator
def npu_top_k_top_p(
    logits: torch.Tensor, p: Optional[torch.Tensor] = None, k: Optional[torch.Tensor] = None
) -> torch.Tensor:
    name = "npu_top_k_top_p"
    if logits.dim() != 2:
        raise RuntimeError(f"{name}: logits must be 2-D, got {logits.dim()}-D")
    if p is None and k is None:
        raise RuntimeError(f"{name}: p and k cannot both be None")
    rows, vocab = logits.shape
    if p is not None and tuple(p.shape) != (rows,):
        raise RuntimeError(f"{name}: p must be ({rows},), got {tuple(p.shape)}")
    if k is not None:
        if tuple(k.shape) != (rows,) or k.dtype != torch.int32:
            raise RuntimeError(f"{name}: k must be int32 ({rows},), got {k.dtype} {tuple(k.shape)}")
        if rows and (int(k.min()) < 1 or int(k.max()) > min(vocab, 1024)):
            raise RuntimeError(f"{name}: k must lie in [1, min(1024, {vocab})]")

    def compute(logits):
        values, order = torch.sort(upcast(logits).float(), dim=-1, stable=True)
        dropped = torch.zeros_like(values, dtype=torch.bool)
        if k is not None:
            kth = values.gather(1, (vocab - k.long()).unsqueeze(1))
            dropped |= values < kth
        if p is not None:
            kept = values.masked_fill(dropped, float("-inf"))
            cumulative = torch.softmax(kept, dim=-1).cumsum(dim=-1)
            tail = cumulative <= (1 - upcast(p).float()).unsqueeze(1)
            tail[:, -1] = False
            dropped |= tail
        # The kept values are the logits themselves (no arithmetic), the rest -inf.
        mask = torch.zeros_like(dropped).scatter_(1, order, dropped)
        return logits.masked_fill(mask, float("-inf"))

    return without_derivative(name, compute, logits)
