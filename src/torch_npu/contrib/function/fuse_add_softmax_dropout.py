"""``torch_npu.contrib.function.fuse_add_softmax_dropout``: BERT's attention probabilities,
``dropout(softmax(attn_mask + attn_scores / sqrt(attn_head_size)))``, in one fused operator when
the NPU has one for the shape.

``fuse_add_softmax_dropout(training, dropout, attn_mask, attn_scores, attn_head_size, p=0.5,
dim=-1)`` takes 4-D (N, C, H, W) scores. When H is 128, 256, 384 or 512 and N * C is a multiple
of 32 it runs ``npu_dropout_with_add_softmax`` (dropping with probability ``p`` when
``training``, none otherwise); any other shape takes the unfused path: ``torch.add``,
``softmax`` and the ``dropout`` module given (which follows its own training flag and
probability, not ``p``). As in torch_npu, the softmax is always over the last dimension:
``dim`` is accepted and not read.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..._ops.dropout_with_add_softmax import npu_dropout_with_add_softmax

__all__ = ["fuse_add_softmax_dropout"]

# The heights the NPU's fused kernel takes, and the multiple N * C must be of.
_FUSED_HEIGHTS = (128, 256, 384, 512)
_FUSED_BATCH_MULTIPLE = 32


def _fused(attn_scores: torch.Tensor) -> bool:
    n, c, h, _ = attn_scores.size()
    return h in _FUSED_HEIGHTS and (n * c) % _FUSED_BATCH_MULTIPLE == 0


def fuse_add_softmax_dropout(
    training: bool,
    dropout: torch.nn.Module,
    attn_mask: torch.Tensor,
    attn_scores: torch.Tensor,
    attn_head_size: float,
    p: float = 0.5,
    dim: int = -1,
) -> torch.Tensor:
    alpha = 1 / math.sqrt(attn_head_size)
    if _fused(attn_scores):
        drop_p = p if training else 0.0
        return npu_dropout_with_add_softmax(attn_scores, attn_mask, alpha, drop_p, -1)[2]
    probs = F.softmax(torch.add(attn_mask, attn_scores, alpha=alpha), dim=-1)
    return dropout(probs)
