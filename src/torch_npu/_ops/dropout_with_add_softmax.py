"""``torch_npu.npu_dropout_with_add_softmax(input, x1, alpha, prob, dim) -> (mask, softmax_out,
dropout_out)``: ``y = x1 + alpha * input``, ``softmax_out = softmax(y, dim)``, and
``dropout_out = softmax_out * mask / (1 - prob)`` (BERT's fused attention probabilities).

``mask`` is a uint8 byte mask (1 = kept, probability ``1 - prob``) of ``ceil(numel / 128) * 128``
elements, flat, as the NPU's DropOutGenMaskV3 gives it. Only ``dropout_out`` is differentiable,
as in torch_npu. Its gradient for ``input`` is ``npu_dropout_with_add_softmax_backward``'s
(``alpha`` times the softmax backward of ``grad * mask / (1 - prob)``); for ``x1`` it is the
same without ``alpha`` (torch_npu's backward hands ``x1`` the incoming gradient unchanged, which
is not the derivative; BERT passes the attention mask there, which needs none).
"""

from __future__ import annotations

from typing import Tuple

import torch

from .. import _dropout_masks
from ._precision import store, upcast
from ._registry import operator


@operator
def npu_dropout_with_add_softmax(
    input: torch.Tensor, x1: torch.Tensor, alpha: float, prob: float, dim: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    prob = float(prob)
    if not 0.0 <= prob < 1.0:
        raise RuntimeError(f"npu_dropout_with_add_softmax: prob must lie in [0, 1), got {prob}")
    summed = upcast(x1) + upcast(input) * float(alpha)
    softmax = torch.softmax(summed, dim=int(dim))
    numel = softmax.numel()
    keep = _dropout_masks.keep_draws(_dropout_masks.aligned(numel), prob, softmax.device)
    mask = keep.to(torch.uint8)
    kept = keep[:numel].reshape(softmax.shape).to(torch.float32)
    dropped = softmax * (kept * _dropout_masks.keep_scale(prob))
    return mask, store(softmax.detach(), x1.dtype), store(dropped, input.dtype)
